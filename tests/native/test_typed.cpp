// test_typed.cpp — the harness's native backends run coop's typed entry points
// (coop::Algo<K>: no run-time branch on the algorithm): while activities spawned through
// NativeBackendOf<K> spawn, yield, hand values over an unbuffered channel (park and wake-up)
// and join, no untyped entry point (coop::yield, spawn's start, internal::suspend /
// make_ready, finish: each calls the hook test_hooks::untyped_entry) is reached. The same
// program through the untyped adapter (NativeBackend, scheduling option) reaches them, so
// the count can fail. The same for the monitor primitives: a program that contends the
// backend's Mutex (waiters park), waits on its CondVar and hands off through its Semaphore
// reaches no untyped entry through the typed backends; its control runs the same program with
// the untyped coop::Mutex / CondVar / Semaphore (and otherwise the typed API), so the count
// sees the primitives' parking. Linked to coop_hooked (COOP_TEST_HOOKS).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "workloads/all.hpp"

namespace {

std::atomic<std::uint64_t> g_untyped{0};

void count_untyped() { g_untyped.fetch_add(1, std::memory_order_relaxed); }

// exercise — on backend B with `processors` processors: pairs of activities, each pair a
// sender and a receiver over an unbuffered channel (every value a park or a hand-off), the
// sender yielding between sends; a spawn-all-then-join-all. Returns the untyped entries
// counted between the first spawn and the last join, and checks every value arrived.
template <class B>
std::uint64_t exercise(unsigned processors, const std::string& scheduling) {
    coopbench::RuntimeOptions o;
    o.processors = processors;
    o.extra["scheduling"] = scheduling;
    typename B::Runtime rt(o);
    std::uint64_t untyped = 0;
    long received = 0;
    rt.run([&] {
        constexpr int kPairs = 8;
        constexpr long kValues = 200;
        std::vector<std::unique_ptr<typename B::template Channel<long>>> chans;
        for (int i = 0; i < kPairs; ++i) chans.push_back(std::make_unique<typename B::template Channel<long>>(0));
        std::atomic<long> sum{0};
        g_untyped.store(0, std::memory_order_relaxed);
        coop::test_hooks::untyped_entry = &count_untyped;
        {
            std::vector<typename B::Thread> ts;
            for (int i = 0; i < kPairs; ++i) {
                auto* ch = chans[static_cast<std::size_t>(i)].get();
                ts.push_back(B::spawn([ch] {
                    for (long v = 1; v <= kValues; ++v) {
                        ch->send(v);
                        B::yield();
                    }
                    ch->close();
                }));
                ts.push_back(B::spawn([ch, &sum] {
                    while (auto v = ch->recv()) sum.fetch_add(*v, std::memory_order_relaxed);
                }));
            }
            for (auto& t : ts) t.join();
        }
        coop::test_hooks::untyped_entry = nullptr;
        untyped = g_untyped.load(std::memory_order_relaxed);
        received = sum.load(std::memory_order_relaxed);
        EXPECT_EQ(received, kPairs * kValues * (kValues + 1) / 2);
    });
    return untyped;
}

template <coop::Scheduling K>
void typed_reaches_no_untyped_entry(const std::string& scheduling) {
    coop_test::Watchdog dog("typed entry points", 120);
    for (unsigned p : {1u, 2u, 4u}) {
        EXPECT_EQ(exercise<coopbench::NativeBackendOf<K>>(p, scheduling), 0u)
            << scheduling << " P=" << p << ": the typed backend reached an untyped entry point";
        // The control: the same program through the untyped adapter counts its entries.
        EXPECT_GT(exercise<coopbench::NativeBackend>(p, scheduling), 0u) << scheduling << " P=" << p;
    }
}

std::atomic<std::uint64_t> g_mutex_parks{0};
std::atomic<std::uint64_t> g_condvar_parks{0};
std::atomic<std::uint64_t> g_semaphore_parks{0};
void count_mutex_park() { g_mutex_parks.fetch_add(1, std::memory_order_relaxed); }
void count_condvar_park() { g_condvar_parks.fetch_add(1, std::memory_order_relaxed); }
void count_semaphore_park() { g_semaphore_parks.fetch_add(1, std::memory_order_relaxed); }

struct SyncCounts {
    std::uint64_t untyped = 0;
    std::uint64_t mutex_parks = 0;
    std::uint64_t condvar_parks = 0;
    std::uint64_t semaphore_parks = 0;
};

// exercise_sync — on backend B (its Thread, spawn and yield) with the primitives M, CV, S:
// kWorkers activities increment a counter under M with a yield inside the critical section
// (so that the others find it held and park: at once with one processor, after their spin
// with more); kWaiters activities wait on CV until a notifier, which sees all of them
// arrived while it holds M (so each has parked: CondVar::park unlocks M only after its
// enqueue), sets the flag and notifies all; two activities ping-pong through two S (the
// acquirer of an empty one parks). Checks mutual exclusion (no increment lost) and that
// every activity finished; returns the untyped entries and the parks counted meanwhile.
template <class B, class M, class CV, class S>
SyncCounts exercise_sync(unsigned processors, const std::string& scheduling) {
    coopbench::RuntimeOptions o;
    o.processors = processors;
    o.extra["scheduling"] = scheduling;
    SyncCounts counts;
    // The hooks are set before the runtime starts and cleared after it stopped (its workers
    // joined): a finalizer may still read one (Mutex::park's mutex_park_done runs after the
    // enqueue, so after the waiter may have been woken and joined). The counts are read at
    // the end of the program, after every join; late hits only add to the counters.
    coop::test_hooks::mutex_park_done = &count_mutex_park;
    coop::test_hooks::condvar_park_before_enqueue = &count_condvar_park;
    coop::test_hooks::semaphore_park_done = &count_semaphore_park;
    coop::test_hooks::untyped_entry = &count_untyped;
    {
        typename B::Runtime rt(o);
        rt.run([&] {
            constexpr int kWorkers = 6;
            constexpr long kIters = 100;
            constexpr int kWaiters = 3;
            constexpr long kRounds = 100;
            M m;
            long counter = 0;  // guarded by m
            CV cv;
            M cm;
            int arrived = 0;    // guarded by cm
            bool go = false;    // guarded by cm
            int woken = 0;      // guarded by cm
            S ping(0);
            S pong(0);
            long pongs = 0;
            g_untyped.store(0, std::memory_order_relaxed);
            g_mutex_parks.store(0, std::memory_order_relaxed);
            g_condvar_parks.store(0, std::memory_order_relaxed);
            g_semaphore_parks.store(0, std::memory_order_relaxed);
            {
                std::vector<typename B::Thread> ts;
                for (int i = 0; i < kWorkers; ++i)
                    ts.push_back(B::spawn([&] {
                        for (long k = 0; k < kIters; ++k) {
                            m.lock();
                            const long seen = counter;
                            B::yield();  // inside the critical section: the others find m held
                            counter = seen + 1;
                            m.unlock();
                        }
                    }));
                for (int i = 0; i < kWaiters; ++i)
                    ts.push_back(B::spawn([&] {
                        cm.lock();
                        ++arrived;
                        cv.wait(cm, [&] { return go; });
                        ++woken;
                        cm.unlock();
                    }));
                ts.push_back(B::spawn([&] {
                    for (;;) {
                        cm.lock();
                        if (arrived == kWaiters) break;  // all of them parked (see above)
                        cm.unlock();
                        B::yield();
                    }
                    go = true;
                    cv.notify_all();
                    cm.unlock();
                }));
                ts.push_back(B::spawn([&] {
                    for (long r = 0; r < kRounds; ++r) {
                        ping.acquire();
                        pong.release();
                    }
                }));
                ts.push_back(B::spawn([&] {
                    for (long r = 0; r < kRounds; ++r) {
                        ping.release();
                        pong.acquire();
                        ++pongs;
                    }
                }));
                for (auto& t : ts) t.join();
            }
            counts.untyped = g_untyped.load(std::memory_order_relaxed);
            counts.mutex_parks = g_mutex_parks.load(std::memory_order_relaxed);
            counts.condvar_parks = g_condvar_parks.load(std::memory_order_relaxed);
            counts.semaphore_parks = g_semaphore_parks.load(std::memory_order_relaxed);
            EXPECT_EQ(counter, kWorkers * kIters) << "an increment under the mutex was lost";
            EXPECT_EQ(woken, kWaiters);
            EXPECT_EQ(pongs, kRounds);
        });
    }
    coop::test_hooks::untyped_entry = nullptr;
    coop::test_hooks::mutex_park_done = nullptr;
    coop::test_hooks::condvar_park_before_enqueue = nullptr;
    coop::test_hooks::semaphore_park_done = nullptr;
    return counts;
}

template <coop::Scheduling K>
void typed_sync_reaches_no_untyped_entry(const std::string& scheduling) {
    coop_test::Watchdog dog("typed monitor primitives", 120);
    using B = coopbench::NativeBackendOf<K>;
    for (unsigned p : {1u, 2u, 4u}) {
        const SyncCounts typed =
            exercise_sync<B, typename B::Mutex, typename B::CondVar, typename B::Semaphore>(p, scheduling);
        EXPECT_EQ(typed.untyped, 0u) << scheduling << " P=" << p
                                     << ": the typed backend's Mutex / CondVar / Semaphore reached an untyped entry";
        // The program parks: every CondVar waiter (see exercise_sync); with one processor
        // also the Mutex's waiters (no spin) and the Semaphore's acquirer of an empty one.
        EXPECT_EQ(typed.condvar_parks, 3u) << scheduling << " P=" << p;
        if (p == 1) {
            EXPECT_GT(typed.mutex_parks, 0u) << scheduling;
            EXPECT_GT(typed.semaphore_parks, 0u) << scheduling;
        }
        // The control: the same program with the untyped primitives counts their entries.
        const SyncCounts untyped = exercise_sync<B, coop::Mutex, coop::CondVar, coop::Semaphore>(p, scheduling);
        EXPECT_GT(untyped.untyped, 0u) << scheduling << " P=" << p;
    }
}

}  // namespace

TEST(TypedBackend, GlobalSyncReachesNoUntypedEntry) {
    typed_sync_reaches_no_untyped_entry<coop::Scheduling::global>("global");
}
TEST(TypedBackend, WorkStealingSyncReachesNoUntypedEntry) {
    typed_sync_reaches_no_untyped_entry<coop::Scheduling::work_stealing>("work_stealing");
}
TEST(TypedBackend, ParasailSyncReachesNoUntypedEntry) {
    typed_sync_reaches_no_untyped_entry<coop::Scheduling::parasail>("parasail");
}

TEST(TypedBackend, GlobalReachesNoUntypedEntry) { typed_reaches_no_untyped_entry<coop::Scheduling::global>("global"); }
TEST(TypedBackend, WorkStealingReachesNoUntypedEntry) {
    typed_reaches_no_untyped_entry<coop::Scheduling::work_stealing>("work_stealing");
}
TEST(TypedBackend, ParasailReachesNoUntypedEntry) {
    typed_reaches_no_untyped_entry<coop::Scheduling::parasail>("parasail");
}

// A typed backend refuses another algorithm's option (its entry points assume its own).
TEST(TypedBackend, RefusesAnotherScheduling) {
    coopbench::RuntimeOptions o;
    o.extra["scheduling"] = "parasail";
    EXPECT_THROW((void)coopbench::NativeBackendOf<coop::Scheduling::work_stealing>::options(o), std::invalid_argument);
    o.extra["scheduling"] = "work_stealing";
    EXPECT_EQ(coopbench::NativeBackendOf<coop::Scheduling::work_stealing>::options(o).scheduling,
              coop::Scheduling::work_stealing);
}

// The harness's runner on the typed backends: a workload point completes and checks itself.
template <class B>
void run_point_ok() {
    coopbench::Context ctx;
    ctx.params = {{"T", "4"}, {"K", "2000"}};
    ctx.options.processors = 2;
    const auto out = coopbench::run_point<B, coopbench::Switch>(ctx);
    EXPECT_TRUE(out.ok) << out.reason;
    coopbench::Context c2;
    c2.params = {{"N", "2000"}};
    c2.options.processors = 2;
    const auto out2 = coopbench::run_point<B, coopbench::Create>(c2);
    EXPECT_TRUE(out2.ok) << out2.reason;
}
TEST(TypedBackend, RunsWorkloads) {
    coop_test::Watchdog dog("typed workloads", 120);
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::global>>();
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::work_stealing>>();
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::parasail>>();
}
