#!/bin/sh
# alone.sh SOURCE_DIR CXX — coop built alone: the repository configured with
# COOPBENCH_BUILD_BENCHMARKS=OFF and COOPBENCH_BUILD_TESTS=OFF while the harness's packages
# (Google Benchmark, CLI11, nlohmann-json, GoogleTest) cannot be found, so that configuring
# fails if anything outside coop still asks for them. Then coop and its example are built and
# the example run; then that build is installed and the example built against the package as
# another CMake project (package/check.sh).
set -eu
src=$1; cxx=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
launcher=
command -v ccache >/dev/null 2>&1 && launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release $launcher \
      -DCOOPBENCH_BUILD_BENCHMARKS=OFF -DCOOPBENCH_BUILD_TESTS=OFF \
      -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON \
      -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
      > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; echo "FAIL: coop alone does not configure"; exit 1; }
if grep -q "coopbench_driver\|coopbench_runner\|benchmark::benchmark" "$work/build/build.ninja"; then
  echo "FAIL: coop alone configured a harness target"; exit 1
fi
cmake --build "$work/build" > "$work/build.log" 2>&1 || { cat "$work/build.log"; echo "FAIL: coop alone does not build"; exit 1; }
"$work/build/coop/coop_example"
sh "$src/tests/native/package/check.sh" "$work/build" "$src" "$cxx"
echo "PASS: coop configured, built and installed alone, without the harness's packages"
