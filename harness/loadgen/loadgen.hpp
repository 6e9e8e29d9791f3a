// loadgen.hpp — the harness's load generator for the I/O workloads (workloads/io/): one
// client for every backend's server, in a process of its own (coopbench-loadgen), on
// loopback only, TCP_NODELAY, bounded in time and in count.
//
// The protocols (protocol.hpp): echo — a connection carries fixed-size messages of `size`
// bytes; the server reads one whole message (read_exact) and writes it back (write_all),
// until the client closes. The client checks every byte it gets back against what it
// sent: the bytes of request s on connection c are a slice of a fixed pseudo-random table
// at an offset derived from (c, s), so a byte dropped, duplicated, reordered within or
// across requests, or changed fails the run with where it happened. http — each request is
// kHttpRequest, each response must be exactly kHttpResponse, every byte checked, and a
// response byte that comes while its request is still being sent fails the run.
// Both: after the last response the client half-closes each connection and reads it to its
// end; a byte more (an answer to nothing) fails the run. rpc — as echo, but bytes 0-15 of
// each request carry the work (round count, seed: protocol.hpp), and bytes 0-7 of the reply
// must be rpc_work's result; the seeds come from a table of kRpcSeeds answered before the
// clock.
//
// Churn (spec.churn, closed loop): each of the N connectors connects, sends one request,
// reads its reply, closes, and connects again; the latency runs from the connect() call to
// the reply's last byte.
//
// Modes:
//   closed — N connections, each with exactly one request in flight: the next is sent as the
//            response ends (rust_echo_bench's shape, without its thread per connection).
//            Latency: from the send to the last byte of the response.
//   open   — a fixed offered rate R spread over N connections (connection c's k-th request is
//            intended at t0 + (k N + c) / R), one request in flight per connection; a request
//            is sent at its intended time or, when the connection is still busy, as soon as the
//            previous response ends. Latency is measured from the intended send time
//            (wrk2's method, G. Tene, giltene/wrk2 README "A note about wrk2's latency
//            measurement technique": no coordinated omission).
//
// The measured window is [t0 + warmup, t0 + warmup + duration): the requests started (closed)
// or intended (open) in it are the measured ones; after it no new request is started, the
// ones still in flight (open: also the ones intended in the window but not sent yet) finish
// within `grace` seconds; one that does not is a failed run (closed) or, in open mode, is
// recorded with its latency so far, a lower bound, and counted as `unfinished`. The window
// also ends early after `max_requests` measured requests (per thread: its share). A
// closed-loop window in which no request started (each connection still waiting for a reply
// to a request sent before it) stays open until one starts, at most `grace` seconds more.
// An open-loop window in which no request is intended (a rate below one request per window
// and thread) waits for the next intended time the same way and measures that one request.
//
// Held first (spec.held_first, the workload echo-hogs): after the loaded connections connect,
// the warm-up starts only once the server holds every one of them (the kernel's view, as for
// the idle connections below). A server whose accept completes through its scheduler's queue
// (Asio posts every completion, a speculative accept's too: one connection per pass over its
// handlers) takes seconds to accept 100 while hogs hold that queue for 10 ms a slice; the window
// would then measure the accept backlog, which churn measures, not the I/O latency under hogs.
//
// Idle connections (spec.idle > 0, the workload echo-idle): before the loaded connections are
// made, `idle` more connect and send nothing. The server's RSS is read (rss_kib) before they
// connect and again once the server holds every one of them (idle_accepted: each idle
// connection's server-side socket, found in the server's /proc/PID/net/tcp by the client's
// port, is an fd of the server process) and its RSS has settled; they stay open through the
// window, and a byte from the server on one, or its close, fails the run.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/loadgen/histogram.hpp"
#include "harness/loadgen/protocol.hpp"

namespace coopbench::loadgen {

enum class Mode { closed, open };

struct Spec {
    Mode mode = Mode::closed;
    Protocol protocol = Protocol::echo;  // echo, rpc: `size`-byte messages; http: protocol.hpp's
                                         // request and response (`size` unused)
    std::uint64_t work_rounds = 0;       // rpc: rpc_work's rounds in every request
    bool churn = false;                  // each request on a new connection: connect, send,
                                         // read the reply, close (closed loop only)
    int port = 0;                      // 127.0.0.1:port
    unsigned connections = 1;
    std::size_t size = 512;            // bytes per message
    double warmup_s = 0.2;
    double duration_s = 1;
    double rate = 0;                   // open: offered requests/s over all connections
    std::uint64_t max_requests = 0;    // 0: no bound but the duration
    unsigned threads = 1;              // client threads (each its own epoll and connections)
    double grace_s = 2;
    pid_t server_pid = 0;              // > 0: its CPU time is sampled at the window's edges
    std::vector<int> cpus;             // the CPUs the client may run on (empty: as it is)
    unsigned idle = 0;                 // connections that never send, open through the run
                                       // (needs server_pid: its RSS is read)
    bool held_first = false;           // the warm-up starts once the server holds every loaded
                                       // connection (needs server_pid; see run())
};

struct Result {
    bool ok = false;
    std::string check;                  // "passed" or what failed
    std::uint64_t requests = 0;         // measured requests
    std::uint64_t unfinished = 0;       // open: measured requests still unanswered at the end
    double seconds = 0;                 // the measured window's length
    Histogram latency;                  // ns, measured requests
    double server_cpu_s = -1;           // server's CPU time in the window (-1: unknown)
    double client_cpu_s = 0;            // this process's CPU time in the window
    double offered_rate = 0;            // open: R
    std::uint64_t bytes_checked = 0;    // every echoed byte, warm-up and drain included
    double work_ns = 0;                 // rpc: one request's work timed on the client's CPU
    std::int64_t rss_before_kib = -1;   // idle: the server's RSS before the idle connections
    std::int64_t rss_after_kib = -1;    // idle: ... once it holds all of them (-1: unknown)
    double idle_accept_s = 0;           // idle: from the last connect until the server held all
    double idle_settle_s = 0;           // idle: from the last connect to the after sample
    double held_s = -1;                 // held_first: from the last connect until the server held all
};

// rss_kib_of — the resident set size in KiB from the text of /proc/PID/smaps_rollup (its
// "Rss:" line, an exact walk of the page tables) or of /proc/PID/status ("VmRSS:", the
// kernel's counters); -1 when neither line is there.
std::int64_t rss_kib_of(const std::string& proc_text);
// rss_kib — process pid's RSS (smaps_rollup, else status); -1 when it cannot be read.
std::int64_t rss_kib(pid_t pid);
// rss_per_idle_kib — (after - before) / idle, the server's resident memory per idle
// connection; -1 when a sample is missing or idle is 0.
double rss_per_idle_kib(std::int64_t before, std::int64_t after, unsigned idle);
// server_sockets_of — how many of the connections from the client ports `ports` to
// 127.0.0.1:server_port the server holds: their server-side sockets' inodes, from the text of
// /proc/PID/net/tcp (`tcp_text`), that are among `server_inodes` (the server's fds' socket
// inodes). A connection still in the listen backlog has no socket file (inode 0 in
// net/tcp), so it is not counted until the server has accepted it.
std::size_t server_sockets_of(const std::string& tcp_text, int server_port, const std::vector<int>& ports,
                              const std::vector<unsigned long>& server_inodes);

// run — connect, load, check, close. Never throws for what the server does (a refused
// connect, a reset, a wrong byte): those are a Result with ok = false and the reason.
Result run(const Spec& spec);

// result_json — the Result as one JSON line (what `coopbench-loadgen run` prints; the fields
// are documented in docs/adding-a-backend.md, "Serving an I/O workload").
std::string result_json(const Result& r, const Spec& spec);

}  // namespace coopbench::loadgen
