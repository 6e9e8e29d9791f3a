// cli_background.hpp — `coopbench ARGS...` started in a forked child that the test does not
// wait for, so it can look at the results folder while the driver runs and then kill it
// (kill -9 mid-sweep, then --resume). cli.hpp's cli_in_child waits for the run instead.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/cli.hpp"

namespace coopbench::test {

// cli_started — fork a child that runs `coopbench ARGS...` (cli_here) and exits with its exit
// code; returns the child's pid (< 0 when fork failed). Precondition: the calling process has
// no other running threads (fork copies one).
inline pid_t cli_started(const std::vector<std::string>& args) {
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t pid = fork();
    if (pid == 0) _exit(cli_here(args));
    return pid;
}

// kill_and_reap — SIGKILL the child `pid` and wait for it (no zombie is left).
inline void kill_and_reap(pid_t pid) {
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
}

// eventually — check `done` after each of up to `tries` pauses of 10 ms (at least 30 s by
// default: generous for a busy machine); whether it held. Never an assertion on time.
inline bool eventually(const std::function<bool()>& done, int tries = 3000) {
    for (int i = 0; i < tries; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (done()) return true;
    }
    return false;
}

}  // namespace coopbench::test
