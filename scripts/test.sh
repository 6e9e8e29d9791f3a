#!/usr/bin/env bash
# test.sh — build and run the tests: Release (every test), then AddressSanitizer+UBSan and
# ThreadSanitizer (the concurrency code and its tests: coop with its three scheduling
# policies, locks/, units/ and every backend's sync code; tests labelled no-asan / no-tsan
# are left out of those builds; COOPBENCH_TEST_SCOPE in CMakeLists.txt), plus clang: the
# runtime's tests (label `runtime`: tests/native, native_queue, native_ws, units) built at -O3
# and run, and every other unit of the project checked warning-free with clang's
# -fsyntax-only (scripts/syntax_check.py: the same front-end warnings, no code generation). Stops at the first failure. Prints each stage's build and
# test times (wall and CPU seconds) as it ends, and a table of them at the end.
#
#   scripts/test.sh            # everything (what CI runs)
#   scripts/test.sh release    # only the named configurations: release asan tsan clang
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/install-deps.sh

configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(release asan tsan clang)
for c in "${configs[@]}"; do
  case "$c" in
    release|asan|tsan|clang) ;;
    *) echo "test.sh: unknown configuration '$c' (release, asan, tsan, clang)" >&2; exit 2 ;;
  esac
done
jobs=$(nproc)
start=$(date +%s)
# The cache values run.sh uses too (-Werror, ccache when installed): one build/release for both.
. scripts/build-env.sh

# cpu <var> — sets <var> to the CPU seconds (user + sys) used so far by this script's
# finished children (cmake, ninja, the compilers, ctest and the tests), from the shell's
# `times` (run in this shell, not in a $(...) subshell, whose counters start at zero).
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
cpu() {
  times >"$times_file"
  printf -v "$1" '%s' "$(awk 'NR == 2 {
    t = 0
    for (i = 1; i <= 2; ++i) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] }
    printf "%d\n", t }' "$times_file")"
}
summary=()
# stage_times <config> <build wall> <build cpu> <test wall> <test cpu>
stage_times() {
  echo "=== $1: configure+build $2 s (cpu $3 s), tests $4 s (cpu $5 s)" >&2
  summary+=("$(printf '%-8s %10s %10s %10s %10s' "$1" "$2" "$3" "$4" "$5")")
}

for c in "${configs[@]}"; do
  t0=$(date +%s); cpu c0
  echo "=== $c: configure and build" >&2
  configure_preset "$c"
  if [ "$c" = clang ]; then
    # The runtime's tests under clang -O3: its optimiser differs from g++'s where coop is
    # most exposed (thread_locals of activities that migrate between OS threads,
    # tests/native/test_tls_migration.cpp; units' fib/ddb aborted only in the clang build).
    # Target runtime_tests (tests/CMakeLists.txt): the suites labelled `runtime`, of
    # tests/native, native_queue, native_ws (all three scheduling policies) and units.
    cmake --build "build/$c" -j "$jobs" --target runtime_tests
    # Every other unit warning-free under clang (-Werror), front end only: the rest of the
    # project runs in the Release stage, so clang's code for it would only be thrown away.
    echo "=== clang: every other unit, -fsyntax-only" >&2
    python3 scripts/syntax_check.py "build/$c" --built-by runtime_tests -j "$jobs"
  else
    cmake --build "build/$c" -j "$jobs"
  fi
  t1=$(date +%s); cpu c1
  if [ "$c" = clang ]; then
    echo "=== clang: runtime tests" >&2
    ctest --preset clang -j "$jobs" --timeout 600 -L '^runtime$'
  else
    echo "=== $c: tests" >&2
    ctest --preset "$c" -j "$jobs" --timeout 600
  fi
  t2=$(date +%s); cpu c2
  stage_times "$c" $((t1 - t0)) $((c1 - c0)) $((t2 - t1)) $((c2 - c1))
done
echo "=== stage times in seconds ($jobs jobs; cpu = user + sys of the stage's processes)" >&2
printf '%-8s %10s %10s %10s %10s\n' stage build build-cpu tests tests-cpu >&2
printf '%s\n' "${summary[@]}" >&2
echo "=== all tests passed in $(($(date +%s) - start)) s" >&2
