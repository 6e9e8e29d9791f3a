// test_yield_wake.cpp — a yielder is not left on a busy processor's queue while another
// processor sleeps (native-ws, native-parasail; coop/src/scheduler.cpp,
// yielded_local). Found by the Spin model models/local_park.pml (-DSTRICT_YIELD).
//
// The interleaving, forced with the hook yield_after_pick (config.hpp; this binary links
// coop_hooked): on processor X, activity A spawns B (B goes to X's queue) and yields; its
// yield() picks B, and before A is queued again the hook waits until the other processor Y
// has parked (X's queues are empty at that moment, so Y finds nothing). Then A goes onto X's
// queue and B runs — and B spins, without yielding, until A has run. Only Y can run A now.
// Without a notify in yielded_local, Y sleeps for good and the watchdog fails the test.
//
// Y may instead steal B before A yields (the scenario is then not reached: A's yield finds
// nothing, and the round passes trivially); the test repeats until the scenario was reached
// kReached times and fails if it never is.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "coop/config.hpp"
#include "coop/coop.hpp"
#include "tests/support/watchdog.hpp"

namespace {

coop::Runtime* g_rt = nullptr;
std::atomic<int> g_reached{0};
std::atomic<int> g_stranded{0};
// kStranded — how long B waits for A: a wake-up takes microseconds; A queued this long beside
// a parked processor was left there.
constexpr auto kStranded = std::chrono::seconds((COOP_ASAN || COOP_TSAN) ? 15 : 5);

std::uint64_t parks() {
    const auto s = g_rt->stats();
    const auto it = s.find("parks");
    return it == s.end() ? 0 : it->second;
}

// The hook (on X, inside A's yield, B picked, A not yet queued): wait until Y parks.
void wait_for_the_other_to_park() {
    coop::test_hooks::yield_after_pick = nullptr;
    const std::uint64_t before = parks();
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (parks() == before && std::chrono::steady_clock::now() < end) std::this_thread::yield();
    // Y counted a park; give it time to get from the count to futex_wait.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    g_reached.fetch_add(1);
}

class YieldWake : public ::testing::TestWithParam<coop::Scheduling> {};

TEST_P(YieldWake, YielderIsRunByAnIdleProcessor) {
    constexpr int kReached = 3, kMaxRounds = 200;
    coopbench::test::Watchdog dog("YieldWake.YielderIsRunByAnIdleProcessor", 60);
    g_reached = 0;
    g_stranded = 0;
    int rounds = 0;
    for (; rounds < kMaxRounds && g_reached.load() < kReached; ++rounds) {
        coop::Options o;
        o.processors = 2;
        o.scheduling = GetParam();
        coop::Runtime rt(o);
        g_rt = &rt;
        rt.run([] {
            coop::Thread a = coop::spawn([] {
                std::atomic<bool> a_ran_again{false};
                coop::Thread b = coop::spawn([&] {
                    // "for good": no yield until A ran, or kStranded (A is then stranded: the
                    // test fails in seconds rather than by the watchdog).
                    const auto since = std::chrono::steady_clock::now();
                    while (!a_ran_again.load()) {
                        if (std::chrono::steady_clock::now() - since > kStranded) {
                            g_stranded.fetch_add(1);
                            break;
                        }
                        __builtin_ia32_pause();
                    }
                });
                coop::test_hooks::yield_after_pick = &wait_for_the_other_to_park;
                coop::yield();
                coop::test_hooks::yield_after_pick = nullptr;  // not reached by the yield
                a_ran_again.store(true);
                b.join();
            });
            a.join();
        });
        g_rt = nullptr;
    }
    EXPECT_EQ(g_stranded.load(), 0) << "the yielder stayed queued " << kStranded.count()
                                    << " s while the other processor slept";
    EXPECT_GE(g_reached.load(), kReached) << "the interleaving was reached only " << g_reached.load() << " times in "
                                          << rounds << " rounds";
}

INSTANTIATE_TEST_SUITE_P(Policies, YieldWake,
                         ::testing::Values(coop::Scheduling::work_stealing, coop::Scheduling::parasail),
                         [](const auto& info) {
                             return info.param == coop::Scheduling::work_stealing ? "work_stealing" : "parasail";
                         });

}  // namespace
