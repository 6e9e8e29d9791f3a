// coopbench-loadgen — the harness's load generator for the I/O workloads (loadgen.hpp).
//
//   coopbench-loadgen point --workload W --port P [--server-pid PID] [--client-cpus 1,2]
//                          [--shared 0|1] NAME=VALUE...
//       loads the server at 127.0.0.1:P as the point (W, params) says and prints one reply of
//       the external-program protocol (point.hpp). A C++ backend's I/O workload
//       (workloads/io/) runs its server in the point's process and this as its child.
//
//   coopbench-loadgen host PROGRAM [ARGS...]
//       the point of an external backend's I/O workload (harness/external.cpp execs this
//       instead of the program): reads the request line on stdin, starts PROGRAM ARGS with the
//       same line on its stdin and on the server's CPUs, waits for the program's line
//       {"listening": PORT}, runs the request's warmup + iterations loads against it, then
//       closes the program's stdin (its cue to exit) and prints {"runs": [...]}. A program that
//       replies {"status": ...} instead of listening (refused, failed) has that reply passed on.
//       docs/adding-a-backend.md, "Serving an I/O workload".
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness/loadgen/fd_limit.hpp"
#include "harness/loadgen/point.hpp"
#include "harness/loadgen/protocol.hpp"

namespace {

using coopbench::loadgen::CpuSplit;
using nlohmann::json;

std::vector<int> parse_cpus(const std::string& s) {
    std::vector<int> out;
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t j = s.find(',', i);
        if (j == std::string::npos) j = s.size();
        if (j > i) out.push_back(std::stoi(s.substr(i, j - i)));
        i = j + 1;
    }
    return out;
}

int point_main(int argc, char** argv) {
    std::string workload;
    int port = 0;
    pid_t server = 0;
    CpuSplit split;
    std::map<std::string, std::string> params;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
            return argv[++i];
        };
        if (a == "--workload") workload = next();
        else if (a == "--port") port = std::stoi(next());
        else if (a == "--server-pid") server = static_cast<pid_t>(std::stol(next()));
        else if (a == "--client-cpus") split.client = parse_cpus(next());
        else if (a == "--shared") split.shared = next() == "1";
        else if (auto eq = a.find('='); eq != std::string::npos) params[a.substr(0, eq)] = a.substr(eq + 1);
        else throw std::invalid_argument("unknown argument " + a);
    }
    if (workload.empty() || port <= 0) throw std::invalid_argument("point needs --workload and --port");
    std::cout << coopbench::loadgen::measure_point(workload, params, port, server, split).dump() << std::endl;
    return 0;
}

// LineReader — lines of a pipe, each wait bounded.
struct LineReader {
    int fd;
    std::string buf;
    // next — the next line within `timeout_ms`; false at EOF or timeout (`eof` says which).
    bool next(std::string& line, int timeout_ms, bool& eof) {
        eof = false;
        for (;;) {
            if (auto nl = buf.find('\n'); nl != std::string::npos) {
                line = buf.substr(0, nl);
                buf.erase(0, nl + 1);
                return true;
            }
            pollfd p{fd, POLLIN, 0};
            const int r = poll(&p, 1, timeout_ms);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            char tmp[4096];
            const ssize_t n = read(fd, tmp, sizeof tmp);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                eof = true;
                return false;
            }
            if (buf.size() > (1 << 20)) return false;  // a line longer than 1 MiB is no protocol line
            buf.append(tmp, static_cast<std::size_t>(n));
        }
    }
};

json failed_run(const std::string& why) {
    return json{{"status", "failed"}, {"reason", why}};
}

int host_main(int argc, char** argv) {
    if (argc < 3) throw std::invalid_argument("host needs the server program");
    std::string line;
    if (!std::getline(std::cin, line)) throw std::invalid_argument("host: no request on stdin");
    const json req = json::parse(line);
    const std::string workload = req.value("workload", "");
    std::map<std::string, std::string> params;
    if (req.contains("params") && req["params"].is_object())
        for (auto& [k, v] : req["params"].items())
            if (v.is_string()) params[k] = v.get<std::string>();
    const unsigned processors = static_cast<unsigned>(std::max<std::int64_t>(1, req.value("processors", 1)));
    const int runs_wanted = std::max(1, req.value("warmup", 0) + req.value("iterations", 1));
    const CpuSplit split = coopbench::loadgen::split_cpus(processors, coopbench::loadgen::client_threads(params));

    // A server holds an fd per connection (echo-idle: 10,000 idle ones and the loaded ones):
    // the soft RLIMIT_NOFILE raised to the hard one here is the program's, inherited across
    // fork and exec (getrlimit(2)); Go raises its own too (os package, since Go 1.19), tokio
    // and the C++ programs do not. The load generator checks the server's limit before it
    // connects (loadgen.cpp), so a point beyond it is refused, not failed half-way.
    coopbench::loadgen::raise_fd_limit();
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        if (!split.server.empty()) {
            cpu_set_t set;
            CPU_ZERO(&set);
            for (int c : split.server) CPU_SET(c, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
        dup2(in[0], STDIN_FILENO);
        dup2(out[1], STDOUT_FILENO);
        execv(argv[2], argv + 2);
        std::fprintf(stderr, "coopbench-loadgen: cannot run %s: %s\n", argv[2], std::strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    signal(SIGPIPE, SIG_IGN);
    const std::string request = line + "\n";
    if (write(in[1], request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
        // the program may have died already: its exit says why below
    }
    LineReader reader{out[0], {}};
    json runs = json::array();
    int port = 0;
    std::string got;
    bool eof = false;
    while (reader.next(got, 30000, eof)) {
        json j;
        try {
            j = json::parse(got);
        } catch (const std::exception&) {
            continue;  // a line of the program's own
        }
        if (j.is_object() && j.contains("listening") && j["listening"].is_number_integer()) {
            port = j["listening"].get<int>();
            break;
        }
        if (j.is_object() && j.contains("status")) {  // refused / failed / unsupported before serving
            runs.push_back(j);
            break;
        }
    }
    // What the program prints after {"listening": PORT} is read off (so that it never blocks
    // on a full pipe) and, for echo-hogs, its last line {"hogs": K, "hog_slices": N} kept; the
    // thread ends at the pipe's end, when the program has exited (it is joined below).
    json hog_line;
    std::thread drain;
    if (port > 0) {
        drain = std::thread([&reader, &hog_line] {
            std::string l;
            bool end = false;
            for (;;) {
                if (!reader.next(l, -1, end)) {
                    if (end) return;
                    reader.buf.clear();  // an over-long line: not a protocol line
                    continue;
                }
                try {
                    json j = json::parse(l);
                    if (j.is_object() && j.contains(coopbench::loadgen::kHogSlicesKey)) hog_line = j;
                } catch (const std::exception&) {
                }  // a line of the program's own
            }
        });
        for (int k = 0; k < runs_wanted; ++k) {
            json r = coopbench::loadgen::measure_point(workload, params, port, pid, split);
            runs.push_back(r);
            if (r.value("status", "") != "ok" || r.value("check", "") != "passed") break;
            int st = 0;
            if (waitpid(pid, &st, WNOHANG) == pid) {
                runs.push_back(failed_run("the server exited during the run"));
                break;
            }
        }
    } else if (runs.empty()) {
        runs.push_back(failed_run(eof ? "the server program exited before it printed {\"listening\": PORT}"
                                      : "the server program printed no {\"listening\": PORT} line within 30 s"));
    }
    close(in[1]);  // the program's cue to exit
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 500; ++i) {  // 5 s
        if (waitpid(pid, &status, WNOHANG) == pid) {
            exited = true;
            break;
        }
        timespec ts{0, 10'000'000};
        nanosleep(&ts, nullptr);
    }
    if (!exited) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        if (runs.empty() || runs.back().value("status", "") == "ok")
            runs.push_back(failed_run("the server did not exit within 5 s of its stdin's end"));
    } else if (WIFSIGNALED(status) && port > 0) {
        runs.push_back(failed_run(std::string("the server died of signal ") + strsignal(WTERMSIG(status))));
    } else if (port > 0 && WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        runs.push_back(failed_run("the server exited with status " + std::to_string(WEXITSTATUS(status))));
    }
    if (drain.joinable()) drain.join();  // the program has exited (or was killed): its stdout ended
    // echo-hogs' self-check: the hogs must have run. Their slices are counted over the
    // program's life (its W + I runs), known once it has exited: the counters go on every run,
    // and a count of 0 fails the last one.
    if (workload == "echo-hogs" && port > 0 && !runs.empty() && runs.back().value("status", "") == "ok" &&
        runs.back().value("check", "") == "passed") {
        const std::uint64_t slices =
            hog_line.is_object() ? hog_line.value(coopbench::loadgen::kHogSlicesKey, std::uint64_t{0}) : 0;
        for (auto& r : runs)
            if (r.value("status", "") == "ok" && r.contains("counters")) {
                r["counters"]["hogs"] = hog_line.is_object() ? hog_line.value("hogs", 0) : 0;
                r["counters"][coopbench::loadgen::kHogSlicesKey] = slices;
            }
        if (!hog_line.is_object())
            runs.back()["check"] = "self-check failed: the server printed no {\"hogs\": K, \"hog_slices\": N} line when its stdin ended";
        else if (slices == 0)
            runs.back()["check"] = "self-check failed: hog_slices = 0: the server's " +
                                   std::to_string(hog_line.value("hogs", 0)) + " hogs completed no slice (they never ran)";
    }
    // Never more runs than were asked (the driver refuses a longer list): a failure noted after
    // the last run replaces it.
    while (static_cast<int>(runs.size()) > runs_wanted) runs.erase(runs.end() - 2);
    std::cout << json{{"runs", runs}}.dump() << std::endl;
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const std::string mode = argc > 1 ? argv[1] : "";
        if (mode == "point") return point_main(argc, argv);
        if (mode == "host") return host_main(argc, argv);
        std::fprintf(stderr, "usage: coopbench-loadgen point --workload W --port P [...] | host PROGRAM [ARGS...]\n");
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "coopbench-loadgen: %s\n", e.what());
        std::cout << json{{"status", "failed"}, {"reason", std::string("load generator: ") + e.what()}}.dump()
                  << std::endl;
        return 0;
    }
}
