// test_timer_park.cpp — a timer pushed while an idle processor is between reading its futex
// timeout and announcing its park must either see that processor parked (and notify it) or
// be seen by its re-check (worker.cpp idle loop, timers.cpp, park.hpp). Directed: the hook
// idle_before_park (config.hpp; this binary links coop_hooked) holds the idle processor Y
// after it computed its timeout — none, no sleeper yet — and before it parks; meanwhile on
// the other processor X the activity M spawns B and sleeps 50 ms (its timer is pushed while Y
// is held: push_timer's notify sees no parked processor and does nothing), and B keeps X
// busy without yielding (so X polls no timers) until M woke. Y is then let go: it parks.
// Its re-check must find the earlier deadline, or Y sleeps with no timeout and M oversleeps
// until B gives up (kLimit): the test fails. Found by review (the probe timer_strand.cpp,
// 1-10 of 500 rounds overslept, some by 2 s after a 20 us sleep); no reordering is needed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<bool> g_armed{false}, g_in_window{false}, g_b_running{false};

// The hook, on an idle processor with its timeout computed: the first time only, hold it
// until B runs on the other processor (M's timer is pushed by then), at most 5 s.
void hold_the_parker() {
    if (!g_armed.exchange(false)) return;
    g_in_window.store(true);
    const auto end = Clock::now() + std::chrono::seconds(5);
    while (!g_b_running.load() && Clock::now() < end) std::this_thread::yield();
}

class TimerPark : public ::testing::TestWithParam<coop::Scheduling> {};

TEST_P(TimerPark, ATimerPushedBeforeTheParkShortensItsTimeout) {
    constexpr auto kSleep = std::chrono::milliseconds(50);
    constexpr auto kLimit = std::chrono::seconds(2);  // 40 sleeps: overslept, not slow
    coop_test::Watchdog dog("TimerPark.ATimerPushedBeforeTheParkShortensItsTimeout", 60);
    g_armed = true;
    g_in_window = false;
    g_b_running = false;
    bool reached = false, overslept = false;
    // Set before the runtime starts, cleared after its workers joined (the workers read it).
    coop::test_hooks::idle_before_park = &hold_the_parker;
    {
        coop::Options o;
        o.processors = 2;
        o.scheduling = GetParam();
        coop::Runtime rt(o);
        rt.run([&] {
            // X: wait until the other processor Y is held in the window.
            const auto end = Clock::now() + std::chrono::seconds(5);
            while (!g_in_window.load() && Clock::now() < end) __builtin_ia32_pause();
            reached = g_in_window.load();
            std::atomic<bool> woke{false};
            std::atomic<Clock::time_point> slept_at{Clock::time_point{}};
            coop::Thread b = coop::spawn([&] {
                // Runs on X once M sleeps (Y is held and cannot take it): M's timer is pushed.
                g_b_running.store(true);
                while (!woke.load()) {  // no yield: X polls no timers while B runs
                    const auto at = slept_at.load();
                    if (at != Clock::time_point{} && Clock::now() - at > kLimit) {
                        overslept = true;
                        break;
                    }
                    __builtin_ia32_pause();
                }
            });
            slept_at.store(Clock::now());
            coop::sleep_for(kSleep);
            woke.store(true);
            b.join();
        });
    }
    coop::test_hooks::idle_before_park = nullptr;
    EXPECT_TRUE(reached) << "no idle processor reached the window";
    EXPECT_FALSE(overslept) << "the sleeper was still asleep " << kLimit.count()
                            << " s after sleep_for(50 ms): the parked processor slept with the timeout it read "
                               "before the timer was pushed";
}

INSTANTIATE_TEST_SUITE_P(Policies, TimerPark,
                         ::testing::Values(coop::Scheduling::global, coop::Scheduling::work_stealing,
                                           coop::Scheduling::parasail),
                         [](const auto& info) {
                             switch (info.param) {
                                 case coop::Scheduling::work_stealing: return "work_stealing";
                                 case coop::Scheduling::parasail: return "parasail";
                                 default: return "global";
                             }
                         });

}  // namespace
