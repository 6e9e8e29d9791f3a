// idle.hpp — the I/O workload `echo-idle`: many idle connections and a few active ones
// (io-anchors review §5.2 #7, "10,000 idle connections and 100 active: RSS per connection and
// the active ones' p99"). What a server pays for a connection that does nothing — a thread's
// stack, a goroutine's or a task's, an activity's, its buffer, its poller registration — and
// whether holding ten thousand of them slows the ones that work.
//
// The servers are echo's, unchanged (echo.hpp's on a C++ backend; each external program's
// echo): an idle connection is one that never sends. The load generator (loadgen.hpp,
// Spec::idle) reads the server process's RSS (/proc/PID/smaps_rollup), opens `idle`
// connections that send nothing, waits until the server holds every one of them (its fds, as
// the kernel lists them) and its RSS has settled, reads the RSS again, then runs echo-open's
// load on `connections` more: a fixed offered rate, latency from the intended send time. An
// idle connection the server closes, or sends a byte on, fails the point.
//
// value: the active connections' p99 latency (µs); counters: echo-open's, and idle,
// rss_before_kib, rss_after_kib, rss_per_idle_kib = (after - before) / idle, idle_settle_ms.
//
// Memory a server freed is reused by its next connections, so only its first idle
// connections show what one costs: each fork is one run against a fresh server (W=0, I=1).
#pragma once

#include "harness/loadgen/fd_limit.hpp"
#include "workloads/io/echo.hpp"

namespace coopbench {

struct EchoIdle : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "echo-idle";
        w.origin = "io-anchors review §5.2 #7 (10,000 idle connections, each parked in read, and 100 active: RSS per connection, the active ones' p99)";
        w.description =
            "TCP echo with idle connections: `idle` connections that never send, held open, and echo-open's load on the others";
        w.unit = "us (p99)";
        w.io = true;
        w.params = io::common_params("512", "100");
        w.params[1].help = "active TCP connections (the open loop's), besides the idle ones";
        w.params.insert(w.params.begin(), ParamSpec{"idle", "10000", "connections that never send, open through the run"});
        io::add_open_loop_params(w);
        w.plans["tiny"] = {{{"idle", values({100})}, {"connections", values({2})}, {"load", values({50})},
                            {"duration_ms", values({100})}, {"warmup_ms", values({20})}, {"calibrate_ms", values({100})}}};
        w.plans["quick"] = {{{"idle", values({1000, 10000})}, {"connections", values({100})}, {"load", values({50})},
                             {"duration_ms", values({1000})}, {"warmup_ms", values({200})}, {"calibrate_ms", values({300})}}};
        w.plans["anchors"] = {{{"idle", values({10000})}, {"connections", values({100})}, {"load", values({50})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"calibrate_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::open_loop_cost(w);
        // The idle connections' set-up besides: connects, accepts and the client's reads of
        // the server's /proc (1.4-2.7 s for 10,000 here, at a load of 7 on 2 CPUs: about
        // 250 µs each) and the RSS's settling (at least 0.1 s).
        w.cost = [open = w.cost](const Params& p) { return open(p) + param_number(p, "idle") * 250e-6 + 0.2; };
        w.iterations = [](const Params&) { return WorkloadInfo::Iterations{0, 1}; };
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t idle = ctx.size("idle");
        const std::size_t conns = ctx.size("connections");
        // A thread per connection, idle or not, and the acceptor (pthreads, stdthread: past
        // the thread limit, refused here with the backend's reason).
        Group<B> group(1);
        if (!group.check_capacity(ctx, idle + conns + 1)) return Outcome::failed(group.error());
        // The server (this process) holds an fd per connection: its soft RLIMIT_NOFILE raised
        // to the hard one (the load generator, its child, inherits it and refuses a point
        // past it before connecting).
        loadgen::raise_fd_limit();
        return io::run_server<B>("echo-idle", io::Protocol::echo, ctx);
    }
};

}  // namespace coopbench
