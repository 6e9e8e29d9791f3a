#!/bin/sh
# gtest_run.sh BINARY [ARGS...] — runs one GoogleTest binary for CTest (coopbench_add_test sets
# it as the binary's CROSSCOMPILING_EMULATOR, which gtest_discover_tests puts in front of both
# the listing and every test's command line).
#
# CTest's own rule counts a test as passed when its process exits 0. A binary that exits 0
# in the middle of a test (a stray exit(0), corruption that ends in exit(0)) would then pass
# with no result printed. GoogleTest's premature-exit file closes that gap: when
# TEST_PREMATURE_EXIT_FILE names a file, RUN_ALL_TESTS creates it on entry and removes it
# only when it returns (a death test's child leaves it alone). So here a test passes only
# when its process exited 0 AND GoogleTest finished: the exit status keeps catching
# crashes and sanitizer reports printed after the summary (which a pass regular
# expression on "[  PASSED  ]" would let through, since CTest then ignores the status).
dir=$(mktemp -d "${TMPDIR:-/tmp}/gtest_run.XXXXXX") || exit 1
TEST_PREMATURE_EXIT_FILE="$dir/premature_exit"
export TEST_PREMATURE_EXIT_FILE
"$@"
rc=$?
if [ -e "$TEST_PREMATURE_EXIT_FILE" ]; then
  echo "gtest_run.sh: $1 exited (status $rc) before GoogleTest printed its result: a failure" >&2
  rm -rf "$dir"
  if [ "$rc" -eq 0 ]; then rc=1; fi
  exit "$rc"
fi
rm -rf "$dir"
exit "$rc"
