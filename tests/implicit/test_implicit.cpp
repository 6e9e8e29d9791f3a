// test_implicit.cpp — implicit cooperative multitasking (plugin/, Negele et al. 2017
// Sect. 3.1): the same coop programs compiled by clang++ with the CoopQuantum plugin
// (*_implicit) and without it (*_plain), see scenarios.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/support/child.hpp"
#include "tests/support/watchdog.hpp"

extern "C" long coop_scenario_busy_wait_implicit();
extern "C" long coop_scenario_busy_wait_plain();
extern "C" long coop_scenario_switches_plain_loop_implicit();
extern "C" long coop_scenario_switches_plain_loop_plain();
extern "C" long coop_scenario_switches_uncooperative_scope_implicit();
extern "C" long coop_scenario_switches_uncooperative_function_implicit();
extern "C" long coop_safety_errno(unsigned processors, int activities, long n);
extern "C" long coop_safety_thread_local(unsigned processors, int activities, long n);
extern "C" long coop_safety_os_mutex();
extern "C" long coop_safety_os_mutex_switches();

using coopbench::test::finishes_in_child;  // the shared fork runner

// On one processor, an activity busy-waiting for a flag that another activity sets: the
// plugin's loop check switches away and the setter runs.
TEST(Implicit, BusyWaitTerminatesWithThePlugin) {
    coopbench::test::Watchdog dog("BusyWaitTerminatesWithThePlugin", 60);
    EXPECT_GE(coop_scenario_busy_wait_implicit(), 0);
}

// The same program without the plugin never ends (the spinner never yields on the only
// processor): shown in a child that is killed after a few seconds, not by hanging CI.
TEST(Implicit, BusyWaitHangsWithoutThePlugin) {
    EXPECT_FALSE(finishes_in_child(&coop_scenario_busy_wait_plain, 3))
        << "the uninstrumented busy-wait finished: the test no longer shows what the checks are for";
}

// Checked work switches to a yielding bystander; the same code without the plugin does not.
TEST(Implicit, CheckedLoopSwitches) {
    coopbench::test::Watchdog dog("CheckedLoopSwitches", 60);
    EXPECT_GE(coop_scenario_switches_plain_loop_implicit(), 10);
    EXPECT_EQ(coop_scenario_switches_plain_loop_plain(), 0);
}

// No switch inside a coop::uncooperative scope, although its loop is checked.
TEST(Implicit, NoSwitchInsideAnUncooperativeScope) {
    coopbench::test::Watchdog dog("NoSwitchInsideAnUncooperativeScope", 60);
    EXPECT_EQ(coop_scenario_switches_uncooperative_scope_implicit(), 0);
}

// No check in a function annotated coop_uncooperative.
TEST(Implicit, NoSwitchInsideAnUncooperativeFunction) {
    coopbench::test::Watchdog dog("NoSwitchInsideAnUncooperativeFunction", 60);
    EXPECT_EQ(coop_scenario_switches_uncooperative_function_implicit(), 0);
}

// errno across checks on two processors: `errno = 0; strtol(overflow); errno == ERANGE` in a
// checked loop. Seen failing before the plugin recomputed errno's address at every use:
// __errno_location() was hoisted out of the loop, a latch check switched, the activity
// resumed on the other worker and read the old thread's errno (ERANGEs missed).
TEST(ImplicitSafety, ErrnoIsTheRunningThreadsAcrossChecks) {
    coopbench::test::Watchdog dog("ErrnoIsTheRunningThreadsAcrossChecks", 240);
    constexpr int kActivities = 8;
    constexpr long kN = 200000;
    EXPECT_EQ(coop_safety_errno(2, kActivities, kN), kActivities * kN);
}

// A thread_local accumulator across checks on two processors: the sum of every worker's
// accumulator at thread exit is what the activities added. Seen failing before: the value
// was kept in a register across the loop (loaded before, stored after), so an activity
// that switched at a check overwrote what others on the same worker had added, or stored
// one worker's value into another's.
TEST(ImplicitSafety, ThreadLocalAccumulatorLosesNothingAcrossChecks) {
    coopbench::test::Watchdog dog("ThreadLocalAccumulatorLosesNothingAcrossChecks", 240);
    EXPECT_EQ(coop_safety_thread_local(2, 8, 4000000), 0);
    EXPECT_EQ(coop_safety_thread_local(1, 8, 4000000), 0);
}

// An OS mutex held across checked work on one processor, a second activity taking it: no
// check switches while the activity holds it (coop_os_lock_taken). Seen hanging before:
// the check switched to the second activity, which blocked the only worker in the mutex.
// Run in a child so that a hang is a failure, not a stuck test.
TEST(ImplicitSafety, NoSwitchWhileHoldingAnOsMutex) {
    EXPECT_TRUE(finishes_in_child(&coop_safety_os_mutex, 20))
        << "a check switched while the activity held a std::mutex: the worker blocked in it";
}

// The quantum that ran out while the mutex was held switches at its release.
TEST(ImplicitSafety, ExpiredQuantumSwitchesAtTheOsMutexRelease) {
    coopbench::test::Watchdog dog("ExpiredQuantumSwitchesAtTheOsMutexRelease", 60);
    EXPECT_GE(coop_safety_os_mutex_switches(), 1);
}
