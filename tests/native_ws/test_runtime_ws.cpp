// test_runtime_ws.cpp — the processor-local policies wired into coop: every test
// runs on each coop::Scheduling (global = backend native, work_stealing = native-ws,
// parasail = native-parasail), all three in ONE binary and one process, one after the other
// (the seam: scheduler.hpp).
//
// - NoActivityLostOrRunTwice: a spawn tree of activities that yield, block on semaphores
//   and migrate by steals; each has a "running" flag (exchanged: two processors running one
//   activity at once trip it) and a run counter (every step counted exactly once).
// - NoProcessorLeftParkedWhileWorkIsQueued: rounds of P spinners that wait (without
//   yielding) until all P run at once: each round needs every processor awake and stealing
//   from the one that spawned them; a processor left parked with work queued hangs the
//   round (the watchdog turns that into a failure). Between rounds everyone parks.
// - YielderNotStarvedByPingPong: on one processor, a pair waking each other through
//   semaphores (each wake-up lands in runnext / the LIFO end) and one activity that yields
//   a number of times; it must finish (the runnext streak bound, kMaxRunnextStreak).
// - RunnextDoesNotStallWork (directed): an activity spawned into the spawner's runnext
//   while the spawner then runs without ever yielding: another processor must take it
//   (Go's grace-then-steal of runnext; tokio #4941's stall otherwise).
// - RingStolenFromALongActivity (directed): queued activities behind an activity that
//   runs long after fast picks are stolen (no steal rule may strand them).
// - CountersAreReported: Runtime::stats() names the counters the harness records.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/cpus.hpp"
#include "tests/native_ws/ws_test_util.hpp"

namespace {

using coop::Scheduling;

unsigned processors() { return std::max(2u, std::thread::hardware_concurrency()); }

std::string name_of(Scheduling s) {
    switch (s) {
        case Scheduling::global: return "global";
        case Scheduling::work_stealing: return "work_stealing";
        case Scheduling::parasail: return "parasail";
    }
    return "?";
}

class RuntimeWs : public ::testing::TestWithParam<Scheduling> {
  protected:
    coop::Options options(unsigned p) const {
        coop::Options o;
        o.processors = p;
        o.scheduling = GetParam();
        return o;
    }
};

struct alignas(64) Tracked {
    std::atomic<bool> running{false};
    std::atomic<long> runs{0};
    // step — one stretch of running between two switches: nobody else may be running us.
    void step() {
        const bool was = running.exchange(true, std::memory_order_acq_rel);
        EXPECT_FALSE(was) << "an activity ran on two processors at once";
        runs.fetch_add(1, std::memory_order_relaxed);
        running.store(false, std::memory_order_release);
    }
};

TEST_P(RuntimeWs, NoActivityLostOrRunTwice) {
    const int kParents = wstest::kSanitized ? 8 : 32;
    const int kChildren = wstest::kSanitized ? 4 : 8;
    const int kSteps = wstest::kSanitized ? 20 : 400;
    const int total = kParents * (1 + kChildren);
    std::vector<Tracked> tracked(static_cast<std::size_t>(total));
    wstest::Watchdog dog("NoActivityLostOrRunTwice", 240);
    {
        coop::Runtime rt(options(processors()));
        rt.run([&] {
            std::vector<coop::Thread> parents;
            for (int i = 0; i < kParents; ++i) {
                parents.push_back(coop::spawn([&, i] {
                    Tracked& me = tracked[static_cast<std::size_t>(i * (1 + kChildren))];
                    // A semaphore ping-pong with the children (wake-ups into runnext), plus
                    // yields (ring tail): both kinds of queueing, and idle processors steal.
                    coop::Semaphore to_parent(0);
                    std::vector<std::unique_ptr<coop::Semaphore>> to_child;
                    std::vector<coop::Thread> children;
                    for (int c = 0; c < kChildren; ++c) {
                        to_child.push_back(std::make_unique<coop::Semaphore>(0));
                        coop::Semaphore* mine = to_child.back().get();
                        Tracked& t = tracked[static_cast<std::size_t>(i * (1 + kChildren) + 1 + c)];
                        children.push_back(coop::spawn([&, mine, c] {
                            for (int s = 0; s < kSteps; ++s) {
                                t.step();
                                if ((s + c) % 3 == 0) coop::yield();
                                mine->acquire();
                                t.step();
                                to_parent.release();
                            }
                        }));
                    }
                    for (int s = 0; s < kSteps; ++s) {
                        me.step();
                        for (auto& sem : to_child) sem->release();
                        for (int c = 0; c < kChildren; ++c) to_parent.acquire();
                        me.step();
                        coop::yield();
                    }
                    for (auto& ch : children) ch.join();
                }));
            }
            for (auto& p : parents) p.join();
        });
    }
    long sum = 0;
    for (int i = 0; i < total; ++i) {
        const long runs = tracked[static_cast<std::size_t>(i)].runs.load();
        EXPECT_EQ(runs, 2L * kSteps) << "activity " << i << " ran " << runs << " steps";
        sum += runs;
    }
    EXPECT_EQ(sum, 2L * kSteps * total);
}

TEST_P(RuntimeWs, NoProcessorLeftParkedWhileWorkIsQueued) {
    const unsigned P = processors();
    const int kRounds = wstest::kSanitized ? 10 : 40;
    wstest::Watchdog dog("NoProcessorLeftParkedWhileWorkIsQueued (a processor stayed parked)", 60);
    coop::Runtime rt(options(P));
    rt.run([&] {
        for (int round = 0; round < kRounds; ++round) {
            // Busy without yielding for 2 ms first: the other processors run out of spins
            // and park with no timer pending, so only the spawns' wake-ups can get them up.
            const auto t0 = std::chrono::steady_clock::now();
            while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2)) {
            }
            std::atomic<unsigned> started{0};
            std::vector<coop::Thread> spinners;
            for (unsigned i = 0; i < P; ++i)
                spinners.push_back(coop::spawn([&] {
                    started.fetch_add(1, std::memory_order_acq_rel);
                    // No yield: this processor stays busy until every processor runs one.
                    while (started.load(std::memory_order_acquire) < P) std::this_thread::yield();
                }));
            for (auto& s : spinners) s.join();
            // Long enough for the idle processors to park (kIdleSpinNs, 30 us of spinning).
            coop::sleep_for(std::chrono::milliseconds(1));
        }
    });
    SUCCEED();
}

TEST_P(RuntimeWs, YielderNotStarvedByPingPong) {
    const int kYields = wstest::kSanitized ? 200 : 2000;
    wstest::Watchdog dog("YielderNotStarvedByPingPong (a yielding activity starved)", 60);
    coop::Runtime rt(options(1));
    std::atomic<long> pings{0};
    rt.run([&] {
        std::atomic<bool> stop{false};
        coop::Semaphore a(0), b(0);
        coop::Thread pa = coop::spawn([&] {
            for (;;) {
                a.acquire();
                if (stop.load(std::memory_order_acquire)) {
                    b.release();
                    return;
                }
                pings.fetch_add(1, std::memory_order_relaxed);
                b.release();
            }
        });
        coop::Thread pb = coop::spawn([&] {
            a.release();
            for (;;) {
                b.acquire();
                if (stop.load(std::memory_order_acquire)) return;
                a.release();
            }
        });
        coop::Thread y = coop::spawn([&] {
            for (int i = 0; i < kYields; ++i) coop::yield();
            stop.store(true, std::memory_order_release);
        });
        y.join();
        a.release();  // whichever side waits sees stop
        pa.join();
        pb.join();
    });
    EXPECT_GT(pings.load(), 0) << "the pair never ran";
}

TEST_P(RuntimeWs, RunnextDoesNotStallWork) {
    wstest::Watchdog dog("RunnextDoesNotStallWork (a spawned activity was never run)", 30);
    coop::Runtime rt(options(2));
    std::atomic<bool> ran{false};
    rt.run([&] {
        // Spawned here: the local policies put it into this processor's runnext (native-ws)
        // or the LIFO end of its deque (native-parasail); native: the global queue.
        coop::Thread x = coop::spawn([&] { ran.store(true, std::memory_order_release); });
        // Never yields until x ran: only the other processor can run x.
        while (!ran.load(std::memory_order_acquire)) std::this_thread::yield();
        x.join();
    });
    const auto stats = rt.stats();
    if (GetParam() != Scheduling::global) {
        EXPECT_GE(stats.at("steals"), 1u) << "x was not stolen";
    }
}

// RingStolenFromALongActivity (directed): a processor that has just picked fast (a burst of
// yields) queues three activities and then runs without ever picking again: the other
// processor must take them. Go's rule steals them at once; any stealing rule that declines
// work a victim will "soon" run itself (e.g. one estimating the queued work from the
// victim's recent time per pick, docs/native-runtime.md) must still take it once the victim
// stops picking: such a rule whose estimate ignored the time since the victim's last pick
// hung here (the watchdog). Every algorithm runs it.
TEST_P(RuntimeWs, RingStolenFromALongActivity) {
    wstest::Watchdog dog("RingStolenFromALongActivity (queued activities never stolen)", 30);
    coop::Runtime rt(options(2));
    std::atomic<int> ran{0};
    rt.run([&] {
        {  // fast picks: four activities yielding round robin on this processor's ring
            std::vector<coop::Thread> ys;
            for (int i = 0; i < 4; ++i)
                ys.push_back(coop::spawn([] {
                    for (int k = 0; k < 2000; ++k) coop::yield();
                }));
            for (auto& y : ys) y.join();
        }
        std::vector<coop::Thread> xs;
        for (int i = 0; i < 3; ++i) xs.push_back(coop::spawn([&] { ran.fetch_add(1, std::memory_order_acq_rel); }));
        // Never picks again until all three ran: only the other processor can run them.
        while (ran.load(std::memory_order_acquire) < 3) std::this_thread::yield();
        for (auto& x : xs) x.join();
    });
    if (GetParam() != Scheduling::global) {
        EXPECT_GE(rt.stats().at("steals"), 1u) << "nothing was stolen";
    }
}

TEST_P(RuntimeWs, CountersAreReported) {
    coop::Runtime rt(options(2));
    rt.run([] {
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 100; ++i) ts.push_back(coop::spawn([] { coop::yield(); }));
        for (auto& t : ts) t.join();
    });
    const auto s = rt.stats();
    EXPECT_TRUE(s.count("parks") && s.count("wakeups"));
    if (GetParam() != Scheduling::global) {
        for (const char* k : {"steals", "failed_steals", "runnext_hits", "local_picks", "global_picks"})
            EXPECT_TRUE(s.count(k)) << k;
        std::uint64_t picks = s.at("local_picks") + s.at("runnext_hits") + s.at("global_picks") + s.at("steal_batches");
        EXPECT_GE(picks, 101u) << "fewer picks than activities run";
    }
}

// A pinned runtime hands its processors' cache groups to the policy (api.cpp,
// cpus.hpp cache_groups): one group per CPU chosen, and the runtime runs as before.
TEST_P(RuntimeWs, PinnedRuntimeWithCacheGroupsRuns) {
    const unsigned n = processors();
    const auto cpus = coop::internal::choose_cpus(n);
    const auto groups = coop::internal::cache_groups(cpus);
    ASSERT_EQ(groups.size(), cpus.size());
    for (unsigned g : groups) EXPECT_LT(g, std::max<std::size_t>(1, cpus.size()));
    wstest::Watchdog dog("PinnedRuntimeWithCacheGroupsRuns", 120);
    coop::Options o = options(n);
    o.pin = true;
    coop::Runtime rt(o);
    std::atomic<int> ran{0};
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 1000; ++i) ts.push_back(coop::spawn([&] {
            coop::yield();
            ran.fetch_add(1, std::memory_order_relaxed);
        }));
        for (auto& t : ts) t.join();
    });
    EXPECT_EQ(ran.load(), 1000);
}

INSTANTIATE_TEST_SUITE_P(Policies, RuntimeWs,
                         ::testing::Values(Scheduling::global, Scheduling::work_stealing, Scheduling::parasail),
                         [](const auto& info) { return name_of(info.param); });

}  // namespace
