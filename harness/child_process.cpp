#include "harness/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace coopbench {

void ReplyReader::feed(const char* data, std::size_t n, const std::function<void(std::string&&)>& each_line) {
    for (std::size_t i = 0; i < n;) {
        const char* nl = static_cast<const char*>(std::memchr(data + i, '\n', n - i));
        const std::size_t end = nl ? static_cast<std::size_t>(nl - data) : n;
        const std::size_t len = end - i;
        if (!overflow_) {
            if (pending_.size() + len > limit_) {
                overflow_ = true;
                pending_.clear();
                pending_.shrink_to_fit();
            } else {
                pending_.append(data + i, len);
            }
        }
        current_ += len;
        if (!nl) break;
        // A complete line.
        longest_ = std::max(longest_, current_);
        if (overflow_) {
            too_long_last_ = true;
            any_too_long_ = true;
        } else if (pending_.find_first_not_of(" \t\r") != std::string::npos) {
            too_long_last_ = false;
            last_ = pending_;
            has_last_ = true;
            each_line(std::move(pending_));
        }
        pending_.clear();
        overflow_ = false;
        current_ = 0;
        i = end + 1;
    }
    longest_ = std::max(longest_, current_);
}

bool ReplyReader::too_long() const {
    // The reply is the last non-blank line: a too-long line followed by nothing but an
    // unfinished one, or by nothing at all.
    if (overflow_) return true;
    if (pending_.find_first_not_of(" \t\r") != std::string::npos) return false;
    return too_long_last_;
}

const std::string& ReplyReader::last() const {
    // A last line without a newline (a program that exits after writing it) is the reply too.
    if (pending_.find_first_not_of(" \t\r") != std::string::npos) return pending_;
    return last_;
}

bool ReplyReader::has_last() const { return has_last_ || pending_.find_first_not_of(" \t\r") != std::string::npos; }

namespace {

double tv_seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

std::string signal_text(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    const char* desc = sigdescr_np(sig);
    return std::string("SIG") + (abbrev ? abbrev : std::to_string(sig).c_str()) + " (" + (desc ? desc : "?") + ")";
}

// The line of a failed child's stderr that best says what went wrong: a
// sanitizer's SUMMARY (e.g. "SUMMARY: AddressSanitizer: SEGV ..."), else its
// ERROR line, else the first "panic: " / "fatal error: " line (Go's runtime, before its
// stack trace), else the last line that is not a sanitizer's "==pid==ABORTING".
std::string telling_line(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos) nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        std::size_t b = line.find_first_not_of(" \r\t");
        std::size_t e = line.find_last_not_of(" \r\t");
        if (b != std::string::npos) lines.push_back(line.substr(b, e - b + 1));
    }
    auto shorten = [](std::string l) { return l.size() > 300 ? l.substr(0, 300) + "..." : l; };
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->rfind("SUMMARY: ", 0) == 0) return shorten(*it);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (it->find("ERROR: ") != std::string::npos && it->find("Sanitizer") != std::string::npos) return shorten(*it);
    // An external program's runtime error before its stack trace (Go: "panic: ...",
    // "fatal error: ..."; the trace's last line says nothing).
    for (auto& l : lines)
        if (l.rfind("panic: ", 0) == 0 || l.rfind("fatal error: ", 0) == 0) return shorten(l);
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
        if (!(it->rfind("==", 0) == 0 && it->find("ABORTING") != std::string::npos)) return shorten(*it);
    return "";
}

}  // namespace

ChildRun run_child(const RunnerOptions& opts, const std::function<void(int stdout_fd)>& child, ReplyReader& reply,
                   const std::function<void(std::string&&)>& each_line, bool kill_group_after) {
    ChildRun c;
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        c.error = std::string("pipe: ") + std::strerror(errno);
        return c;
    }
    std::fflush(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        c.error = std::string("fork: ") + std::strerror(errno);
        return c;
    }
    if (pid == 0) {
        // Child: it dies with the driver (a SIGKILLed driver must not leave a point running
        // that competes with the next --resume), and leads its own process group, so a timeout
        // kills whatever it started too. The getppid() check closes the window in which the
        // driver died before prctl took effect. A program exec'd from here inherits both (the
        // death signal survives exec).
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        setpgid(0, 0);
        close(out_pipe[0]);
        close(err_pipe[0]);
        dup2(err_pipe[1], STDERR_FILENO);
        if (opts.memory_limit_bytes) {
            rlimit lim{opts.memory_limit_bytes, opts.memory_limit_bytes};
            setrlimit(RLIMIT_AS, &lim);
        }
        child(out_pipe[1]);
        // Leave without running exit handlers.
        close(out_pipe[1]);
        std::fflush(nullptr);
        _exit(0);
    }
    setpgid(pid, pid);  // also here: whichever of parent and child runs first
    close(out_pipe[1]);
    close(err_pipe[1]);

    // What the child writes is read with a bound, so a program that floods its output cannot
    // take the driver down: stdout is taken line by line (ReplyReader), and of stderr the
    // last kStderrTailBytes are kept (the telling line is near its end).
    std::string& err = c.stderr_tail;
    bool out_open = true, err_open = true;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(opts.timeout_seconds * 1000));
    std::vector<char> buf(65536);
    while (out_open || err_open) {
        int wait_ms = -1;
        if (opts.timeout_seconds > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                c.timed_out = true;
                break;
            }
            wait_ms = static_cast<int>(std::min<long>(left.count(), 1000));
        }
        pollfd fds[2] = {{out_open ? out_pipe[0] : -1, POLLIN, 0}, {err_open ? err_pipe[0] : -1, POLLIN, 0}};
        int r = poll(fds, 2, wait_ms);
        if (r < 0 && errno == EINTR) continue;
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t n = read(fds[i].fd, buf.data(), buf.size());
            if (n > 0) {
                if (i == 0) reply.feed(buf.data(), static_cast<std::size_t>(n), each_line);
                else {
                    err.append(buf.data(), static_cast<std::size_t>(n));
                    // Cut at twice the bound, so the cut is amortised over many reads.
                    if (err.size() > 2 * kStderrTailBytes) err.erase(0, err.size() - kStderrTailBytes);
                }
            } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
                (i == 0 ? out_open : err_open) = false;
            }
        }
    }
    if (c.timed_out) {
        kill(-pid, SIGKILL);  // the point's whole process group (an external program's children too)
        kill(pid, SIGKILL);
    }
    while (wait4(pid, &c.status, 0, &c.usage) < 0 && errno == EINTR) {
    }
    if (kill_group_after) kill(-pid, SIGKILL);
    close(out_pipe[0]);
    close(err_pipe[0]);
    return c;
}

std::string reply_too_long(const ReplyReader& reply, const std::string& whose) {
    return "reply longer than " + std::to_string(kMaxReplyBytes) + " bytes on one line of the " + whose + " stdout (" +
           std::to_string(reply.longest()) + " bytes seen)";
}

void end_fork(Measurement& m, const ChildRun& c, int expected_runs, std::string failure, const RunnerOptions& opts) {
    m.peak_rss_kib = static_cast<double>(c.usage.ru_maxrss);
    m.cpu_seconds = tv_seconds(c.usage.ru_utime) + tv_seconds(c.usage.ru_stime);
    const std::string tail = telling_line(c.stderr_tail);
    // The runs the child reported (complete lines only: a line cut by a crash is not a
    // result), then why the fork ended early.
    const bool last_failed = !m.runs.empty() && !m.runs.back().ok;
    const std::string at =
        m.runs.empty() ? std::string() : " (after " + std::to_string(m.runs.size()) + " of " + std::to_string(expected_runs) + " runs)";
    if (c.timed_out) {
        failure = "timeout after " + std::to_string(static_cast<long>(opts.timeout_seconds)) + " s" + at;
    } else if (WIFSIGNALED(c.status)) {
        failure = "crashed: " + signal_text(WTERMSIG(c.status)) + at + (tail.empty() ? "" : "; " + tail);
    } else if (failure.empty() && !last_failed && static_cast<int>(m.runs.size()) < expected_runs) {
        failure = "exited with status " + std::to_string(WEXITSTATUS(c.status)) + " without a result" + at +
                  (tail.empty() ? "" : "; " + tail);
    }
    if (!failure.empty() && !last_failed) m.runs.push_back(Outcome::failed(failure));
}

}  // namespace coopbench
