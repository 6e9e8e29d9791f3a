#include "harness/child_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "harness/csv.hpp"  // clean_text, cut_text

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
    // A program's stderr: cleaned (valid UTF-8, no control character; csv.hpp) and cut at a
    // character boundary.
    auto shorten = [](const std::string& l) { return cut_text(clean_text(l), 300); };
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

namespace {

// The running point's child (0: none), for the driver's SIGINT/SIGTERM handler; and whether
// that handler killed it. sig_atomic_t: written here, read in a signal handler.
volatile sig_atomic_t g_point_pid = 0;
volatile sig_atomic_t g_point_interrupted = 0;

// children_of_self — the pids whose parent is this process (from /proc/<pid>/stat).
std::set<pid_t> children_of_self() {
    std::set<pid_t> kids;
    const pid_t self = getpid();
    DIR* proc = opendir("/proc");
    if (!proc) return kids;
    while (const dirent* e = readdir(proc)) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[300], buf[512];
        std::snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        const int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        const ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        // pid (comm) state ppid ...: comm may hold spaces and parentheses, so from the last ')'.
        const char* close_paren = std::strrchr(buf, ')');
        char state = 0;
        int ppid = 0;
        if (close_paren && std::sscanf(close_paren + 1, " %c %d", &state, &ppid) == 2 && ppid == self)
            kids.insert(static_cast<pid_t>(std::atoi(e->d_name)));
    }
    closedir(proc);
    return kids;
}

// pidfd_of — a descriptor that polls readable when `pid` exits (-1 where the kernel has none).
int pidfd_of(pid_t pid) {
#ifdef SYS_pidfd_open
    return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
    (void)pid;
    return -1;
#endif
}

// has_exited — `pid` (a child) has exited, without reaping it.
bool has_exited(pid_t pid) {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

void become_subreaper() {
    static const bool done = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)done;
}

std::size_t end_descendants(const std::set<pid_t>& keep) {
    std::size_t ended = 0;
    // A killed process's children are ours (a subreaper) by the time waitpid reaps it: the
    // kernel reparents them in its exit, before it can be reaped. So one scan after another
    // reaches the whole tree, setsid descendants included, and ends when a scan finds none.
    for (;;) {
        std::vector<pid_t> kids;
        for (pid_t k : children_of_self())
            if (!keep.count(k)) kids.push_back(k);
        if (kids.empty()) return ended;
        for (pid_t k : kids) kill(k, SIGKILL);
        for (pid_t k : kids)
            while (waitpid(k, nullptr, 0) < 0 && errno == EINTR) {
            }
        ended += kids.size();
    }
}

void reap_point_tree() {
    const pid_t driver = getppid();
    // SIGCHLD (the program or an orphan of its tree ended) and the driver's death signal are
    // taken by sigtimedwait below, never by a handler: blocked before the fork, so none is lost.
    sigset_t wait_for, before;
    sigemptyset(&wait_for);
    sigaddset(&wait_for, SIGCHLD);
    sigaddset(&wait_for, SIGTERM);
    sigprocmask(SIG_BLOCK, &wait_for, &before);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t reaper = getpid();
    const pid_t program = fork();
    if (program < 0) {
        sigprocmask(SIG_SETMASK, &before, nullptr);
        return;  // no reaper: the program runs in this process, as without one
    }
    if (program == 0) {
        // The program: it dies with the reaper (which only a SIGKILL of the point's group or of
        // the reaper itself ends before the program), and gets the signal mask it would have had.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != reaper) _exit(1);
        sigprocmask(SIG_SETMASK, &before, nullptr);
        return;
    }
    // The reaper holds no end of the point's pipes: its output is the program's alone.
    const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) dup2(devnull, fd);
    for (int fd = 3; fd < 1024; ++fd)
        if (fd != devnull) close(fd);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    for (;;) {
        // The death signal, or a driver that died before prctl took effect (checked each second).
        timespec second{1, 0};
        siginfo_t info{};
        const int sig = sigtimedwait(&wait_for, &info, &second);
        if (sig == SIGTERM || getppid() != driver) {
            end_descendants({});
            _exit(1);
        }
        int status = 0;
        for (pid_t done; (done = waitpid(-1, &status, WNOHANG)) > 0;) {
            if (done != program) continue;  // an orphan of the program's tree, reaped
            // The program ended: end as it did. Its tree's other processes come to the driver
            // (a subreaper too) when this one exits, and run_child ends them.
            if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
            const int s = WTERMSIG(status);
            rlimit no_core{0, 0};
            setrlimit(RLIMIT_CORE, &no_core);  // the program's core, if any, is written; not this one's
            signal(s, SIG_DFL);
            sigset_t only;
            sigemptyset(&only);
            sigaddset(&only, s);
            sigprocmask(SIG_UNBLOCK, &only, nullptr);
            raise(s);
            _exit(128 + s);
        }
    }
}

bool interrupt_running_child() {
    const pid_t pid = g_point_pid;
    if (pid <= 0) return false;
    g_point_interrupted = 1;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    return true;
}

namespace {

// in_child — the point's child, after fork: it dies with the driver (a SIGKILLed driver must
// not leave a point running that competes with the next --resume), and leads its own process
// group. The getppid() check closes the window in which the driver died before prctl took
// effect. A program exec'd from here inherits both (the death signal survives exec). Its
// descendants: end_point_tree, and the supervisor (run_supervised) when the driver itself is
// killed.
[[noreturn]] void in_child(const RunnerOptions& opts, const std::function<void(int stdout_fd)>& child, pid_t parent,
                           const int out_pipe[2], const int err_pipe[2]) {
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

// ChildOutput — a child's stdout and stderr, read with a bound, so a program that floods its
// output cannot take the driver down: stdout is taken line by line (ReplyReader), and of
// stderr the last kStderrTailBytes are kept (the telling line is near its end).
class ChildOutput {
  public:
    ChildOutput(int out_fd, int err_fd, ReplyReader& reply, const std::function<void(std::string&&)>& each_line,
                std::string& err_tail)
        : fd_{out_fd, err_fd}, reply_(reply), each_line_(each_line), err_(err_tail) {}

    int fd(int i) const { return open_[i] ? fd_[i] : -1; }

    // take — read once from stream `i` (0 stdout, 1 stderr) that poll found ready.
    void take(int i) {
        const ssize_t n = read(fd_[i], buf_.data(), buf_.size());
        if (n > 0) feed(i, static_cast<std::size_t>(n));
        else if (n == 0 || (errno != EINTR && errno != EAGAIN)) open_[i] = false;
    }

    // drain — what is left in both pipes once their writers are gone, until EOF or a second
    // has passed (a descriptor passed out of the point's tree could keep one open forever).
    void drain() {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        for (int i = 0; i < 2; ++i) {
            while (open_[i]) {
                const auto left =
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
                pollfd p{fd_[i], POLLIN, 0};
                const int r = poll(&p, 1, static_cast<int>(std::max<long>(left.count(), 0)));
                if (r < 0 && errno == EINTR) continue;
                if (r <= 0) break;
                take(i);
            }
        }
    }

  private:
    void feed(int i, std::size_t n) {
        if (i == 0) return reply_.feed(buf_.data(), n, each_line_);
        err_.append(buf_.data(), n);
        // Cut at twice the bound, so the cut is amortised over many reads.
        if (err_.size() > 2 * kStderrTailBytes) err_.erase(0, err_.size() - kStderrTailBytes);
    }

    int fd_[2];
    bool open_[2] = {true, true};
    ReplyReader& reply_;
    const std::function<void(std::string&&)>& each_line_;
    std::string& err_;
    std::vector<char> buf_ = std::vector<char>(65536);
};

// read_until_exit — the child's output until it exits (not until EOF: a descendant that
// inherited stdout would hold the point open after the program replied and exited), the
// timeout (c.timed_out), or an interrupt; whether it exited.
bool read_until_exit(pid_t pid, ChildOutput& out, const RunnerOptions& opts, ChildRun& c) {
    const int exit_fd = pidfd_of(pid);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(opts.timeout_seconds * 1000));
    bool exited = false;
    while (!exited && !g_point_interrupted) {
        int wait_ms = exit_fd >= 0 ? 1000 : 100;
        if (opts.timeout_seconds > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                c.timed_out = true;
                break;
            }
            wait_ms = static_cast<int>(std::min<long>(left.count(), wait_ms));
        }
        pollfd fds[3] = {{out.fd(0), POLLIN, 0}, {out.fd(1), POLLIN, 0}, {exit_fd, POLLIN, 0}};
        if (poll(fds, 3, wait_ms) < 0 && errno == EINTR) continue;
        for (int i = 0; i < 2; ++i)
            if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) out.take(i);
        exited = exit_fd >= 0 ? (fds[2].revents & POLLIN) != 0 : has_exited(pid);
    }
    if (exit_fd >= 0) close(exit_fd);
    return exited;
}

// end_point_tree — the point ends, whatever ended it (its exit, the timeout, the driver's
// SIGINT or SIGTERM): its process group, then every descendant that left the group (setsid)
// and came to this subreaper when its parent died. The child itself stays a zombie (not
// reaped here), so its pid and group id cannot be reused meanwhile.
void end_point_tree(pid_t pid, bool exited, std::set<pid_t> keep) {
    kill(-pid, SIGKILL);
    if (!exited) kill(pid, SIGKILL);
    for (siginfo_t info{}; waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR;) {
    }
    keep.insert(pid);
    end_descendants(keep);
}

}  // namespace

ChildRun run_child(const RunnerOptions& opts, const std::function<void(int stdout_fd)>& child, ReplyReader& reply,
                   const std::function<void(std::string&&)>& each_line) {
    ChildRun c;
    // Whatever the point starts and leaves behind becomes this process's child (its orphans
    // come here, not to init), so end_point_tree can end it when the point ends.
    become_subreaper();
    const std::set<pid_t> before = children_of_self();
    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        c.error = std::string("pipe: ") + std::strerror(errno);
        return c;
    }
    std::fflush(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        c.error = std::string("fork: ") + std::strerror(errno);
        return c;
    }
    if (pid == 0) in_child(opts, child, parent, out_pipe, err_pipe);
    setpgid(pid, pid);  // also here: whichever of parent and child runs first
    g_point_interrupted = 0;
    g_point_pid = pid;
    close(out_pipe[1]);
    close(err_pipe[1]);
    ChildOutput out(out_pipe[0], err_pipe[0], reply, each_line, c.stderr_tail);
    const bool exited = read_until_exit(pid, out, opts, c);
    end_point_tree(pid, exited, before);
    out.drain();  // what the child wrote before it ended is still in the pipes; its writers are gone
    while (wait4(pid, &c.status, 0, &c.usage) < 0 && errno == EINTR) {
    }
    c.interrupted = g_point_interrupted != 0;
    g_point_pid = 0;
    close(out_pipe[0]);
    close(err_pipe[0]);
    return c;
}

namespace {
volatile sig_atomic_t g_supervised = 0;  // the supervised child's pid, for forward_signal
void forward_signal(int sig) {
    if (g_supervised > 0) kill(g_supervised, sig);
}
}  // namespace

int run_supervised(const std::function<int()>& main) {
    std::fflush(nullptr);
    const pid_t supervisor = getpid();
    const pid_t pid = fork();
    if (pid < 0) return main();  // no supervisor: the driver still ends its points on SIGINT/SIGTERM
    if (pid == 0) {
        // The driver. A supervisor killed with SIGKILL sends it SIGTERM: it ends its running
        // point as on any SIGTERM (harness/sweep.cpp), then dies of it.
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != supervisor) raise(SIGTERM);
        return main();
    }
    // The supervisor: the driver's orphans (its point's tree, after the driver died) come here.
    become_subreaper();
    g_supervised = pid;
    struct sigaction sa{};
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaction(sig, &sa, nullptr);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    end_descendants({});
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    // Die as the driver did, so the shell sees the same status (130 for SIGINT, 137 for kill -9).
    const int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    _exit(128 + sig);
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
