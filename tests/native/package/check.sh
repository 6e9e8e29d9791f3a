#!/bin/sh
# check.sh BUILD_DIR SOURCE_DIR CXX [FLAGS...] — installs coop from BUILD_DIR into a temporary
# prefix, builds docs/examples/coop_example.cpp as a separate CMake project against it
# (find_package(coop), coop::coop) and runs it.
set -eu
build=$1; src=$2; cxx=$3; shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" || { cat "$work/install.log"; exit 1; }
flags=$(echo "$@" | tr ' ' ';')
cmake -S "$src/tests/native/package" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
      -DCMAKE_PREFIX_PATH="$work/prefix" -DCOOP_EXAMPLE_SOURCE="$src/docs/examples/coop_example.cpp" \
      -DCOOP_EXTRA_FLAGS="$flags" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" > "$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
"$work/build/coop_example"
echo "PASS: coop_example built against the installed coop package and ran"
