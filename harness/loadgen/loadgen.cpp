// loadgen.cpp — the load generator (loadgen.hpp): epoll, edge-triggered, non-blocking
// sockets, one event loop per client thread.
#include "harness/loadgen/loadgen.hpp"
#include "harness/loadgen/fd_limit.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <queue>
#include <thread>

namespace coopbench::loadgen {
namespace {

using ns_t = std::int64_t;

ns_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<ns_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

double cpu_of(clockid_t clk) {
    timespec ts{};
    if (clock_gettime(clk, &ts) != 0) return -1;
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// The pattern: kTable pseudo-random bytes plus room for the largest slice, so a message is
// one contiguous slice (no wrap). Request (c, s) starts at offset(c, s) < kTable.
constexpr std::size_t kTable = 1 << 16;

struct Pattern {
    std::vector<unsigned char> bytes;
    explicit Pattern(std::size_t size) : bytes(kTable + size) {
        std::uint64_t x = 0x9E3779B97F4A7C15ull;
        for (auto& b : bytes) {  // xorshift64 (Marsaglia 2003)
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            b = static_cast<unsigned char>(x >> 56);
        }
    }
    static std::size_t offset(std::uint32_t conn, std::uint64_t seq) {
        std::uint64_t h = (static_cast<std::uint64_t>(conn) << 40) ^ seq;
        h ^= h >> 33;
        h *= 0xff51afd7ed558ccdull;  // murmur3's finaliser
        h ^= h >> 33;
        return static_cast<std::size_t>(h % kTable);
    }
};

struct Conn {
    int fd = -1;
    std::uint32_t id = 0;
    std::uint64_t seq = 0;        // the request in flight (or next)
    std::size_t sent = 0, recvd = 0;
    bool busy = false;            // a request is in flight
    bool measured = false;        // the request in flight is a measured one
    ns_t start = 0;               // its latency's origin (send time or intended time)
    ns_t next_intended = 0;       // open mode: the next request's intended time
    const unsigned char* req = nullptr;   // the request in flight's bytes (req_len of them)
    const unsigned char* want = nullptr;  // the response it must get (want_len bytes)
    std::vector<unsigned char> rq, rs;    // rpc: this connection's request and reply in flight
    bool connecting = false;              // churn: the connect in flight
};

// The rpc protocol's seeds: kRpcSeeds of them, each with its answer, computed before the
// clock; request (c, s) takes seed offset(c, s) mod kRpcSeeds.
constexpr std::size_t kRpcSeeds = 64;
struct RpcTable {
    std::uint64_t seed[kRpcSeeds] = {};
    std::uint64_t answer[kRpcSeeds] = {};
    double ns_per_request = 0;  // the work timed here, on the client's CPU
};

// Shared — what the threads of one run share.
struct Shared {
    const Spec* spec = nullptr;
    const Pattern* pattern = nullptr;
    const RpcTable* rpc = nullptr;
    ns_t t0 = 0, t1 = 0;           // the measured window
    std::atomic<bool> stop{false};  // a failure: every thread ends
    std::mutex m;
    std::string failure;            // the first failure
    void fail(std::string why) {
        std::lock_guard<std::mutex> g(m);
        if (failure.empty()) failure = std::move(why);
        stop.store(true);
    }
};

struct ThreadResult {
    Histogram latency;
    std::uint64_t requests = 0, unfinished = 0, bytes = 0;
    double server_cpu0 = -1, server_cpu1 = -1, cpu0 = 0, cpu1 = 0;
    ns_t window_end = 0;
};

// connect_all — non-blocking connects, at most kPending unfinished at a time (a listen
// backlog is finite: a flood of SYNs beyond it waits for retransmission), bounded by 30 s.
std::string connect_all(std::vector<Conn>& conns, int port, std::uint32_t first_id) {
    constexpr std::size_t kPending = 256;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) return std::string("epoll_create1: ") + std::strerror(errno);
    std::size_t next = 0, pending = 0, done = 0;
    const ns_t deadline = now_ns() + 30 * ns_t{1000000000};
    std::string err;
    while (done < conns.size() && err.empty()) {
        while (next < conns.size() && pending < kPending) {
            Conn& c = conns[next];
            c.id = first_id + static_cast<std::uint32_t>(next);
            c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (c.fd < 0) {
                err = std::string("socket: ") + std::strerror(errno) + " (connection " + std::to_string(next) + ")";
                break;
            }
            const int one = 1;
            setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno != EINPROGRESS) {
                err = std::string("connect to 127.0.0.1:") + std::to_string(port) + ": " + std::strerror(errno);
                break;
            }
            epoll_event ev{};
            ev.events = EPOLLOUT;
            ev.data.u64 = next;
            epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
            ++next;
            ++pending;
        }
        if (!err.empty()) break;
        epoll_event evs[256];
        const int n = epoll_wait(ep, evs, 256, 100);
        for (int i = 0; i < n; ++i) {
            Conn& c = conns[evs[i].data.u64];
            int soerr = 0;
            socklen_t len = sizeof soerr;
            getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
            epoll_ctl(ep, EPOLL_CTL_DEL, c.fd, nullptr);
            --pending;
            ++done;
            if (soerr != 0) err = std::string("connect to 127.0.0.1:") + std::to_string(port) + ": " + std::strerror(soerr);
        }
        if (now_ns() > deadline && err.empty())
            err = "connect: " + std::to_string(conns.size() - done) + " of " + std::to_string(conns.size()) +
                  " connections not established after 30 s";
    }
    close(ep);
    return err;
}

// ---- idle connections (Spec::idle) ----

// slurp — a /proc file's text (read(2) in 64 KiB chunks: /proc/PID/net/tcp with 10,000
// connections is megabytes); empty when it cannot be read.
std::string slurp(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return text;
}

// server_fd_inodes — the socket inodes of process pid's fds (readlink "socket:[N]"), sorted.
std::vector<unsigned long> server_fd_inodes(pid_t pid) {
    std::vector<unsigned long> out;
    const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char link[64];
        const ssize_t n = readlink((dir + "/" + e->d_name).c_str(), link, sizeof link - 1);
        if (n <= 0) continue;
        link[n] = '\0';
        unsigned long ino = 0;
        if (std::sscanf(link, "socket:[%lu]", &ino) == 1) out.push_back(ino);
    }
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

// server_limit_nofile — the soft RLIMIT_NOFILE of process pid (/proc/PID/limits: "Max open
// files  SOFT  HARD  files"); 0 when unknown or unlimited.
std::uint64_t server_limit_nofile(pid_t pid) {
    const std::string text = slurp("/proc/" + std::to_string(pid) + "/limits");
    const auto at = text.find("Max open files");
    if (at == std::string::npos) return 0;
    unsigned long long soft = 0;
    if (std::sscanf(text.c_str() + at + 14, "%llu", &soft) != 1) return 0;  // "unlimited"
    return soft;
}

// IdleSet — the idle connections of one run: connected before the load, watched by an epoll
// set of their own (level-triggered: any readiness at all — a byte, the server's FIN, a
// reset — is a failure, since the client never sends on them), closed at the end.
struct IdleSet {
    std::vector<Conn> conns;
    int ep = -1;
    ~IdleSet() {
        for (auto& c : conns)
            if (c.fd >= 0) close(c.fd);
        if (ep >= 0) close(ep);
    }
    // check — wait up to timeout_ms for a sign of life on an idle connection: "" when none
    // came, else the failure.
    std::string check(int timeout_ms) {
        epoll_event ev[16];
        const int n = epoll_wait(ep, ev, 16, timeout_ms);
        if (n <= 0) return {};
        const Conn& c = conns[ev[0].data.u64];
        char b[64];
        const ssize_t r = ::recv(c.fd, b, sizeof b, MSG_DONTWAIT);
        const std::string which = "idle connection " + std::to_string(c.id) + " (one that never sends)";
        if (r > 0) return "self-check failed: the server sent " + std::to_string(r) + " bytes on " + which;
        if (r == 0) return "self-check failed: " + which + " closed by the server";
        return "self-check failed: " + which + ": " + std::strerror(errno);
    }
};

// client_ports — the local (client) ports of connections `conns`, sorted.
std::vector<int> client_ports(const std::vector<Conn>& conns) {
    std::vector<int> ports;
    for (const Conn& c : conns) {
        sockaddr_in a{};
        socklen_t len = sizeof a;
        getsockname(c.fd, reinterpret_cast<sockaddr*>(&a), &len);
        ports.push_back(ntohs(a.sin_port));
    }
    std::sort(ports.begin(), ports.end());
    return ports;
}

// silent — "" while the server has neither sent anything nor closed on any of `conns` (the
// client has sent nothing yet, so any readiness is one of those), else the failure.
std::string silent(const std::vector<Conn>& conns) {
    std::vector<pollfd> pf(conns.size());
    for (std::size_t i = 0; i < conns.size(); ++i) pf[i] = {conns[i].fd, POLLIN | POLLRDHUP, 0};
    if (::poll(pf.data(), pf.size(), 0) <= 0) return {};
    for (std::size_t i = 0; i < pf.size(); ++i) {
        if (pf[i].revents == 0) continue;
        char b[64];
        const ssize_t r = ::recv(pf[i].fd, b, sizeof b, MSG_DONTWAIT | MSG_PEEK);
        const std::string which = "connection " + std::to_string(conns[i].id);
        if (r > 0) return "self-check failed: the server sent " + std::to_string(r) + " bytes on " + which + " before any request";
        if (r == 0) return "the server closed " + which + " before the load began";
        if (errno != EAGAIN && errno != EWOULDBLOCK) return which + ": " + std::strerror(errno);
    }
    return {};
}

// wait_held — wait (at most 30 s) until the server, process spec.server_pid, holds every one
// of `conns` (server_sockets_of, "holds" as open_idle reads it below); "" or the failure, at once
// when `no_sign` reports one: it checks that the server has neither written on nor closed any of
// them (a server that could not serve a connection, a refused spawn, closes it: that connection
// is never held), and paces the wait. `what` names the connections in the failure; `held_s`:
// how long it took.
std::string wait_held(const Spec& spec, const std::vector<Conn>& conns, const char* what,
                      const std::function<std::string()>& no_sign, double& held_s) {
    const std::vector<int> ports = client_ports(conns);
    const std::string tcp = "/proc/" + std::to_string(spec.server_pid) + "/net/tcp";
    const ns_t connected = now_ns();
    for (const ns_t until = connected + 30 * ns_t{1000000000};;) {
        const std::size_t held = server_sockets_of(slurp(tcp), spec.port, ports, server_fd_inodes(spec.server_pid));
        if (held == conns.size()) break;
        if (now_ns() > until)
            return "the server accepted " + std::to_string(held) + " of " + std::to_string(conns.size()) + " " +
                   what + " in 30 s";
        if (auto err = no_sign(); !err.empty()) return err;
    }
    held_s = static_cast<double>(now_ns() - connected) * 1e-9;
    return {};
}
// wait_held for the load's own connections, before any request: silent() every 5 ms.
std::string wait_held(const Spec& spec, const std::vector<Conn>& conns, double& held_s) {
    return wait_held(spec, conns, "connections", [&conns]() {
        auto err = silent(conns);
        if (err.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return err;
    }, held_s);
}

// open_idle — connect spec.idle connections that send nothing; sample the server's RSS
// before, and after the server holds them all and its RSS has settled. "" or the failure.
//
// "Holds them all" is read from the kernel, not from anything the server says: an idle
// connection counts when its server-side socket (the /proc/PID/net/tcp entry from the
// server's port to the connection's client port) is one of the server process's fds. A
// connection still in the listen backlog has no socket file, so nothing short of accept(2)
// counts; neither does an answer on another connection (a server with a listener per thread,
// as the epoll ceiling's SO_REUSEPORT ones, may answer one before another's backlog is
// drained). What a server allocates for a connection after its accept — Go's buffer at the
// goroutine's first Read, a thread's stack as it first runs — is then waited for: the RSS is
// read every 100 ms until it grows by at most max(64 KiB, 1 % of its growth so far) in one
// interval (bounded by 5 s; idle_settle_ms says how long it took).
std::string open_idle(const Spec& spec, IdleSet& set, Result& res) {
    const pid_t pid = spec.server_pid;
    if (pid <= 0) return "bad load: idle connections need the server's pid (--server-pid): its RSS is measured";
    res.rss_before_kib = rss_kib(pid);
    if (res.rss_before_kib < 0) return "cannot read the server's RSS (/proc/" + std::to_string(pid) + "/smaps_rollup)";
    set.conns.resize(spec.idle);
    if (auto err = connect_all(set.conns, spec.port, spec.connections); !err.empty()) return err;
    set.ep = epoll_create1(EPOLL_CLOEXEC);
    if (set.ep < 0) return std::string("epoll_create1: ") + std::strerror(errno);
    for (std::size_t i = 0; i < set.conns.size(); ++i) {
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;  // level-triggered: seen at every check
        ev.data.u64 = i;
        epoll_ctl(set.ep, EPOLL_CTL_ADD, set.conns[i].fd, &ev);
    }
    const ns_t connected = now_ns();
    if (auto err = wait_held(spec, set.conns, "idle connections", [&set]() { return set.check(20); },
                             res.idle_accept_s);
        !err.empty())
        return err;
    std::int64_t prev = rss_kib(pid);
    for (const ns_t until = now_ns() + 5 * ns_t{1000000000}; now_ns() < until;) {
        if (auto err = set.check(100); !err.empty()) return err;
        const std::int64_t cur = rss_kib(pid);
        const std::int64_t slack = std::max<std::int64_t>(64, (cur - res.rss_before_kib) / 100);
        const bool settled = cur - prev <= slack;
        prev = cur;
        if (settled) break;
    }
    res.rss_after_kib = prev;
    res.idle_settle_s = static_cast<double>(now_ns() - connected) * 1e-9;
    if (res.rss_after_kib < 0) return "cannot read the server's RSS (/proc/" + std::to_string(pid) + "/smaps_rollup)";
    return {};
}

void pin_to(const std::vector<int>& cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    sched_setaffinity(0, sizeof set, &set);  // best effort: a refusal leaves it unpinned
}

// client_thread — one event loop over conns. Thread 0 also samples the CPU clocks at the
// window's edges.
void client_thread(Shared& sh, std::vector<Conn>& conns, double rate_share, std::uint64_t max_share, bool sampler,
                   clockid_t server_clock, ThreadResult& out) {
    const Spec& spec = *sh.spec;
    const auto& pat = sh.pattern->bytes;
    const bool http = spec.protocol == Protocol::http;
    const bool rpc = spec.protocol == Protocol::rpc;
    const std::size_t req_len = http ? kHttpRequest.size() : spec.size;
    const std::size_t want_len = http ? kHttpResponse.size() : spec.size;
    const auto* http_req = reinterpret_cast<const unsigned char*>(kHttpRequest.data());
    const auto* http_resp = reinterpret_cast<const unsigned char*>(kHttpResponse.data());
    const char* what = http ? "response" : rpc ? "reply" : "echoed";  // the self-check's word
    const bool open = spec.mode == Mode::open;
    const ns_t period = open && rate_share > 0
                            ? static_cast<ns_t>(std::llround(1e9 * static_cast<double>(conns.size()) / rate_share))
                            : 0;
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0) {
        sh.fail(std::string("epoll_create1: ") + std::strerror(errno));
        return;
    }
    const bool churn = spec.churn;
    for (std::size_t i = 0; i < conns.size(); ++i) {
        if (conns[i].fd < 0) continue;  // churn: each request connects anew
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;  // registered once (Go, mio)
        ev.data.u64 = i;
        epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev);
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(spec.port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // dial — churn: a new non-blocking socket connecting to the server, registered (once:
    // its close removes it from the epoll set, epoll(7) Q6); false on a failure (recorded).
    auto dial = [&](Conn& c) -> bool {
        c.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c.fd < 0) {
            sh.fail(std::string("socket: ") + std::strerror(errno));
            return false;
        }
        const int one = 1;
        setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
        ev.data.u64 = static_cast<std::uint64_t>(&c - conns.data());
        epoll_ctl(ep, EPOLL_CTL_ADD, c.fd, &ev);
        c.connecting = true;
        if (connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
            c.connecting = false;
            return true;
        }
        if (errno == EINPROGRESS) return true;  // EPOLLOUT says when it is done
        const int e = errno;
        sh.fail(std::string(e == EADDRNOTAVAIL ? "system limit: " : "") + "connect to 127.0.0.1:" +
                std::to_string(spec.port) + ": " + std::strerror(e) +
                (e == EADDRNOTAVAIL ? " (the loopback's ephemeral ports are used up: see net.ipv4.tcp_tw_reuse)" : ""));
        return false;
    };
    std::vector<unsigned char> scratch(want_len);
    ns_t window_end = sh.t1;
    bool in_window = false, after_window = false, extended = false;
    std::uint64_t started_measured = 0;
    std::size_t busy = 0;
    const ns_t grace = static_cast<ns_t>(spec.grace_s * 1e9);
    // Open mode: connections waiting for their next intended time, earliest first.
    using Slot = std::pair<ns_t, std::size_t>;
    std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> waiting;

    auto describe = [&](const Conn& c) {
        return "connection " + std::to_string(c.id) + ", request " + std::to_string(c.seq);
    };
    // push — send what is left of c's request; false on a failure (recorded).
    auto push = [&](Conn& c) -> bool {
        while (c.sent < req_len) {
            const ssize_t w = ::send(c.fd, c.req + c.sent, req_len - c.sent, MSG_NOSIGNAL);
            if (w > 0) {
                c.sent += static_cast<std::size_t>(w);
                continue;
            }
            if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // EPOLLOUT resumes it
            if (w < 0 && errno == EINTR) continue;
            sh.fail("self-check failed: requests sent = the server closed " + describe(c) + " (" +
                    std::strerror(errno) + ")");
            return false;
        }
        return true;
    };
    // open_waits — open mode: no intended send time of this thread has fallen in the window
    // yet (a rate below one request per window and thread, as a rate calibrated on a loaded
    // machine can be), so the window stays open for the next one, at most `grace` more, as the
    // closed loop's does (edge below).
    auto open_waits = [&](ns_t origin) { return started_measured == 0 && origin < sh.t1 + grace; };
    auto begin = [&](Conn& c, ns_t origin) -> bool {
        if (http) {
            c.req = http_req;
            c.want = http_resp;
        } else if (rpc) {
            // The pattern's slice, its first 16 bytes the work; the reply the same with the
            // answer over bytes 0-7.
            const std::size_t off = Pattern::offset(c.id, c.seq);
            const std::size_t k = off % kRpcSeeds;
            c.rq.assign(pat.begin() + static_cast<std::ptrdiff_t>(off),
                        pat.begin() + static_cast<std::ptrdiff_t>(off + req_len));
            store_le64(c.rq.data(), spec.work_rounds);
            store_le64(c.rq.data() + 8, sh.rpc->seed[k]);
            c.rs = c.rq;
            store_le64(c.rs.data(), sh.rpc->answer[k]);
            c.req = c.rq.data();
            c.want = c.rs.data();
        } else {
            c.req = c.want = pat.data() + Pattern::offset(c.id, c.seq);
        }
        c.sent = c.recvd = 0;
        c.busy = true;
        ++busy;
        // Open: the intended time decides (a backlog sent after the window still counts);
        // closed: the send time.
        c.measured = open ? (origin >= sh.t0 && (origin < window_end || open_waits(origin)))
                          : (in_window && !after_window);
        // Open, the window extended for its first send time: the window ends just after it,
        // so that the one request it waited for is the one it measures.
        if (c.measured && open && origin >= window_end) window_end = origin + 1;
        if (c.measured) ++started_measured;
        c.start = origin;
        if (churn && c.fd < 0) {
            if (!dial(c)) return false;
            if (c.connecting) return true;  // the request goes when the connect is done
        }
        return push(c);
    };
    // may_start — whether a request with this origin is still started.
    auto may_start = [&](ns_t origin) {
        return open ? (origin < window_end || open_waits(origin)) : !after_window;
    };
    auto schedule_next = [&](Conn& c, ns_t now) -> bool {
        if (!open) {
            if (!may_start(now)) return true;
            return begin(c, now);
        }
        const ns_t intended = c.next_intended;
        c.next_intended += period;
        if (!may_start(intended)) return true;
        if (intended <= now) return begin(c, intended);
        c.start = intended;
        waiting.push({intended, static_cast<std::size_t>(&c - conns.data())});
        return true;
    };
    auto edge = [&](ns_t now) {
        if (!in_window && now >= sh.t0) {
            in_window = true;
            if (sampler) {
                out.server_cpu0 = server_clock != clockid_t{} ? cpu_of(server_clock) : -1;
                out.cpu0 = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
            }
        }
        // A closed-loop window that ends before any request of it started stays open until one
        // starts, for at most `grace` more: every connection was still busy with a request sent
        // before the window (a server not scheduled for the whole window, as on a loaded
        // machine with a window of 100 ms), and a rate needs one measured request; a server
        // that answers nothing in that time is still a failed run ("measured requests = 0").
        // The window's end is then the moment it closed, so the rate's time includes the wait.
        // Open mode likewise, while no intended send time of the window has come (open_waits).
        const bool waits_for_one = started_measured == 0 && now < sh.t1 + grace;
        if (waits_for_one && now >= window_end) extended = true;
        if (in_window && !after_window &&
            ((now >= window_end && !waits_for_one) || (max_share > 0 && started_measured >= max_share))) {
            after_window = true;
            // Open: begin() has set the end just after the send time it waited for.
            window_end = extended && !open ? now : std::min(window_end, now);
            if (sampler) {
                out.server_cpu1 = server_clock != clockid_t{} ? cpu_of(server_clock) : -1;
                out.cpu1 = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
            }
        }
    };

    const ns_t start_all = now_ns();
    for (std::size_t i = 0; i < conns.size() && !sh.stop.load(std::memory_order_relaxed); ++i) {
        Conn& c = conns[i];
        if (open) {
            // Phases spread evenly: the thread's k-th request overall is intended at k / rate.
            c.next_intended = start_all + static_cast<ns_t>(i) * period / static_cast<ns_t>(conns.size());
            schedule_next(c, start_all);
        } else if (!begin(c, start_all)) {
            break;
        }
    }
    epoll_event evs[512];
    while (!sh.stop.load(std::memory_order_relaxed)) {
        ns_t now = now_ns();
        edge(now);
        // Open mode: send what is due.
        while (!waiting.empty() && waiting.top().first <= now) {
            Conn& c = conns[waiting.top().second];
            waiting.pop();
            // A send time queued while the window waited for its first one, past the end it
            // then got: not measured and not sent (the window is over).
            if (after_window && c.start >= window_end) continue;
            if (!begin(c, c.start)) break;
        }
        if (after_window && busy == 0 && waiting.empty()) break;
        if (after_window && now > window_end + grace) {
            if (!open) {
                sh.fail("self-check failed: responses = " + std::to_string(busy) + " requests unanswered " +
                        std::to_string(spec.grace_s) + " s after the window (the server stopped answering)");
                break;
            }
            for (auto& c : conns)
                if (c.busy && c.measured) {
                    out.latency.record(static_cast<std::uint64_t>(now - c.start));  // a lower bound
                    ++out.requests;
                    ++out.unfinished;
                }
            while (!waiting.empty()) {
                const ns_t intended = waiting.top().first;
                waiting.pop();
                if (intended >= sh.t0 && intended < window_end) {
                    out.latency.record(static_cast<std::uint64_t>(now - intended));
                    ++out.requests;
                    ++out.unfinished;
                }
            }
            break;
        }
        // Sleep until the next due send or window edge, at most 50 ms (to see `stop`).
        ns_t wake = now + 50'000'000;
        if (!waiting.empty()) wake = std::min(wake, waiting.top().first);
        if (!in_window) wake = std::min(wake, sh.t0);
        else if (!after_window && now < window_end) wake = std::min(wake, window_end);
        else if (!after_window) wake = std::min(wake, sh.t1 + grace);  // extended: the next reply or the bound
        const ns_t wait = std::max<ns_t>(0, wake - now);
        timespec ts{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
        const int n = epoll_pwait2(ep, evs, 512, &ts, nullptr);
        if (n < 0 && errno != EINTR) {
            sh.fail(std::string("epoll_pwait2: ") + std::strerror(errno));
            break;
        }
        now = now_ns();
        for (int i = 0; i < n; ++i) {
            Conn& c = conns[evs[i].data.u64];
            if (!c.busy) {
                // Bytes while nothing is asked for: the server sent more than it was sent.
                if (evs[i].events & EPOLLIN) {
                    const ssize_t r = ::recv(c.fd, scratch.data(), want_len, MSG_DONTWAIT);
                    if (r > 0) {
                        sh.fail(std::string("self-check failed: ") + what + " bytes = " + std::to_string(r) +
                                " more than were asked for on connection " + std::to_string(c.id));
                        break;
                    }
                    if (r == 0) {
                        sh.fail("self-check failed: connection " + std::to_string(c.id) +
                                " closed by the server between requests");
                        break;
                    }
                }
                continue;
            }
            if (c.connecting) {
                if (!(evs[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) continue;
                int soerr = 0;
                socklen_t len = sizeof soerr;
                getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
                if (soerr != 0) {
                    sh.fail(std::string(soerr == EADDRNOTAVAIL ? "system limit: " : "") + "connect to 127.0.0.1:" +
                            std::to_string(spec.port) + ": " + std::strerror(soerr) + " (" + describe(c) + ")");
                    break;
                }
                c.connecting = false;
                if (!push(c)) break;
            }
            if ((evs[i].events & EPOLLOUT) && c.sent < req_len && !push(c)) break;
            while (c.busy && c.recvd < want_len) {
                const ssize_t r = ::recv(c.fd, scratch.data(), want_len - c.recvd, 0);
                if (r > 0) {
                    const auto got = static_cast<std::size_t>(r);
                    // An echo cannot run ahead of what was sent; an HTTP response cannot
                    // begin before the request's head has ended.
                    const std::size_t allowed = http ? (c.sent == req_len ? want_len : 0) : c.sent;
                    if (c.recvd + got > allowed) {
                        sh.fail(std::string("self-check failed: ") + what + " bytes = " + std::to_string(c.recvd + got) +
                                " received when " + std::to_string(c.sent) + " of " + std::to_string(req_len) +
                                " were sent (" + describe(c) + ")");
                        break;
                    }
                    const unsigned char* want = c.want + c.recvd;
                    if (std::memcmp(scratch.data(), want, got) != 0) {
                        std::size_t k = 0;
                        while (scratch[k] == want[k]) ++k;
                        char buf[160];
                        std::snprintf(buf, sizeof buf, "self-check failed: %s byte %zu of %s = 0x%02x, expected 0x%02x",
                                      what, c.recvd + k, describe(c).c_str(), scratch[k], want[k]);
                        sh.fail(buf);
                        break;
                    }
                    c.recvd += got;
                    out.bytes += got;
                    // A read shorter than asked drained the socket (tokio's PollEvented rule),
                    // unless this edge also brought the peer's FIN (EPOLLRDHUP): then no
                    // further edge will come, and only reading on sees the end.
                    if (c.recvd < want_len && got < want_len - (c.recvd - got) &&
                        !(evs[i].events & (EPOLLRDHUP | EPOLLHUP)))
                        break;
                    continue;
                }
                if (r == 0) {
                    sh.fail(std::string("self-check failed: ") + what + " bytes = " + std::to_string(c.recvd) + " of " +
                            std::to_string(want_len) + ", then the server closed " + describe(c));
                    break;
                }
                if (errno == EAGAIN || errno == EWOULDBLOCK) break;
                if (errno == EINTR) continue;
                sh.fail(std::string("self-check failed: ") + what + " bytes = " + std::to_string(c.recvd) + " of " +
                        std::to_string(want_len) + ", then " + std::strerror(errno) + " on " + describe(c));
                break;
            }
            if (sh.stop.load(std::memory_order_relaxed)) break;
            if (c.busy && c.recvd == want_len) {
                c.busy = false;
                --busy;
                if (c.measured) {
                    out.latency.record(static_cast<std::uint64_t>(now - c.start));
                    ++out.requests;
                }
                ++c.seq;
                if (churn) {  // one request a connection: close, and the next one dials
                    close(c.fd);
                    c.fd = -1;
                }
                edge(now);
                if (!schedule_next(c, now)) break;
            }
        }
    }
    // The end of a clean run: every request answered. Each connection is half-closed
    // (shutdown(2), SHUT_WR) and read to its end: a server must close it without a byte more
    // (an echo of bytes never sent, an HTTP response to no request — which the in-order
    // check cannot see, each response being the same bytes — fails the run). A server that
    // does not close within the grace period is not waited for longer.
    if (!churn && !sh.stop.load(std::memory_order_relaxed) && busy == 0 && waiting.empty()) {
        std::vector<char> ended(conns.size(), 0);
        std::size_t left = conns.size();
        auto drain = [&](std::size_t i) {
            while (!ended[i]) {
                const ssize_t r = ::recv(conns[i].fd, scratch.data(), want_len, MSG_DONTWAIT);
                if (r > 0) {
                    sh.fail(std::string("self-check failed: ") + what + " bytes = " + std::to_string(r) +
                            " more than were asked for on connection " + std::to_string(conns[i].id) +
                            " (after its last request)");
                    return;
                }
                if (r < 0 && errno == EINTR) continue;
                if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
                ended[i] = 1;  // the server's FIN (0), or a reset: nothing more can come
                --left;
            }
        };
        for (auto& c : conns) ::shutdown(c.fd, SHUT_WR);
        for (std::size_t i = 0; i < conns.size() && !sh.stop.load(std::memory_order_relaxed); ++i) drain(i);
        const ns_t until = now_ns() + grace;
        for (ns_t now = now_ns(); left > 0 && now < until && !sh.stop.load(std::memory_order_relaxed); now = now_ns()) {
            const ns_t wait = std::min<ns_t>(until - now, 50'000'000);
            timespec ts{static_cast<time_t>(wait / 1000000000), static_cast<long>(wait % 1000000000)};
            const int n = epoll_pwait2(ep, evs, 512, &ts, nullptr);
            for (int i = 0; i < n && !sh.stop.load(std::memory_order_relaxed); ++i) drain(evs[i].data.u64);
        }
    }
    out.window_end = window_end;
    if (sampler && out.server_cpu1 < 0 && out.cpu1 == 0) {  // the window never closed (a failure)
        out.cpu1 = cpu_of(CLOCK_PROCESS_CPUTIME_ID);
    }
    close(ep);
}

}  // namespace

std::int64_t rss_kib_of(const std::string& text) {
    for (const char* key : {"Rss:", "VmRSS:"}) {
        std::size_t at = 0;
        for (; (at = text.find(key, at)) != std::string::npos; ++at)
            if (at == 0 || text[at - 1] == '\n') break;  // a line's own key, not "SwapPss:" etc.
        if (at == std::string::npos) continue;
        long long kib = -1;
        if (std::sscanf(text.c_str() + at + std::strlen(key), "%lld", &kib) == 1 && kib >= 0) return kib;
    }
    return -1;
}

std::int64_t rss_kib(pid_t pid) {
    const std::string base = "/proc/" + std::to_string(pid);
    std::int64_t kib = rss_kib_of(slurp(base + "/smaps_rollup"));
    if (kib < 0) kib = rss_kib_of(slurp(base + "/status"));
    return kib;
}

double rss_per_idle_kib(std::int64_t before, std::int64_t after, unsigned idle) {
    if (before < 0 || after < 0 || idle == 0) return -1;
    return static_cast<double>(after - before) / idle;
}

std::size_t server_sockets_of(const std::string& tcp_text, int server_port, const std::vector<int>& ports,
                              const std::vector<unsigned long>& server_inodes) {
    std::size_t n = 0;
    std::size_t at = tcp_text.find('\n');  // the header line
    while (at != std::string::npos && at + 1 < tcp_text.size()) {
        const char* line = tcp_text.c_str() + at + 1;
        at = tcp_text.find('\n', at + 1);
        // "  sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt   uid  timeout inode"
        unsigned lport = 0, rport = 0;
        unsigned long inode = 0;
        if (std::sscanf(line, " %*u: %*x:%x %*x:%x %*x %*x:%*x %*x:%*x %*x %*u %*u %lu", &lport, &rport, &inode) != 3)
            continue;
        if (static_cast<int>(lport) != server_port || inode == 0) continue;
        if (!std::binary_search(ports.begin(), ports.end(), static_cast<int>(rport))) continue;
        if (std::binary_search(server_inodes.begin(), server_inodes.end(), inode)) ++n;
    }
    return n;
}

Result run(const Spec& spec) {
    Result res;
    res.offered_rate = spec.mode == Mode::open ? spec.rate : 0;
    if (spec.protocol == Protocol::rpc && spec.size < kRpcHeader) {
        res.check = "bad load: rpc messages carry a 16-byte header: size must be at least 16";
        return res;
    }
    if (spec.connections == 0 || (spec.size == 0 && spec.protocol == Protocol::echo) || spec.duration_s <= 0 || spec.threads == 0) {
        res.check = "bad load: connections, size, duration and threads must be above 0";
        return res;
    }
    if (spec.mode == Mode::open && !(spec.rate > 0)) {
        res.check = "bad load: open loop needs a rate above 0";
        return res;
    }
    // Every connection is an fd: the soft limit raised to the hard one (fd_limit.hpp).
    raise_fd_limit();
    rlimit nofile{};
    const std::uint64_t fds = std::uint64_t{spec.connections} + spec.idle;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && fds + 64 > nofile.rlim_cur) {
        res.check = "system limit: " + std::to_string(fds) +
                    " connections need more file descriptors than RLIMIT_NOFILE allows the client (" +
                    std::to_string(nofile.rlim_cur) + ")";
        return res;
    }
    // The server holds one fd per connection, and a few of its own (listeners, its poller,
    // pipes): refused before a connect when its soft limit cannot hold them.
    if (spec.idle > 0 && spec.server_pid > 0) {
        const std::uint64_t limit = server_limit_nofile(spec.server_pid);
        if (limit > 0 && fds + 32 > limit) {
            res.check = "system limit: " + std::to_string(spec.idle) + " idle + " + std::to_string(spec.connections) +
                        " connections need more file descriptors than RLIMIT_NOFILE allows the server (" +
                        std::to_string(limit) + ")";
            return res;
        }
    }
    pin_to(spec.cpus);
    IdleSet idle;
    if (spec.idle > 0) {
        if (auto err = open_idle(spec, idle, res); !err.empty()) {
            res.check = err;
            return res;
        }
    }
    const Pattern pattern(spec.protocol == Protocol::http ? 0 : spec.size);
    std::vector<Conn> conns(spec.connections);
    for (std::size_t i = 0; i < conns.size(); ++i) conns[i].id = static_cast<std::uint32_t>(i);
    if (auto err = spec.churn ? std::string() : connect_all(conns, spec.port, 0); !err.empty()) {
        for (auto& c : conns)
            if (c.fd >= 0) close(c.fd);
        res.check = err;
        return res;
    }
    if (spec.held_first && spec.server_pid > 0 && !spec.churn) {
        if (auto err = wait_held(spec, conns, res.held_s); !err.empty()) {
            for (auto& c : conns)
                if (c.fd >= 0) close(c.fd);
            res.check = err;
            return res;
        }
    }
    RpcTable rpc;
    if (spec.protocol == Protocol::rpc) {
        const ns_t a = now_ns();
        std::uint64_t x = 0x2545F4914F6CDD1Dull;
        for (std::size_t k = 0; k < kRpcSeeds; ++k) {
            x ^= x << 13;  // xorshift64 (Marsaglia 2003)
            x ^= x >> 7;
            x ^= x << 17;
            rpc.seed[k] = x;
            rpc.answer[k] = rpc_work(x, spec.work_rounds);
        }
        rpc.ns_per_request = static_cast<double>(now_ns() - a) / kRpcSeeds;
        res.work_ns = rpc.ns_per_request;
    }
    clockid_t server_clock{};
    if (spec.server_pid > 0 && clock_getcpuclockid(spec.server_pid, &server_clock) != 0) server_clock = clockid_t{};
    Shared sh;
    sh.spec = &spec;
    sh.pattern = &pattern;
    sh.rpc = &rpc;
    const unsigned nt = std::min<unsigned>(spec.threads, spec.connections);
    sh.t0 = now_ns() + static_cast<ns_t>(spec.warmup_s * 1e9);
    sh.t1 = sh.t0 + static_cast<ns_t>(spec.duration_s * 1e9);
    std::vector<std::vector<Conn>> parts(nt);
    for (std::size_t i = 0; i < conns.size(); ++i) parts[i % nt].push_back(conns[i]);
    std::vector<ThreadResult> outs(nt);
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < nt; ++t)
        threads.emplace_back([&, t] {
            client_thread(sh, parts[t], spec.rate * static_cast<double>(parts[t].size()) / spec.connections,
                          spec.max_requests / nt, false, server_clock, outs[t]);
        });
    client_thread(sh, parts[0], spec.rate * static_cast<double>(parts[0].size()) / spec.connections,
                  spec.max_requests / nt + (spec.max_requests ? spec.max_requests % nt : 0), true, server_clock,
                  outs[0]);
    for (auto& th : threads) th.join();
    for (auto& p : parts)
        for (auto& c : p)
            if (c.fd >= 0) close(c.fd);
    // The window's end: the earliest of the threads' own (max_requests ends a thread's early;
    // a closed-loop window with no request started in it ends late, when one has: see edge()).
    ns_t window_end = 0;
    for (auto& o : outs) {
        res.latency.merge(o.latency);
        res.requests += o.requests;
        res.unfinished += o.unfinished;
        res.bytes_checked += o.bytes;
        if (o.window_end > 0) window_end = window_end == 0 ? o.window_end : std::min(window_end, o.window_end);
    }
    if (window_end == 0) window_end = sh.t1;
    res.seconds = static_cast<double>(window_end - sh.t0) * 1e-9;
    if (outs[0].server_cpu0 >= 0 && outs[0].server_cpu1 >= 0) res.server_cpu_s = outs[0].server_cpu1 - outs[0].server_cpu0;
    res.client_cpu_s = outs[0].cpu1 - outs[0].cpu0;
    if (!sh.failure.empty()) {
        res.check = sh.failure;
        return res;
    }
    // The idle connections, held open through the window: still open, still silent.
    if (spec.idle > 0) {
        if (auto err = idle.check(0); !err.empty()) {
            res.check = err;
            return res;
        }
    }
    if (res.requests == 0) {
        res.check = spec.mode == Mode::open
                        ? "self-check failed: measured requests = 0 (no send time of the offered rate, " +
                              std::to_string(spec.rate) + "/s, fell in the window or the grace after it)"
                        : std::string("self-check failed: measured requests = 0 (nothing answered in the window)");
        return res;
    }
    res.ok = true;
    res.check = "passed";
    return res;
}

std::string result_json(const Result& r, const Spec& spec) {
    nlohmann::json j;
    auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
    j["ok"] = r.ok;
    j["check"] = r.check;
    j["mode"] = spec.mode == Mode::open ? "open" : "closed";
    j["connections"] = spec.connections;
    j["size"] = spec.size;
    j["protocol"] = spec.protocol == Protocol::http ? "http" : spec.protocol == Protocol::rpc ? "rpc" : "echo";
    j["requests"] = r.requests;
    j["unfinished"] = r.unfinished;
    j["seconds"] = r.seconds;
    j["rate"] = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0;
    j["offered_rate"] = r.offered_rate;
    j["p50_us"] = us(r.latency.percentile(0.50));
    j["p99_us"] = us(r.latency.percentile(0.99));
    j["p999_us"] = us(r.latency.percentile(0.999));
    j["max_us"] = us(r.latency.max());
    j["mean_us"] = r.latency.mean() / 1000.0;
    j["percentile_error"] = Histogram::kRelativeError;
    j["server_cpu_s"] = r.server_cpu_s;
    j["client_cpu_s"] = r.client_cpu_s;
    j["client_threads"] = std::min<unsigned>(spec.threads, spec.connections);
    j["bytes_checked"] = r.bytes_checked;
    if (spec.idle > 0) {
        j["idle"] = spec.idle;
        j["rss_before_kib"] = r.rss_before_kib;
        j["rss_after_kib"] = r.rss_after_kib;
        j["rss_per_idle_kib"] = rss_per_idle_kib(r.rss_before_kib, r.rss_after_kib, spec.idle);
    }
    return j.dump();
}

}  // namespace coopbench::loadgen
