// churn.hpp — the I/O workload `churn`: connection churn (io-anchors review §5.2 #6: "connect
// → 1 × 64 B request/response → close, as fast as possible, 64 parallel connectors"). The
// load generator's N connectors each connect to the backend's echo server, send one message
// of `size` bytes, read its echo (every byte checked), close, and connect again; what it
// measures is the server's accept, registration with its poller, the spawn of a thread,
// goroutine or task per connection, and their teardown. The servers are echo's, unchanged
// (echo.hpp; each external program's echo); a C++ backend's acceptor joins each ended
// connection thread soon after it ends (ConnThreads), as a server that lives long must.
//
// The client closes first, so the TIME_WAIT sockets are the client's: on loopback Linux
// reuses them for new connects (net.ipv4.tcp_tw_reuse, default 2: loopback only; ip-sysctl
// docs), else the ephemeral ports run out and the point is refused ("system limit: connect
// ... Cannot assign requested address").
//
// value: connections/s (each one request) over the measured window; counters: as echo's, the
// latency from the connect() call to the echo's last byte.
#pragma once

#include "workloads/io/echo.hpp"

namespace coopbench {

struct Churn : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "churn";
        w.origin = "io-anchors review §5.2 #6 (connection churn: connect, one 64 B request, close; 64 connectors)";
        w.description = "TCP connection churn, closed loop: each connector connects, sends one message, reads its echo, closes";
        w.unit = "connections/s";
        w.io = true;
        w.params = io::common_params("64", "64");
        w.params[1].help = "parallel connectors (each with one connection at a time)";
        w.plans["tiny"] = {{{"connections", values({4})}, {"duration_ms", values({100})}, {"warmup_ms", values({20})}}};
        w.plans["quick"] = {{{"connections", values({1, 64})}, {"duration_ms", values({500})}, {"warmup_ms", values({100})}}};
        w.plans["anchors"] = {{{"connections", values({64})}, {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::closed_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return io::run_server<B>("churn", io::Protocol::echo, ctx);
    }
};

}  // namespace coopbench
