// test_runtime.cpp — coop's scheduler: spawn/join, nesting, priorities, finalizers, quantum,
// uncooperative scopes, sleep_for, idle CPU use, runtime re-creation.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/src/processor.hpp"
#include "tests/native/support.hpp"

using coop_test::scaled;
using coop_test::Watchdog;

class RuntimeP : public ::testing::TestWithParam<unsigned> {};

// A million activities (scaled under sanitizers) spawned and joined; each runs exactly once.
TEST_P(RuntimeP, MillionSpawnedAndJoined) {
    Watchdog dog("MillionSpawnedAndJoined", 120);
    const long n = scaled(1000000, 50);
    std::unique_ptr<std::atomic<std::uint8_t>[]> ran(new std::atomic<std::uint8_t>[n]);
    for (long i = 0; i < n; ++i) ran[i].store(0, std::memory_order_relaxed);
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        ts.reserve(n);
        for (long i = 0; i < n; ++i) ts.push_back(coop::spawn([&ran, i] { ran[i].fetch_add(1, std::memory_order_relaxed); }));
        for (auto& t : ts) t.join();
        for (long i = 0; i < n; ++i) ASSERT_EQ(ran[i].load(std::memory_order_relaxed), 1) << "activity " << i;
    });
}

// Activities spawn activities (a tree), join them, and sum their results.
TEST_P(RuntimeP, NestedSpawns) {
    Watchdog dog("NestedSpawns");
    std::atomic<long> leaves{0};
    struct Tree {
        static long grow(int depth, std::atomic<long>& leaves) {
            if (depth == 0) {
                leaves.fetch_add(1, std::memory_order_relaxed);
                return 1;
            }
            long a = 0, b = 0;
            coop::Thread l = coop::spawn([&] { a = grow(depth - 1, leaves); });
            coop::Thread r = coop::spawn([&] { b = grow(depth - 1, leaves); });
            l.join();
            r.join();
            return a + b;
        }
    };
    const int depth = coop_test::kSanitized ? 9 : 12;  // blocked parents hold stacks: 2^depth mappings
    long total = 0;
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] { total = Tree::grow(depth, leaves); });
    EXPECT_EQ(total, 1L << depth);
    EXPECT_EQ(leaves.load(), 1L << depth);
}

// run() returns only when every spawned activity has finished, even unjoined ones whose
// handles were moved out of main.
TEST_P(RuntimeP, RunWaitsForEverything) {
    Watchdog dog("RunWaitsForEverything");
    std::atomic<int> done{0};
    std::vector<coop::Thread> outside;
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        for (int i = 0; i < 100; ++i)
            outside.push_back(coop::spawn([&] {
                for (int k = 0; k < 10; ++k) coop::yield();
                done.fetch_add(1);
            }));
    });
    EXPECT_EQ(done.load(), 100);
    outside.clear();  // joins from the OS thread: already finished
}

// Finalizers run exactly once per switch, on the resumed side (not by the suspended one).
namespace {
struct FinProbe {
    std::atomic<long> runs{0};
    std::atomic<long> wrong_side{0};
    coop::internal::Activity* expected = nullptr;
};
void probe_finalizer(coop::internal::Activity* previous, void* v) noexcept {
    auto* probe = static_cast<FinProbe*>(v);
    probe->runs.fetch_add(1);
    // On the resumed side the running activity is no longer `previous`.
    if (previous != probe->expected || coop::internal::this_processor()->current == previous)
        probe->wrong_side.fetch_add(1);
    coop::internal::make_ready(previous);  // what ENQUEUESWITCH would do
}
}  // namespace

TEST_P(RuntimeP, FinalizersRunOnceOnResumedSide) {
    Watchdog dog("FinalizersRunOnceOnResumedSide");
    const long rounds = scaled(10000);
    std::vector<FinProbe> probes(4);
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (auto& p : probes)
            ts.push_back(coop::spawn([&] {
                p.expected = coop::internal::current();
                for (long i = 0; i < rounds; ++i) coop::internal::suspend(&probe_finalizer, &p);
            }));
    });
    for (auto& p : probes) {
        EXPECT_EQ(p.runs.load(), rounds);
        EXPECT_EQ(p.wrong_side.load(), 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Processors, RuntimeP, ::testing::Values(1u, coop_test::many_processors()));

// On one processor, ready activities run highest priority first, FIFO within a priority.
TEST(Runtime, PrioritiesServedInOrder) {
    Watchdog dog("PrioritiesServedInOrder");
    std::vector<int> order;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        const coop::Priority ps[] = {coop::Priority::Low, coop::Priority::Realtime, coop::Priority::Default,
                                     coop::Priority::High, coop::Priority::Idle};
        for (int round = 0; round < 2; ++round)
            for (auto p : ps) ts.push_back(coop::spawn(p, [&order, p, round] { order.push_back(int(p) * 10 + round); }));
        for (auto& t : ts) t.join();  // main blocks: the others run in priority order
    });
    const std::vector<int> want = {40, 41, 30, 31, 20, 21, 10, 11, 0, 1};
    EXPECT_EQ(order, want);
}

// yield() prefers equal-or-higher priorities only: a Low activity does not run while a
// Default one yields, until it blocks.
TEST(Runtime, YieldDoesNotRunLowerPriorities) {
    Watchdog dog("YieldDoesNotRunLowerPriorities");
    std::atomic<bool> low_ran{false};
    bool seen_early = true;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        coop::Thread low = coop::spawn(coop::Priority::Low, [&] { low_ran = true; });
        for (int i = 0; i < 100; ++i) coop::yield();
        seen_early = low_ran.load();
        low.join();
    });
    EXPECT_FALSE(seen_early);
    EXPECT_TRUE(low_ran.load());
}

// check() switches when the quantum runs out; not inside an uncooperative scope.
TEST(Runtime, QuantumAndUncooperative) {
    Watchdog dog("QuantumAndUncooperative");
    std::atomic<long> other_runs{0};
    long seen_in_uncoop = -1, seen_after = -1;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        std::atomic<bool> stop{false};
        coop::Thread other = coop::spawn([&] {
            while (!stop.load()) {
                other_runs.fetch_add(1);
                coop::yield();
            }
        });
        coop::yield();  // let `other` start
        const long before = other_runs.load();
        {
            coop::uncooperative scope;
            for (int i = 0; i < 5 * coop::kDefaultQuantum; ++i) coop::check();
            coop::yield();  // no-op here
            seen_in_uncoop = other_runs.load() - before;
        }
        // Leaving the scope with an exhausted quantum switched once.
        const long mid = other_runs.load();
        for (int i = 0; i < 3 * coop::kDefaultQuantum + 3; ++i) coop::check();
        seen_after = other_runs.load() - mid;
        stop = true;
        other.join();
    });
    EXPECT_EQ(seen_in_uncoop, 0);
    EXPECT_GE(seen_after, 3);
}

// sleep_for suspends the activity, not the processor: on one processor, another activity
// keeps running while one sleeps; the sleeper wakes no earlier than its deadline.
TEST(Runtime, SleepForDoesNotBlockTheProcessor) {
    Watchdog dog("SleepForDoesNotBlockTheProcessor");
    std::atomic<bool> woke{false};
    std::atomic<long> spins_while_asleep{0};
    std::int64_t slept_ns = 0;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        coop::Thread sleeper = coop::spawn([&] {
            const auto t0 = coop::internal::now_ns();
            coop::sleep_for(std::chrono::milliseconds(20));
            slept_ns = coop::internal::now_ns() - t0;
            woke = true;
        });
        coop::Thread busy = coop::spawn([&] {
            while (!woke.load()) {
                spins_while_asleep.fetch_add(1);
                coop::yield();
            }
        });
        sleeper.join();
        busy.join();
        // Many sleepers at once, all woken (also by the idle loop's timed park).
        std::vector<coop::Thread> ts;
        std::atomic<int> n{0};
        for (int i = 0; i < 50; ++i)
            ts.push_back(coop::spawn([&, i] {
                coop::sleep_for(std::chrono::milliseconds(1 + i % 5));
                n.fetch_add(1);
            }));
        for (auto& t : ts) t.join();
        EXPECT_EQ(n.load(), 50);
    });
    EXPECT_TRUE(woke.load());
    EXPECT_GE(slept_ns, 20'000'000);
    EXPECT_GT(spins_while_asleep.load(), 0);
}

// An idle runtime parks its workers: ~no CPU time over a second.
TEST(Runtime, IdleRuntimeUsesNoCpu) {
    Watchdog dog("IdleRuntimeUsesNoCpu");
    coop::Runtime rt({.processors = coop_test::many_processors()});
    rt.run([] {
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 100; ++i) ts.push_back(coop::spawn([] { coop::yield(); }));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the spins end
    auto cpu = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;  // ms
    };
    const double c0 = cpu();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double used_ms = cpu() - c0;
    EXPECT_LT(used_ms, 20.0) << "an idle runtime burned " << used_ms << " ms of CPU in 1 s";
    // Still alive after the idle second.
    bool ran = false;
    rt.run([&] { ran = true; });
    EXPECT_TRUE(ran);
}

// Runtimes one after another in one process, with different processor counts; a second
// concurrent runtime is refused.
TEST(Runtime, RecreatedManyTimes) {
    Watchdog dog("RecreatedManyTimes");
    for (int i = 0; i < 20; ++i) {
        coop::Runtime rt({.processors = 1 + unsigned(i) % coop_test::many_processors(),
                          .guard = (i % 2) == 0});
        if (i == 0) {
            EXPECT_THROW(coop::Runtime{}, std::logic_error);
        }
        std::atomic<int> n{0};
        rt.run([&] {
            std::vector<coop::Thread> ts;
            for (int k = 0; k < 100; ++k) ts.push_back(coop::spawn([&] { n.fetch_add(1); coop::yield(); }));
        });
        EXPECT_EQ(n.load(), 100);
    }
    EXPECT_THROW(coop::spawn([] {}), std::runtime_error);  // no runtime now
}

// Outside a runtime the API degrades to OS behaviour instead of crashing.
TEST(Runtime, OutsideAnActivity) {
    EXPECT_FALSE(coop::in_activity());
    coop::yield();
    coop::check();
    coop::sleep_for(std::chrono::milliseconds(1));
    coop::Mutex m;
    m.lock();
    EXPECT_FALSE(m.try_lock());
    m.unlock();
    coop::Semaphore s(1);
    s.acquire();
    EXPECT_FALSE(s.try_acquire());
    s.release();
}
