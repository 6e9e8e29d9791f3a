// rpc.hpp — the I/O workloads `rpc` (closed loop) and `rpc-open` (open loop, wrk2's method):
// an echo server that does CPU work for each request before it replies (io-anchors review
// §5.2 #4: "the server spins {1, 10, 100} µs per request, then replies"; what it exposes:
// fairness between connections, and the effect of a LIFO slot — tokio's and Go's runnext —
// when a handler holds its worker).
//
// The protocol (harness/loadgen/protocol.hpp, docs/io-workloads.md): echo's fixed-size
// messages (`size`, 128 B), bytes 0-7 a round count R = the parameter `work`, bytes 8-15 a
// seed S; the server computes rpc_work(S, R) — R dependent rounds of an LCG step and an
// xorshift, the same loop in every language — writes it over bytes 0-7 and sends the message
// back. The work is a count of rounds, not a time: a server preempted in the middle of it
// (a thread per connection on a busy CPU) still does all of it, and every backend does the
// same work. The client knows every answer (a table of 64 seeds answered before the clock),
// so a server that skips or garbles the work fails the byte check; with --inject-fault the
// server flips byte 0 of its first reply. The counter `work_us` is one request's work timed
// on the load generator's CPU (about 1.6 ns a round on the machine of docs/io-workloads.md).
//
// value: rpc — requests/s; rpc-open — p99 latency (µs). counters: as echo's, plus work_us.
#pragma once

#include "workloads/io/echo.hpp"

namespace coopbench {

namespace io {
inline std::vector<ParamSpec> rpc_params() {
    auto p = common_params("128", "100");
    p.push_back({"work", "6000",
                 "rounds of the server's work per request (rpc_work; about 1.6 ns a round here: 600, 6000, 60000 = 1, 10, 100 us)"});
    return p;
}
}  // namespace io

struct Rpc : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "rpc";
        w.origin = "io-anchors review §5.2 #4 (RPC with CPU work: 128 B requests, 1/10/100 us of work each)";
        w.description = "TCP request/reply with CPU work, closed loop: the server computes `work` rounds per request, then replies";
        w.unit = "requests/s";
        w.io = true;
        w.params = io::rpc_params();
        w.plans["tiny"] = {{{"connections", values({10})}, {"work", values({600})}, {"duration_ms", values({100})},
                            {"warmup_ms", values({20})}}};
        w.plans["quick"] = {{{"connections", values({100})}, {"work", values({600, 6000, 60000})},
                             {"duration_ms", values({500})}, {"warmup_ms", values({100})}}};
        w.plans["anchors"] = {{{"connections", values({100})}, {"work", values({600, 6000, 60000})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::closed_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (ctx.size("size") < loadgen::kRpcHeader) return Outcome::failed("rpc: size must be at least 16 (the work's header)");
        return io::run_server<B>("rpc", io::Protocol::rpc, ctx);
    }
};

struct RpcOpen : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "rpc-open";
        w.origin = "io-anchors review §5.2 #4 at a fixed offered rate (wrk2's method, latency from the intended send time)";
        w.description =
            "TCP request/reply with CPU work, open loop: a fixed offered rate, latency from each request's intended send time";
        w.unit = "us (p99)";
        w.io = true;
        w.params = io::rpc_params();
        io::add_open_loop_params(w);
        w.plans["tiny"] = {{{"connections", values({10})}, {"work", values({600})}, {"load", values({50})},
                            {"duration_ms", values({100})}, {"warmup_ms", values({20})}, {"calibrate_ms", values({100})}}};
        w.plans["quick"] = {{{"connections", values({100})}, {"work", values({600, 6000, 60000})}, {"load", values({50, 90})},
                             {"duration_ms", values({500})}, {"warmup_ms", values({100})}, {"calibrate_ms", values({300})}}};
        w.plans["anchors"] = {{{"connections", values({100})}, {"work", values({600, 6000, 60000})},
                               {"load", values({25, 50, 75, 90})}, {"duration_ms", values({10000})},
                               {"warmup_ms", values({2000})}, {"calibrate_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::open_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (ctx.size("size") < loadgen::kRpcHeader) return Outcome::failed("rpc: size must be at least 16 (the work's header)");
        return io::run_server<B>("rpc-open", io::Protocol::rpc, ctx);
    }
};

}  // namespace coopbench
