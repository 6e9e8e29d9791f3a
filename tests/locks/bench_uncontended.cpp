// bench_uncontended — Google Benchmark: the uncontended cost of one acquire+release of
// every lock in locks/ (one thread, so no contention), and of one owner access through
// owner-guard / owner-guard-asym with no non-owner, beside a pthread mutex lock+unlock.
// A benchmark, not a test (it checks no time). Run:
//   build/<dir>/tests/locks/bench_uncontended --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <pthread.h>

#include "locks/all.hpp"
#include "locks/owner_guard.hpp"

namespace {

template <class L>
void BM_AcquireRelease(benchmark::State& state) {
    L lock(locks::LockOptions{});
    const auto patience = state.range(0) ? locks::Patience::micros(512) : locks::Patience::infinite();
    long n = 0;
    for (auto _ : state) {
        auto t = lock.try_lock_for(patience);
        benchmark::DoNotOptimize(t);
        lock.unlock(t);
        ++n;
    }
    state.SetItemsProcessed(n);
}

template <class G>
void BM_OwnerAccess(benchmark::State& state) {
    G g;
    long counter = 0;
    for (auto _ : state) {
        const bool locked = g.owner_lock();
        ++counter;
        benchmark::DoNotOptimize(counter);
        g.owner_unlock(locked);
    }
    state.counters["membarrier"] = g.using_membarrier();
}

void BM_PthreadMutexLockUnlock(benchmark::State& state) {
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    long counter = 0;
    for (auto _ : state) {
        pthread_mutex_lock(&m);
        ++counter;
        benchmark::DoNotOptimize(counter);
        pthread_mutex_unlock(&m);
    }
}

}  // namespace

// Arg 0: infinite patience; 1: patience 512 us (never runs out here).
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::TasBackoff)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::ScottClhNbLock)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::ScottClhNbOptLock)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::CalLock)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::CalOptLock)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::PthreadTimedlock)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_AcquireRelease, locks::PthreadMutex)->Arg(0);
BENCHMARK_TEMPLATE(BM_OwnerAccess, locks::OwnerGuard);
BENCHMARK_TEMPLATE(BM_OwnerAccess, locks::OwnerGuardAsym);
BENCHMARK(BM_PthreadMutexLockUnlock);

BENCHMARK_MAIN();
