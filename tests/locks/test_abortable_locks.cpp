// Abortable locks (locks/): mutual exclusion under contention with aborts, no deadlock or
// livelock (watchdog), infinite patience always succeeds, timeouts happen when the lock is
// held, CAL's space is O(C) (no allocation whatever T), Scott's nodes are all reclaimed.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <thread>
#include <vector>

#include "locks/all.hpp"
#include "tests/locks/sizes.hpp"

using namespace std::chrono_literals;
using locks_test::scaled;
using locks_test::Watchdog;

// Allocation counting for the space test: only threads that set `t_count_allocs`.
namespace {
thread_local bool t_count_allocs = false;
std::atomic<long> g_allocs{0};
}  // namespace
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // operator new is malloc, delete is free
#endif
void* operator new(std::size_t n) {
    if (t_count_allocs) g_allocs.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

// Checker — what a critical section verifies: nobody else is inside (owner field), and a
// plain counter, whose lost updates would show a broken exclusion.
struct Checker {
    std::atomic<int> owner{0};
    std::atomic<long> violations{0};
    long counter = 0;  // protected by the lock under test (TSan reports a race otherwise)

    void critical_section(int me, int spins) {
        // relaxed: the check needs no ordering; the lock provides it.
        if (owner.exchange(me, std::memory_order_relaxed) != 0) violations.fetch_add(1);
        ++counter;
        for (int i = 0; i < spins; ++i) locks::cpu_relax();
        if (owner.exchange(0, std::memory_order_relaxed) != me) violations.fetch_add(1);
    }
};

template <class L>
class AbortableLockTest : public ::testing::Test {};

using Locks = ::testing::Types<locks::TasBackoff, locks::ScottClhNbLock, locks::ScottClhNbOptLock, locks::CalLock,
                               locks::CalOptLock, locks::PthreadTimedlock, locks::PthreadMutex>;
struct LockNames {
    template <class L>
    static std::string GetName(int) {
        std::string s(L::name);
        for (auto& c : s)
            if (c == '-') c = '_';
        return s;
    }
};
TYPED_TEST_SUITE(AbortableLockTest, Locks, LockNames);

// run_contended — `threads` threads each make `attempts` attempts with a random patience
// below `max_patience_ns` (infinite for threads where infinite(i)); returns successes.
template <class L, class Inf>
long run_contended(L& lock, Checker& chk, int threads, int attempts, std::int64_t max_patience_ns, Inf infinite,
                   std::vector<long>* per_thread = nullptr) {
    std::atomic<long> successes{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    std::vector<long> counts(static_cast<std::size_t>(threads), 0);
    for (int i = 0; i < threads; ++i)
        ts.emplace_back([&, i] {
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            long mine = 0;
            for (int a = 0; a < attempts; ++a) {
                const auto p = infinite(i) ? locks::Patience::infinite()
                                           : locks::Patience::nanos(locks::random_below(
                                                 static_cast<std::uint32_t>(max_patience_ns)));
                if (auto t = lock.try_lock_for(p)) {
                    chk.critical_section(i + 1, 20);
                    lock.unlock(t);
                    ++mine;
                } else if (infinite(i)) {
                    chk.violations.fetch_add(1000000);  // an infinite patience timed out
                }
            }
            counts[static_cast<std::size_t>(i)] = mine;
            successes.fetch_add(mine);
        });
    go.store(true, std::memory_order_release);
    for (auto& t : ts) t.join();
    if (per_thread) *per_thread = counts;
    return successes.load();
}

TYPED_TEST(AbortableLockTest, UncontendedLockUnlock) {
    TypeParam lock(locks::LockOptions{});
    for (int i = 0; i < 1000; ++i) {
        auto t = lock.try_lock_for(i % 2 ? locks::Patience::infinite() : locks::Patience::nanos(0));
        ASSERT_TRUE(static_cast<bool>(t)) << "attempt " << i;
        lock.unlock(t);
    }
}

TYPED_TEST(AbortableLockTest, TimesOutWhileHeldThenSucceeds) {
    if constexpr (std::is_same_v<TypeParam, locks::PthreadMutex>) {
        GTEST_SKIP() << "pthread-mutex ignores patience by design";
    } else {
        Watchdog wd(60s, "TimesOutWhileHeld");
        TypeParam lock(locks::LockOptions{});
        auto held = lock.try_lock_for(locks::Patience::infinite());
        ASSERT_TRUE(static_cast<bool>(held));
        std::thread other([&] {
            for (int i = 0; i < 50; ++i) {
                auto t = lock.try_lock_for(locks::Patience::micros(i % 5 * 20));
                EXPECT_FALSE(static_cast<bool>(t)) << "acquired a held lock";
                if (t) lock.unlock(t);
            }
        });
        other.join();
        lock.unlock(held);
        // The aborted attempts left the lock usable: another thread gets it.
        std::thread after([&] {
            auto t = lock.try_lock_for(locks::Patience::infinite());
            EXPECT_TRUE(static_cast<bool>(t));
            lock.unlock(t);
        });
        after.join();
        auto again = lock.try_lock_for(locks::Patience::infinite());
        EXPECT_TRUE(static_cast<bool>(again));
        lock.unlock(again);
    }
}

TYPED_TEST(AbortableLockTest, MutualExclusionWithAborts) {
    Watchdog wd(120s, "MutualExclusionWithAborts");
    const int threads = locks_test::threads_over_cores(2);
    const int attempts = scaled(10000, 16);
    for (unsigned c : {1u, 4u}) {  // CAL: a single node and the paper's 4
        TypeParam lock(locks::LockOptions{.nodes = c});
        Checker chk;
        const long ok = run_contended(lock, chk, threads, attempts, 20000, [](int) { return false; });
        EXPECT_EQ(chk.violations.load(), 0);
        EXPECT_EQ(chk.counter, ok) << "lost critical sections";
        EXPECT_GT(ok, 0);
        // The lock still works after all the aborts.
        auto t = lock.try_lock_for(locks::Patience::infinite());
        ASSERT_TRUE(static_cast<bool>(t));
        lock.unlock(t);
    }
}

TYPED_TEST(AbortableLockTest, InfinitePatienceAlwaysSucceedsAmongAborters) {
    Watchdog wd(120s, "InfinitePatienceAlwaysSucceeds");
    const int threads = locks_test::threads_over_cores(1);
    const int attempts = scaled(3000, 16);
    TypeParam lock(locks::LockOptions{});
    Checker chk;
    std::vector<long> per;
    // Even threads never give up; odd threads abort with patience below 5 us.
    const long ok = run_contended(lock, chk, threads, attempts, 5000, [](int i) { return i % 2 == 0; }, &per);
    EXPECT_EQ(chk.violations.load(), 0) << "a violation, or an infinite-patience attempt timed out";
    EXPECT_EQ(chk.counter, ok);
    for (int i = 0; i < threads; i += 2) EXPECT_EQ(per[static_cast<std::size_t>(i)], attempts) << "thread " << i;
}

TEST(CalSpace, NoAllocationWhateverTheThreadCount) {
    Watchdog wd(120s, "CalSpace");
    // The lock's size does not depend on T: C nodes, allocated once at construction.
    static_assert(sizeof(locks::CalLock) <= 192);
    for (unsigned c : {1u, 4u, 16u}) {
        locks::CalOptLock lock(locks::LockOptions{.nodes = c});
        EXPECT_EQ(lock.nodes(), c);
    }
    for (int threads : {2, locks_test::threads_over_cores(3)}) {
        locks::CalLock cal(locks::LockOptions{});
        locks::CalOptLock opt(locks::LockOptions{});
        const long before = g_allocs.load();
        std::vector<std::thread> ts;
        for (int i = 0; i < threads; ++i)
            ts.emplace_back([&] {
                t_count_allocs = true;
                for (int a = 0; a < scaled(500); ++a) {
                    const auto p = locks::Patience::nanos(locks::random_below(3000));
                    if (auto t = cal.try_lock_for(p)) cal.unlock(t);
                    if (auto t = opt.try_lock_for(p)) opt.unlock(t);
                }
                t_count_allocs = false;
            });
        for (auto& t : ts) t.join();
        EXPECT_EQ(g_allocs.load() - before, 0) << "CAL allocated with " << threads << " threads";
    }
}

TEST(ScottClhNb, AllNodesReclaimed) {
    Watchdog wd(120s, "ScottReclaim");
    const long before = locks::clh_nb::heap_nodes.load();
    std::thread owner([] {  // the lock lives and dies on a thread whose pool dies with it
        locks::ScottClhNbLock lock;
        Checker chk;
        const long ok = run_contended(lock, chk, locks_test::threads_over_cores(2), scaled(2000), 3000,
                                      [](int) { return false; });
        EXPECT_EQ(chk.counter, ok);
    });
    owner.join();
    EXPECT_EQ(locks::clh_nb::heap_nodes.load(), before) << "queue nodes leaked";
}

// ScottClhNb, TailHandedBackThenReleased — the interleaving of af64e0f's race, forced.
// Holder H takes the lock; successor S queues behind H's node, reads its prev while it
// waits, times out while still the tail, and its CAS hands the tail back to H's node. Only
// then does H release: its CAS takes the tail from its own node to null, so H owns the
// node again, pools it, and deletes it when its thread (and pool) ends. S's reads of the
// node must happen-before that delete, and the only edge between them is H's CAS reading
// S's CAS: H's must acquire. The two threads order themselves by a *relaxed* flag, which
// ThreadSanitizer does not count as synchronisation, so under TSan this test reports the
// race at once when unlock's CAS is `release` (seen failing: 3 of 3 runs), rather than in
// about 6 of 100 runs of the stress test. In every build it also checks the lock is free
// afterwards and no node leaked.
TEST(ScottClhNb, TailHandedBackThenReleased) {
    Watchdog wd(60s, "TailHandedBack");
    const long before = locks::clh_nb::heap_nodes.load();
    for (int opt = 0; opt < 2; ++opt) {
        auto scenario = [&]<class L>() {
            L lock;
            std::atomic<bool> held{false}, successor_done{false};
            std::atomic<bool> successor_timed_out{false};
            std::thread holder([&] {
                auto t = lock.try_lock_for(locks::Patience::infinite());
                ASSERT_TRUE(t);
                held.store(true, std::memory_order_release);  // release: S starts after H holds
                // relaxed on purpose: real-time order without a happens-before edge (above).
                while (!successor_done.load(std::memory_order_relaxed)) locks::cpu_relax();
                lock.unlock(t);
            });  // H's pool, holding its node, is destroyed as the thread exits
            while (!held.load(std::memory_order_acquire)) locks::cpu_relax();
            std::thread successor([&] {
                auto t = lock.try_lock_for(locks::Patience::micros(200));
                successor_timed_out.store(!t, std::memory_order_relaxed);
                successor_done.store(true, std::memory_order_relaxed);  // relaxed: see above
                if (t) lock.unlock(t);
            });
            successor.join();
            holder.join();
            EXPECT_TRUE(successor_timed_out.load()) << "the holder never released before this";
            auto t = lock.try_lock_for(locks::Patience::nanos(0));
            EXPECT_TRUE(t) << L::name << ": lock not free after the scenario";
            if (t) lock.unlock(t);
        };
        std::thread run([&] {  // the lock's last nodes land in this thread's pool and die with it
            if (opt) scenario.template operator()<locks::ScottClhNbOptLock>();
            else scenario.template operator()<locks::ScottClhNbLock>();
        });
        run.join();
    }
    EXPECT_EQ(locks::clh_nb::heap_nodes.load(), before) << "queue nodes leaked";
}

TEST(LockList, NamesAndDispatch) {
    auto names = locks::AllLocks::names();
    EXPECT_EQ(names.size(), 7u);
    int hits = 0;
    for (auto& n : names) EXPECT_TRUE(locks::AllLocks::with(n, [&]<class L>() { hits += L::name == n; }));
    EXPECT_EQ(hits, 7);
    EXPECT_FALSE(locks::AllLocks::with("no-such-lock", []<class L>() {}));
}

}  // namespace
