#!/bin/sh
# check_optional_library.sh SOURCE_DIR CXX — the doc's optional-library pattern
# (docs/examples/pth/CMakeLists.txt) configured twice: with the library hidden (every
# search re-rooted into an empty folder, as on a machine without libpth-dev) the
# configure succeeds, says the backend is left out and adds no source; with the library
# (when this machine has it) register.cpp is added. Exit 1 with the log otherwise.
set -eu
src=$1; cxx=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S "$src/tests/docs/optional_library" -B "$work/without" -DCMAKE_CXX_COMPILER="$cxx" \
      -DDOC_PTH_DIR="$src/docs/examples/pth" -DCMAKE_FIND_ROOT_PATH="$work/empty-root" \
      -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY > "$work/without.log" 2>&1 || { cat "$work/without.log"; echo "FAIL: configure without the library failed"; exit 1; }
grep -q "backend pth left out" "$work/without.log" || { cat "$work/without.log"; echo "FAIL: no line saying pth was left out"; exit 1; }
if grep "coopbench_backends sources" "$work/without.log" | grep -q register.cpp; then
  cat "$work/without.log"; echo "FAIL: register.cpp added without the library"; exit 1
fi
echo "without the library: configured, pth left out"
if [ -e /usr/include/pth.h ]; then
  cmake -S "$src/tests/docs/optional_library" -B "$work/with" -DCMAKE_CXX_COMPILER="$cxx" \
        -DDOC_PTH_DIR="$src/docs/examples/pth" > "$work/with.log" 2>&1 || { cat "$work/with.log"; echo "FAIL: configure with the library failed"; exit 1; }
  grep "coopbench_backends sources" "$work/with.log" | grep -q register.cpp || { cat "$work/with.log"; echo "FAIL: register.cpp not added"; exit 1; }
  echo "with the library: register.cpp added"
fi
echo "PASS"
