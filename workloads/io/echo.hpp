// echo.hpp — the I/O workloads `echo` (closed loop) and `echo-open` (open loop, wrk2's
// method): a TCP echo server on the backend, loaded by the harness's load generator
// (harness/loadgen/, its own process: coopbench-loadgen), on 127.0.0.1 only. Also the
// server every C++ backend runs for all the I/O workloads (Server, run_server: http.hpp and
// rpc.hpp use it with their protocols).
//
// The protocol (the same on every backend, io-anchors review §5.2): fixed-size messages of
// `size` bytes; the server reads one whole message and writes it back, until the client
// closes; TCP_NODELAY on both ends. The client checks every echoed byte (a server that drops,
// reorders or corrupts data fails the point: `self-check failed: echoed byte ...`); with
// --inject-fault the server flips the first byte it echoes, which that check must catch.
//
// A C++ backend's server (this header) is a thread per connection on the backend's own
// threads, the classic concurrent server (W. R. Stevens, UNIX Network Programming vol. 1,
// 3rd ed., §26.4 "TCP Echo Server Using Threads": accept, then one thread per client running
// the echo loop): on OS-thread backends with blocking calls (`pthreads`, `stdthread`), on a
// user-level-thread backend through its own I/O (B::Io, below: coop's coop/io.hpp plugs in
// there). External backends (go, tokio, epoll, asio) serve the same point with their own
// program (docs/adding-a-backend.md, "Serving an I/O workload").
//
// value: echo — requests/s over the measured window; echo-open — the p99 latency in µs.
// counters (both): requests, rate_rps, p50_us, p99_us, p999_us, max_us, mean_us (latency, µs;
// percentiles from a log-linear histogram, at most percentile_error = 1/128 above the true
// one), server_cpu_us_per_request and server_cpu_util (the server process's CPU clock over the
// window), client_cpu_util and client_bound (1 when the generator's CPU was >= 90 % busy: the
// rate is then the client's), cpus_shared (1 when server and client had to share CPUs),
// client_threads, unfinished, bytes_checked; echo-open: offered_rps, calibrated_rps.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <list>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/io_point.hpp"
#include "harness/loadgen/cpus.hpp"
#include "harness/loadgen/protocol.hpp"
#include "harness/workload.hpp"
#include "workloads/common.hpp"

extern char** environ;

namespace coopbench {

// HasSocketIo — a backend whose threads wait for sockets through its own runtime:
//   struct Io {
//       static int accept(int listen_fd);                       // a connected fd, or -1 (errno)
//       static ssize_t read(int fd, void* buf, std::size_t n);  // as read(2); parks, not blocks
//       static ssize_t write(int fd, const void* buf, std::size_t n);
//       static void close(int fd);                              // wakes a thread parked on fd
//       static void nonblocking(int fd);                        // O_NONBLOCK: its reads park
//   };
// An OS-thread backend (preemptive) needs none: its threads block in the kernel.
template <class B>
concept HasSocketIo = requires(int fd, void* p, const void* cp, std::size_t n) {
    { B::Io::accept(fd) } -> std::convertible_to<int>;
    { B::Io::read(fd, p, n) } -> std::convertible_to<ssize_t>;
    { B::Io::write(fd, cp, n) } -> std::convertible_to<ssize_t>;
    B::Io::close(fd);
    B::Io::nonblocking(fd);
};

namespace io {

template <class B>
struct Sockets {
    static int accept(int lfd) {
        if constexpr (HasSocketIo<B>) return B::Io::accept(lfd);
        else return ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    }
    static ssize_t read(int fd, void* p, std::size_t n) {
        if constexpr (HasSocketIo<B>) return B::Io::read(fd, p, n);
        else return ::recv(fd, p, n, 0);
    }
    static ssize_t write(int fd, const void* p, std::size_t n) {
        if constexpr (HasSocketIo<B>) return B::Io::write(fd, p, n);
        else return ::send(fd, p, n, MSG_NOSIGNAL);
    }
    // stop_listening — make a thread in accept() return: shutdown(2) of a listening socket
    // wakes a blocked accept with EINVAL on Linux. A thread parked in its runtime's accept
    // (HasSocketIo) waits for readiness, which shutdown(2) need not signal, and closing the
    // socket under it would race with its next call: one more connection, to itself, wakes
    // it instead, and the acceptor, seeing `stopping`, closes it and ends. A loopback connect
    // to a listening socket completes in the kernel (the backlog), so it does not block.
    static void stop_listening(int lfd) {
        if constexpr (HasSocketIo<B>) {
            sockaddr_in a{};
            socklen_t len = sizeof a;
            const int c = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (c >= 0 && getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
                (void)::connect(c, reinterpret_cast<sockaddr*>(&a), len);
            if (c >= 0) ::close(c);
        } else {
            ::shutdown(lfd, SHUT_RDWR);
        }
    }
    // pipe_nonblocking — a pipe the workload reads while the server runs: with HasSocketIo its
    // reads (Sockets::read) park the reading thread instead of blocking its processor.
    static void pipe_nonblocking(int fd) {
        if constexpr (HasSocketIo<B>) B::Io::nonblocking(fd);
        else (void)fd;
    }
    static ssize_t pipe_read(int fd, void* p, std::size_t n) {
        if constexpr (HasSocketIo<B>) return B::Io::read(fd, p, n);
        else return ::read(fd, p, n);
    }
    static void close(int fd) {
        if constexpr (HasSocketIo<B>) B::Io::close(fd);
        else ::close(fd);
    }
};

using loadgen::Protocol;

// ConnThreads — the threads of the connections, each joined soon after it ends (a churn of
// connections, one request each, would otherwise keep every ended thread's stack until the
// point ends): the acceptor reaps the ended ones after each accept. B::Thread's join as
// Group's (workloads/common.hpp): a coop join that says the thread never ran sets error().
template <Backend B>
class ConnThreads {
  public:
    ConnThreads() = default;
    ConnThreads(const ConnThreads&) = delete;
    ConnThreads& operator=(const ConnThreads&) = delete;
    ~ConnThreads() { join_all(); }

    template <class F>
    bool spawn(F fn) {
        auto done = std::make_unique<std::atomic<bool>>(false);
        std::atomic<bool>* d = done.get();
        try {
            live_.push_back(Live{B::spawn([fn, d, this]() mutable {
                                 fn();
                                 // release: pairs with reap()'s acquire, so that a reaped
                                 // thread's work (its fd closed) is visible to the acceptor;
                                 // the join itself then waits at most for the thread's exit.
                                 d->store(true, std::memory_order_release);
                                 // relaxed: a hint that a scan may find something, no more
                                 // (the flag above is what reap() trusts).
                                 ended_.fetch_add(1, std::memory_order_relaxed);
                             }),
                             std::move(done)});
            return true;
        } catch (const SpawnError& e) {
            error_ = std::string(e.what()) + " at " + std::to_string(live_.size()) + " threads";
            return false;
        }
    }
    // reap — join the threads that have ended, when any has since the last scan.
    void reap() {
        const std::uint64_t ended = ended_.load(std::memory_order_relaxed);
        if (ended == seen_) return;
        seen_ = ended;
        for (auto it = live_.begin(); it != live_.end();) {
            if (it->done->load(std::memory_order_acquire)) {
                join(it->thread);
                it = live_.erase(it);
            } else {
                ++it;
            }
        }
    }
    void join_all() {
        for (auto& l : live_) join(l.thread);
        live_.clear();
    }
    const std::string& error() const { return error_; }

  private:
    void join(typename B::Thread& t) {
        if constexpr (std::same_as<decltype(t.join()), bool>) {
            if (!t.join() && error_.empty()) {
                if constexpr (requires { B::start_failure(); }) error_ = B::start_failure();
                else error_ = "a thread never ran";
            }
        } else {
            t.join();
        }
    }
    struct Live {
        typename B::Thread thread;
        std::unique_ptr<std::atomic<bool>> done;
    };
    std::list<Live> live_;  // a list: a thread handle need not be move-assignable
    std::atomic<std::uint64_t> ended_{0};
    std::uint64_t seen_ = 0;  // the acceptor's own
    std::string error_;       // the acceptor's own
};

// Server — the listener, an acceptor thread, and a thread per connection, which runs the
// protocol's loop: echo and rpc (echo, below) or http (http_loop).
template <Backend B>
class Server {
  public:
    Server(Protocol proto, std::size_t size, bool inject_fault) : proto_(proto), size_(size), fault_(inject_fault) {}
    ~Server() {
        if (lfd_ >= 0) Sockets<B>::close(lfd_);  // a runtime's I/O may have registered it
    }

    // listen — bind 127.0.0.1:0; the port, or 0 with error() set.
    int listen() {
        lfd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (lfd_ < 0) return fail(std::string("socket: ") + std::strerror(errno));
        const int one = 1;
        setsockopt(lfd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(lfd_, 4096) != 0 ||
            getsockname(lfd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            return fail(std::string("bind/listen on 127.0.0.1: ") + std::strerror(errno));
        return ntohs(a.sin_port);
    }

    // accept_loop — the acceptor thread's body: a thread per connection until stop().
    void accept_loop() {
        ConnThreads<B> conns;
        for (;;) {
            const int fd = Sockets<B>::accept(lfd_);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                break;  // stop(): EINVAL
            }
            if (stopping_.load(std::memory_order_acquire)) {
                Sockets<B>::close(fd);
                break;
            }
            const int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            conns.reap();
            const bool first = accepted_++ == 0;
            if (!conns.spawn([this, fd, first] {
                    if (proto_ == Protocol::http) http_loop(fd, first && fault_);
                    else echo(fd, first && fault_);
                })) {
                set_error(conns.error());
                Sockets<B>::close(fd);  // the client sees the server close: the point fails
            }
        }
        conns.join_all();
        if (!conns.error().empty()) set_error(conns.error());
    }

    void stop() {
        stopping_.store(true, std::memory_order_release);
        Sockets<B>::stop_listening(lfd_);
    }
    std::string error() {
        m_.lock();
        std::string e = error_;
        m_.unlock();
        return e;
    }

  private:
    // echo — read one whole message (rpc: compute its answer into bytes 0-7, protocol.hpp),
    // write it back, until the client closes.
    void echo(int fd, bool corrupt) {
        std::vector<unsigned char> buf(size_);
        for (;;) {
            std::size_t got = 0;
            while (got < size_) {
                const ssize_t r = Sockets<B>::read(fd, buf.data() + got, size_ - got);
                if (r > 0) got += static_cast<std::size_t>(r);
                else if (r < 0 && errno == EINTR) continue;
                else break;
            }
            if (got < size_) break;  // the client closed (or reset)
            if (proto_ == Protocol::rpc) loadgen::rpc_answer(buf.data());  // the work, then the reply
            if (corrupt) {
                buf[0] ^= 0xFF;  // --inject-fault: the client's byte check must catch this
                corrupt = false;
            }
            std::size_t put = 0;
            while (put < size_) {
                const ssize_t w = Sockets<B>::write(fd, buf.data() + put, size_ - put);
                if (w > 0) put += static_cast<std::size_t>(w);
                else if (w < 0 && errno == EINTR) continue;
                else break;
            }
            if (put < size_) break;
        }
        Sockets<B>::close(fd);
    }
    // http_loop — read what comes into a buffer of kHttpMaxHead bytes; answer every complete
    // request head in it with one write of as many responses (loadgen/protocol.hpp); keep the
    // rest; until the client closes (or sends a head longer than the buffer).
    void http_loop(int fd, bool corrupt) {
        std::vector<char> buf(loadgen::kHttpMaxHead);
        std::size_t have = 0;
        loadgen::HttpHeads heads;
        std::string out;
        for (;;) {
            if (have == buf.size()) break;
            const ssize_t r = Sockets<B>::read(fd, buf.data() + have, buf.size() - have);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            have += static_cast<std::size_t>(r);
            std::size_t used = 0;
            const std::size_t n = heads.complete(buf.data(), have, used);
            if (n == 0) continue;
            std::memmove(buf.data(), buf.data() + used, have - used);
            have -= used;
            out.clear();
            for (std::size_t k = 0; k < n; ++k) out.append(loadgen::kHttpResponse);
            if (corrupt) {
                out[0] = static_cast<char>(out[0] ^ 0xFF);  // --inject-fault: the client's byte check must catch this
                corrupt = false;
            }
            std::size_t put = 0;
            while (put < out.size()) {
                const ssize_t w = Sockets<B>::write(fd, out.data() + put, out.size() - put);
                if (w > 0) put += static_cast<std::size_t>(w);
                else if (w < 0 && errno == EINTR) continue;
                else break;
            }
            if (put < out.size()) break;
        }
        Sockets<B>::close(fd);
    }
    int fail(std::string why) {
        set_error(std::move(why));
        return 0;
    }
    void set_error(std::string why) {
        m_.lock();
        if (error_.empty()) error_ = std::move(why);
        m_.unlock();
    }

    Protocol proto_;
    std::size_t size_;
    bool fault_;
    int lfd_ = -1;
    std::atomic<bool> stopping_{false};
    std::size_t accepted_ = 0;  // the acceptor's own
    typename B::Mutex m_;
    std::string error_;  // guarded by m_
};

// run_loadgen — coopbench-loadgen point ... as a child (posix_spawn: safe in a process with
// many threads); its one reply line, or a failure.
template <Backend B>
nlohmann::json run_loadgen(const std::string& workload, const Params& params, int port,
                           const loadgen::CpuSplit& split) {
    std::vector<std::string> args{loadgen_program(), "point", "--workload", workload, "--port", std::to_string(port),
                                  "--server-pid", std::to_string(getpid()), "--client-cpus",
                                  loadgen::cpu_list(split.client), "--shared", split.shared ? "1" : "0"};
    for (auto& [k, v] : params) args.push_back(k + "=" + v);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return {{"status", "failed"}, {"reason", "pipe failed"}};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(out[1]);
    if (rc != 0) {
        ::close(out[0]);
        return {{"status", "failed"},
                {"reason", "cannot run the load generator " + args[0] + ": " + std::strerror(rc) +
                               " (build the target coopbench-loadgen, or set COOPBENCH_LOADGEN)"}};
    }
    // The reply is read while the server runs: on a backend of user-level threads the read
    // parks this thread (Sockets<B>), so that its processor serves the connections.
    Sockets<B>::pipe_nonblocking(out[0]);
    std::string text;
    char tmp[4096];
    for (;;) {
        const ssize_t n = Sockets<B>::pipe_read(out[0], tmp, sizeof tmp);
        if (n > 0) text.append(tmp, static_cast<std::size_t>(n));
        else if (n < 0 && errno == EINTR) continue;
        else break;
    }
    Sockets<B>::close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    const auto nl = text.rfind('\n');
    const std::string last = nl == std::string::npos ? text : text.substr(nl + 1);
    try {
        return nlohmann::json::parse(last);
    } catch (const std::exception&) {
        return {{"status", "failed"},
                {"reason", "the load generator exited with status " + std::to_string(status) + " without a reply"}};
    }
}

// outcome_of — a reply of the protocol as an Outcome (the server's own error first).
inline Outcome outcome_of(const nlohmann::json& r, const std::string& server_error) {
    const std::string status = r.value("status", "failed");
    if (status == "refused") return Outcome::failed("system limit: " + r.value("reason", std::string("refused")));
    if (status != "ok") {
        const std::string why = r.value("reason", std::string("the load generator failed"));
        return Outcome::failed(server_error.empty() ? why : server_error + "; " + why);
    }
    const std::string check = r.value("check", std::string("no check"));
    if (check != "passed") return Outcome::failed(server_error.empty() ? check : server_error + "; " + check);
    if (!server_error.empty()) return Outcome::failed(server_error);
    Outcome o = Outcome::measured(r.value("seconds", 0.0), r.value("value", 0.0));
    if (r.contains("counters") && r["counters"].is_object())
        for (auto& [k, v] : r["counters"].items())
            if (v.is_number()) o.counters[k] = v.get<double>();
    return o;
}

// Beside — threads a point runs beside its server (echo-hogs' hogs, hogs.hpp): `threads()`
// more of the backend's, started once the server listens (start: false and error() when one
// cannot be), told to end after the load (stop), joined with the acceptor, and then given the
// Outcome (finish: their counters, or the point's failure).
template <Backend B>
struct Beside {
    virtual ~Beside() = default;
    virtual std::size_t threads() const = 0;
    virtual bool start(Group<B>& group) = 0;
    virtual void stop() = 0;
    virtual void finish(Outcome& o) = 0;
};

// run_server — one point of an I/O workload on a C++ backend: the protocol's server in this
// process, the load generator as its child (and, with `beside`, more threads of the backend
// beside the server).
template <Backend B>
Outcome run_server(const std::string& workload, Protocol proto, const Context& ctx, Beside<B>* beside = nullptr) {
    const std::size_t conns = ctx.size("connections");
    const std::size_t more = beside ? beside->threads() : 0;
    Group<B> group(1 + more);
    // The acceptor and one thread per connection may be alive at once (and those beside).
    if (!group.check_capacity(ctx, conns + 1 + more)) return Outcome::failed(group.error());
    std::map<std::string, std::string> params(ctx.params.begin(), ctx.params.end());
    const auto split = loadgen::split_cpus(ctx.options.processors, loadgen::client_threads(params));
    loadgen::pin_tasks_of_self(split.server);
    Server<B> server(proto, proto == Protocol::http ? 0 : ctx.size("size"), ctx.inject_fault);
    const int port = server.listen();
    if (port == 0) return Outcome::failed(server.error());
    if (!group.spawn([&] { server.accept_loop(); })) return Outcome::failed(group.error());
    if (beside && !beside->start(group)) {
        beside->stop();
        server.stop();
        group.join_all();
        return Outcome::failed(group.error());
    }
    const nlohmann::json reply = run_loadgen<B>(workload, ctx.params, port, split);
    if (beside) beside->stop();
    server.stop();
    group.join_all();
    Outcome o = outcome_of(reply, server.error());
    if (beside) beside->finish(o);
    return o;
}

inline std::vector<ParamSpec> load_params(const char* connections) {
    return {{"connections", connections, "TCP connections from the load generator"},
            {"duration_ms", "1000", "the measured window (ms)"},
            {"warmup_ms", "200", "load before the window, not measured (ms)", 0},
            {"max_requests", "0", "end the window after this many measured requests (0: only the duration bounds it)", 0},
            {"client_threads", "1", "load generator threads (each its own epoll and share of the connections)"}};
}

inline std::vector<ParamSpec> common_params(const char* size, const char* connections) {
    std::vector<ParamSpec> p{{"size", size, "bytes per message (request = response)"}};
    for (auto& q : load_params(connections)) p.push_back(q);
    return p;
}

// What every I/O workload's info() shares. add_open_loop_params: an open-loop variant's
// offered rate (a share of the closed-loop maximum it measures first, or a fixed rate).
inline void add_open_loop_params(WorkloadInfo& w) {
    w.params.push_back({"load", "50", "offered rate, % of this server's closed-loop maximum measured first (rate = 0)"});
    w.params.push_back({"rate", "0", "offered rate in requests/s (0: from load)", 0});
    w.params.push_back({"calibrate_ms", "500", "the closed-loop run that measures the maximum (ms)"});
}
// closed_loop_cost / open_loop_cost — a run's cost: the warm-up and the window (and, in the
// open loop without a fixed rate, the calibration run before them), plus the connections'
// set-up; one warm-up and three measured runs per fork (each run is a whole load test).
inline void closed_loop_cost(WorkloadInfo& w) {
    w.cost = [](const Params& p) {
        return (param_number(p, "duration_ms") + param_number(p, "warmup_ms")) * 1e-3 + 0.05;
    };
    w.iterations = [](const Params&) { return WorkloadInfo::Iterations{1, 3}; };
}
inline void open_loop_cost(WorkloadInfo& w) {
    w.cost = [](const Params& p) {
        const double cal = param_number(p, "rate", 0) > 0 ? 0 : param_number(p, "calibrate_ms") + 100;
        return (param_number(p, "duration_ms") + param_number(p, "warmup_ms") + cal) * 1e-3 + 0.05;
    };
    w.iterations = [](const Params&) { return WorkloadInfo::Iterations{1, 3}; };
}
// ServedOverSockets — the backends an I/O workload runs on: those whose threads may block in
// a socket call (pthreads, std::thread) and those with socket I/O of their own (HasSocketIo).
struct ServedOverSockets {
    template <Backend B>
    static constexpr bool supports() {
        return is_preemptive<B>() || HasSocketIo<B>;
    }
};

}  // namespace io

struct Echo : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "echo";
        w.origin = "io-anchors review §5.2 #1 (rust_echo_bench's ping-pong, Photon's net-perf ping-pong)";
        w.description = "TCP echo, closed loop: each connection has one message in flight, sent again as its echo ends";
        w.unit = "requests/s";
        w.io = true;
        w.params = io::common_params("512", "100");
        w.plans["tiny"] = {{{"size", values({64})}, {"connections", values({1, 10})}, {"duration_ms", values({100})},
                            {"warmup_ms", values({20})}}};
        // quick: about 2.5 s a point (W=1, I=3 of 0.6 s), so that every backend's sweep stays
        // near half a minute.
        w.plans["quick"] = {{{"size", values({64, 512, 4096})}, {"connections", values({1, 100, 1000})},
                             {"duration_ms", values({500})}, {"warmup_ms", values({100})}}};
        w.plans["anchors"] = {{{"size", values({64, 512, 4096})}, {"connections", values({1, 10, 100, 1000, 10000})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::closed_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return io::run_server<B>("echo", io::Protocol::echo, ctx);
    }
};

struct EchoOpen : io::ServedOverSockets {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "echo-open";
        w.origin = "io-anchors review §5.2 #2 (wrk2's constant offered rate, latency from the intended send time)";
        w.description =
            "TCP echo, open loop: a fixed offered rate over the connections, latency from each request's intended send time";
        w.unit = "us (p99)";
        w.io = true;
        w.params = io::common_params("512", "100");
        io::add_open_loop_params(w);
        w.plans["tiny"] = {{{"connections", values({10})}, {"load", values({50})}, {"duration_ms", values({100})},
                            {"warmup_ms", values({20})}, {"calibrate_ms", values({100})}}};
        w.plans["quick"] = {{{"connections", values({100})}, {"load", values({25, 50, 90})},
                             {"duration_ms", values({500})}, {"warmup_ms", values({100})}, {"calibrate_ms", values({300})}}};
        w.plans["anchors"] = {{{"connections", values({100, 1000})}, {"load", values({25, 50, 75, 90, 100})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"calibrate_ms", values({2000})}}};
        io::open_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return io::run_server<B>("echo-open", io::Protocol::echo, ctx);
    }
};

}  // namespace coopbench
