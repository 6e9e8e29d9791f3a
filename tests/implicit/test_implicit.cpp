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
