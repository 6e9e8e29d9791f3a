// child.hpp — the tests' one fork runner: run a function in a forked child process and get
// its answer back, or why it gave none (a crash, an exit, a hang past the limit: the child
// is then killed). For state that can exist once per process (Boost.Fiber's work_stealing,
// a scenario that may spin forever) and for `coopbench` runs that must not share the test's
// process.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace coopbench::test {

// in_child — run fn in a forked child; returns fn's result ("" means success) or why the
// child failed (crash, exit, or no answer within `seconds`: the child is then killed).
// Precondition: the calling process has no other running threads (fork copies one).
inline std::string in_child(const std::function<std::string()>& fn, int seconds = 120) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    std::fflush(nullptr);  // nothing buffered is written twice
    const pid_t pid = fork();
    if (pid < 0) return "fork failed";
    if (pid == 0) {
        close(fds[0]);
        std::string r;
        try {
            r = fn();
        } catch (const std::exception& e) {
            r = std::string("exception: ") + e.what();
        }
        std::fflush(nullptr);
        r = "R" + r;  // a marker, so an empty answer differs from no answer
        ssize_t off = 0;
        while (off < static_cast<ssize_t>(r.size())) {
            ssize_t w = write(fds[1], r.data() + off, r.size() - static_cast<std::size_t>(off));
            if (w <= 0) break;
            off += w;
        }
        _exit(0);
    }
    close(fds[1]);
    std::string got;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    bool timed_out = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd p{fds[0], POLLIN, 0};
        const int n = poll(&p, 1, static_cast<int>(left.count()));
        if (n <= 0) continue;
        char buf[512];
        const ssize_t r = read(fds[0], buf, sizeof buf);
        if (r <= 0) break;
        got.append(buf, static_cast<std::size_t>(r));
    }
    close(fds[0]);
    if (timed_out) kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (timed_out) return "child hung for " + std::to_string(seconds) + " s (killed)";
    if (WIFSIGNALED(status)) return "child died of signal " + std::to_string(WTERMSIG(status));
    if (got.empty() || got[0] != 'R') return "child gave no answer (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    return got.substr(1);
}

// finishes_in_child — true if fn() returns in a child within `seconds`; false if it
// crashed or was still running then (it is killed).
inline bool finishes_in_child(const std::function<void()>& fn, int seconds) {
    return in_child(
               [&] {
                   fn();
                   return std::string();
               },
               seconds) == "";
}

}  // namespace coopbench::test
