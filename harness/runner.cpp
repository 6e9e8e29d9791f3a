#include "harness/runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>
#include <nlohmann/json.hpp>

#include "harness/external.hpp"

namespace coopbench {

std::string outcome_to_json(const Outcome& o) {
    nlohmann::json j;
    j["ok"] = o.ok;
    j["reason"] = o.reason;
    j["seconds"] = o.seconds;
    j["value"] = o.value;
    j["counters"] = o.counters;
    j["cpu_seconds"] = o.cpu_seconds;
    return j.dump();
}

Outcome outcome_from_json(const std::string& s) {
    auto j = nlohmann::json::parse(s);
    Outcome o;
    o.ok = j.at("ok").get<bool>();
    o.reason = j.at("reason").get<std::string>();
    o.seconds = j.at("seconds").get<double>();
    o.value = j.at("value").get<double>();
    o.counters = j.at("counters").get<std::map<std::string, double>>();
    o.cpu_seconds = j.value("cpu_seconds", -1.0);
    return o;
}

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

// run_inline — the fork's runs in this process; each outcome goes to `each` as it ends.
Outcome run_inline(const Point& point, bool inject_fault, const std::function<void(int, const Outcome&)>& each) {
    const BackendEntry* b = Registry::instance().backend(point.backend);
    if (!b || !b->runners.count(point.workload)) {
        Outcome o = Outcome::failed("backend " + point.backend + " does not run workload " + point.workload);
        each(0, o);
        return o;
    }
    Context ctx;
    ctx.params = point.params;
    ctx.options = point.options;
    ctx.inject_fault = inject_fault;
    ctx.runs = point.runs();
    ctx.on_run = each;
    return b->runners.at(point.workload)(ctx);
}

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

Measurement measure(const Point& point, const RunnerOptions& opts) {
    Measurement m;
    // An external backend (harness/external.hpp) is a program: always its own process.
    const ExternalBackend* external = external_backend(point.backend);
    if (opts.isolation == Isolation::none && !external) {
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        try {
            run_inline(point, opts.inject_fault, [&](int, const Outcome& o) { m.runs.push_back(o); });
        } catch (const std::exception& e) {
            m.runs.push_back(Outcome::failed(e.what()));
        }
        if (m.runs.empty()) m.runs.push_back(Outcome::failed("the workload did not run"));
        m.cpu_seconds = tv_seconds(after.ru_utime) + tv_seconds(after.ru_stime) - tv_seconds(before.ru_utime) -
                        tv_seconds(before.ru_stime);
        return m;
    }

    int out_pipe[2], err_pipe[2];
    if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
        m.runs.push_back(Outcome::failed(std::string("pipe: ") + std::strerror(errno)));
        return m;
    }
    std::fflush(nullptr);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        m.runs.push_back(Outcome::failed(std::string("fork: ") + std::strerror(errno)));
        return m;
    }
    if (pid == 0) {
        // Child: run the point, write the outcome, leave without running exit handlers.
        // It dies with the driver (a SIGKILLed driver must not leave a point running that
        // competes with the next --resume), and leads its own process group, so a timeout
        // kills whatever it started too. The getppid() check closes the window in which the
        // driver died before prctl took effect.
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
        if (external) {
            // The program inherits the process group (a timeout kills what it started too)
            // and the death signal (prctl's setting survives exec).
            dup2(out_pipe[1], STDOUT_FILENO);
            exec_external(*external, point, opts.inject_fault);
        }
        // One line per run, written as the run ends: the parent keeps every run before a
        // crash or a timeout.
        auto send = [&](int, const Outcome& o) {
            std::string s = outcome_to_json(o) + "\n";
            const char* p = s.data();
            std::size_t left = s.size();
            while (left > 0) {
                ssize_t n = write(out_pipe[1], p, left);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                p += n;
                left -= static_cast<std::size_t>(n);
            }
        };
        try {
            run_inline(point, opts.inject_fault, send);
        } catch (const std::bad_alloc&) {
            send(0, Outcome::failed("out of memory (std::bad_alloc)"));
        } catch (const std::exception& e) {
            send(0, Outcome::failed(e.what()));
        }
        close(out_pipe[1]);
        std::fflush(nullptr);
        _exit(0);
    }
    setpgid(pid, pid);  // also here: whichever of parent and child runs first
    close(out_pipe[1]);
    close(err_pipe[1]);

    // What the child writes is read with a bound, so a program that floods its output cannot
    // take the driver down: stdout is taken line by line (a C++ child's lines are parsed as
    // they come; of an external program's only the last non-blank line is kept, its reply),
    // and a line longer than kMaxReplyBytes fails the point; of stderr the last 64 KiB are
    // kept (the telling line is near its end).
    ReplyReader reply(kMaxReplyBytes);
    std::string err;
    std::string failure;
    bool out_open = true, err_open = true, timed_out = false;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<long>(opts.timeout_seconds * 1000));
    std::vector<char> buf(65536);
    auto take_line = [&](std::string&& line) {
        if (external) return;  // ReplyReader keeps the last one
        if (!failure.empty()) return;
        try {
            m.runs.push_back(outcome_from_json(line));
        } catch (const std::exception& e) {
            failure = std::string("unreadable result from the point's process: ") + e.what();
        }
    };
    while (out_open || err_open) {
        int wait_ms = -1;
        if (opts.timeout_seconds > 0) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                timed_out = true;
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
                if (i == 0) reply.feed(buf.data(), static_cast<std::size_t>(n), take_line);
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
    if (timed_out) {
        kill(-pid, SIGKILL);  // the point's whole process group (an external program's children too)
        kill(pid, SIGKILL);
    }
    int status = 0;
    rusage ru{};
    while (wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    if (external) kill(-pid, SIGKILL);  // whatever the program left running
    close(out_pipe[0]);
    close(err_pipe[0]);
    m.peak_rss_kib = static_cast<double>(ru.ru_maxrss);
    m.cpu_seconds = tv_seconds(ru.ru_utime) + tv_seconds(ru.ru_stime);

    const std::string tail = telling_line(err);
    // The runs the child reported (complete lines only: a line cut by a crash is not a
    // result), then why the fork ended early.
    if (reply.too_long() || (!external && reply.any_too_long())) {
        failure = "reply longer than " + std::to_string(kMaxReplyBytes) + " bytes on one line of the " +
                  (external ? std::string("program's") : std::string("point's process's")) + " stdout (" +
                  std::to_string(reply.longest()) + " bytes seen)";
    } else if (external) {
        if (reply.has_last() && !timed_out && !WIFSIGNALED(status))
            m.runs = external_outcomes(reply.last() + "\n", WEXITSTATUS(status), point.runs());
    }
    const bool last_failed = !m.runs.empty() && !m.runs.back().ok;
    const std::string at =
        m.runs.empty() ? std::string() : " (after " + std::to_string(m.runs.size()) + " of " + std::to_string(point.runs()) + " runs)";
    if (timed_out) {
        failure = "timeout after " + std::to_string(static_cast<long>(opts.timeout_seconds)) + " s" + at;
    } else if (WIFSIGNALED(status)) {
        failure = "crashed: " + signal_text(WTERMSIG(status)) + at + (tail.empty() ? "" : "; " + tail);
    } else if (failure.empty() && !last_failed && static_cast<int>(m.runs.size()) < point.runs()) {
        failure = "exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result" + at +
                  (tail.empty() ? "" : "; " + tail);
    }
    if (!failure.empty() && !last_failed) m.runs.push_back(Outcome::failed(failure));
    return m;
}

}  // namespace coopbench
