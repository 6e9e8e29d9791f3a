// http.hpp — the I/O workloads `http-hello` (closed loop) and `http-hello-open` (open loop,
// wrk2's method): an HTTP/1.1 "hello world" responder on the backend, keep-alive, loaded by
// the harness's load generator (harness/loadgen/, coopbench-loadgen), on 127.0.0.1 only.
//
// The protocol (harness/loadgen/protocol.hpp, byte for byte in docs/io-workloads.md): the
// client sends `GET /hello HTTP/1.1` with a Host header; the server answers every complete
// request head (up to "\r\n\r\n") with the same 78-byte response ("Hello, World!", as
// TechEmpower's plaintext test answers; io-anchors review §5.2 #9), in order, until the client
// closes. Raw TCP on every backend, no HTTP library: the same bytes and the same work on each,
// so that what is compared is the runtime, not one library's parser against another's. The
// client checks every response byte; with --inject-fault the server flips the first byte of
// its first response, which that check catches. A second client, Debian's `wrk`, loads one of
// these servers in tests/io (test_wrk.py) to show that a real HTTP client accepts them.
//
// value: http-hello — requests/s over the measured window; http-hello-open — p99 latency (µs).
// counters: as echo's (echo.hpp).
#pragma once

#include "workloads/io/echo.hpp"

namespace coopbench {

struct HttpHello : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "http-hello";
        w.origin = "io-anchors review §5.2 #9 (TechEmpower plaintext's response, wrk's keep-alive GET)";
        w.description =
            "HTTP/1.1 hello, closed loop: keep-alive GETs answered with a fixed 78-byte response, one in flight per connection";
        w.unit = "requests/s";
        w.io = true;
        w.params = io::load_params("100");
        w.plans["tiny"] = {{{"connections", values({1, 10})}, {"duration_ms", values({100})}, {"warmup_ms", values({20})}}};
        w.plans["quick"] = {{{"connections", values({1, 100, 1000})}, {"duration_ms", values({500})},
                             {"warmup_ms", values({100})}}};
        // The review's wrk sizes (-c 64, 256, 1024), 10 s windows.
        w.plans["anchors"] = {{{"connections", values({64, 256, 1024})}, {"duration_ms", values({10000})},
                               {"warmup_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        io::closed_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return io::run_server<B>("http-hello", io::Protocol::http, ctx);
    }
};

struct HttpHelloOpen : io::ServedOverSockets {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "http-hello-open";
        w.origin = "io-anchors review §5.2 #9 at a fixed offered rate (wrk2's method, latency from the intended send time)";
        w.description =
            "HTTP/1.1 hello, open loop: a fixed offered rate of keep-alive GETs, latency from each request's intended send time";
        w.unit = "us (p99)";
        w.io = true;
        w.params = io::load_params("100");
        io::add_open_loop_params(w);
        w.plans["tiny"] = {{{"connections", values({10})}, {"load", values({50})}, {"duration_ms", values({100})},
                            {"warmup_ms", values({20})}, {"calibrate_ms", values({100})}}};
        w.plans["quick"] = {{{"connections", values({100})}, {"load", values({25, 50, 90})},
                             {"duration_ms", values({500})}, {"warmup_ms", values({100})}, {"calibrate_ms", values({300})}}};
        w.plans["anchors"] = {{{"connections", values({256})}, {"load", values({25, 50, 75, 90, 100})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"calibrate_ms", values({2000})}}};
        io::open_loop_cost(w);
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return io::run_server<B>("http-hello-open", io::Protocol::http, ctx);
    }
};

}  // namespace coopbench
