#!/bin/sh
# link_example.sh CXX LIBCOOP SOURCE_DIR INCLUDE_ROOT [FLAGS...] — builds docs/examples/coop_example.cpp
# with nothing but libcoop.a and coop's own dependencies (Boost.Context, hwloc, pthreads), no
# harness library, and runs it: coop is a library of its own.
set -eu
cxx=$1; lib=$2; src=$3; inc=$4; shift 4
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$cxx" -std=c++20 "$@" -I"$inc" "$src/docs/examples/coop_example.cpp" "$lib" \
    -lboost_context -lhwloc -pthread -o "$out/coop_example"
"$out/coop_example"
echo "PASS: coop_example linked against libcoop alone and ran"
