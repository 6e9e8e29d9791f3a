// test_implicit.cpp — implicit cooperative multitasking (plugin/, Negele et al. 2017
// Sect. 3.1): the same coop programs compiled by clang++ with the CoopQuantum plugin
// (*_implicit) and without it (*_plain), see scenarios.cpp.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/native/support.hpp"

extern "C" long coop_scenario_busy_wait_implicit();
extern "C" long coop_scenario_busy_wait_plain();
extern "C" long coop_scenario_switches_plain_loop_implicit();
extern "C" long coop_scenario_switches_plain_loop_plain();
extern "C" long coop_scenario_switches_uncooperative_scope_implicit();
extern "C" long coop_scenario_switches_uncooperative_function_implicit();

namespace {

// finishes_in_child — runs f() in a forked child; true if it exited normally within
// `seconds`, false if it was still running then (it is killed).
bool finishes_in_child(long (*f)(), int seconds) {
    const pid_t pid = fork();
    if (pid < 0) ADD_FAILURE() << "fork failed";
    if (pid == 0) {
        f();
        _exit(0);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return false;
}

}  // namespace

// On one processor, an activity busy-waiting for a flag that another activity sets: the
// plugin's loop check switches away and the setter runs.
TEST(Implicit, BusyWaitTerminatesWithThePlugin) {
    coop_test::Watchdog dog("BusyWaitTerminatesWithThePlugin", 60);
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
    coop_test::Watchdog dog("CheckedLoopSwitches", 60);
    EXPECT_GE(coop_scenario_switches_plain_loop_implicit(), 10);
    EXPECT_EQ(coop_scenario_switches_plain_loop_plain(), 0);
}

// No switch inside a coop::uncooperative scope, although its loop is checked.
TEST(Implicit, NoSwitchInsideAnUncooperativeScope) {
    coop_test::Watchdog dog("NoSwitchInsideAnUncooperativeScope", 60);
    EXPECT_EQ(coop_scenario_switches_uncooperative_scope_implicit(), 0);
}

// No check in a function annotated coop_uncooperative.
TEST(Implicit, NoSwitchInsideAnUncooperativeFunction) {
    coop_test::Watchdog dog("NoSwitchInsideAnUncooperativeFunction", 60);
    EXPECT_EQ(coop_scenario_switches_uncooperative_function_implicit(), 0);
}
