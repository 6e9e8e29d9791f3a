#!/usr/bin/env bash
# test.sh — build and run every test: Release, then AddressSanitizer+UBSan, then
# ThreadSanitizer (tests labelled no-asan / no-tsan are left out of those builds), plus a
# warning-free clang build that runs the runtime's tests (native, native_queue, units). Stops at the first failure.
#
#   scripts/test.sh            # everything (what CI runs)
#   scripts/test.sh release    # only the named configurations: release asan tsan clang
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/install-deps.sh

configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=(release asan tsan clang)
jobs=$(nproc)
start=$(date +%s)
# ccache (installed by install-deps.sh) makes a rebuild of unchanged files free; base_dir
# makes its entries independent of where the repository was cloned.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR="$root"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
for c in "${configs[@]}"; do
  t0=$(date +%s)
  echo "=== $c: configure and build" >&2
  cmake --preset "$c" -DCOOPBENCH_WERROR=ON "${launcher[@]}" >/dev/null
  cmake --build "build/$c" -j "$jobs"
  if [ "$c" = clang ]; then
    # The runtime's tests also under clang -O3: its optimiser differs from g++'s where coop
    # is most exposed (thread_locals of activities that migrate between OS threads,
    # tests/native/test_tls_migration.cpp; units' fib/ddb aborted only in the clang build).
    # The suites of tests/native, tests/native_queue and tests/units: ~10 s.
    echo "=== clang: built warning-free; runtime tests" >&2
    ctest --preset clang -j "$jobs" --timeout 600 -R \
      '(^|/)(MicroP|NativeBackend|ParkNotify|Runtime|RuntimeP|RuntimeFailures|RuntimeFailuresDeathTest|SyncP|SyncDirected|TlsMigration|QueueAba|QueueBasic|QueueNodeMemory|QueueStress|Futures|FuturesDeathTest|OwnerQueue|OwnerQueueDeathTest|OwnerQueueStress|Units|UnitsWorkloads)\.'
    echo "=== clang: done in $(($(date +%s) - t0)) s" >&2
    continue
  fi
  echo "=== $c: tests" >&2
  ctest --preset "$c" -j "$jobs" --timeout 600
  echo "=== $c: done in $(($(date +%s) - t0)) s" >&2
done
echo "=== all tests passed in $(($(date +%s) - start)) s" >&2
