// point.cpp — an I/O point's load and its reply (point.hpp).
#include "harness/loadgen/point.hpp"

#include <time.h>

#include <cstdint>
#include <stdexcept>

#include "harness/loadgen/loadgen.hpp"

namespace coopbench::loadgen {
namespace {

std::int64_t param(const std::map<std::string, std::string>& p, const std::string& name, std::int64_t fallback) {
    auto it = p.find(name);
    if (it == p.end()) return fallback;
    return std::stoll(it->second);
}

constexpr double kClientBound = 0.9;  // client CPU / (wall x client threads) at or above: client-bound

nlohmann::json counters_of(const Result& r, const Spec& spec, const CpuSplit& split) {
    nlohmann::json c = nlohmann::json::object();
    auto us = [](std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
    const double rate = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0;
    c["requests"] = r.requests;
    c["rate_rps"] = rate;
    c["p50_us"] = us(r.latency.percentile(0.50));
    c["p99_us"] = us(r.latency.percentile(0.99));
    c["p999_us"] = us(r.latency.percentile(0.999));
    c["max_us"] = us(r.latency.max());
    c["mean_us"] = r.latency.mean() / 1000.0;
    c["percentile_error"] = Histogram::kRelativeError;
    if (r.server_cpu_s >= 0 && r.requests > 0) c["server_cpu_us_per_request"] = r.server_cpu_s * 1e6 / static_cast<double>(r.requests);
    if (r.server_cpu_s >= 0 && r.seconds > 0) c["server_cpu_util"] = r.server_cpu_s / r.seconds;
    const unsigned threads = std::min<unsigned>(spec.threads, spec.connections);
    const double util = r.seconds > 0 ? r.client_cpu_s / (r.seconds * threads) : 0;
    c["client_cpu_util"] = util;
    c["client_bound"] = util >= kClientBound ? 1 : 0;
    c["cpus_shared"] = split.shared ? 1 : 0;
    c["client_threads"] = threads;
    c["unfinished"] = r.unfinished;
    c["bytes_checked"] = r.bytes_checked;
    if (spec.protocol == Protocol::rpc) c["work_us"] = r.work_ns / 1000.0;
    if (spec.mode == Mode::open) c["offered_rps"] = spec.rate;
    if (spec.idle > 0) {
        c["idle"] = spec.idle;
        c["rss_before_kib"] = r.rss_before_kib;
        c["rss_after_kib"] = r.rss_after_kib;
        c["rss_per_idle_kib"] = rss_per_idle_kib(r.rss_before_kib, r.rss_after_kib, spec.idle);
        c["idle_accept_ms"] = r.idle_accept_s * 1e3;
        c["idle_settle_ms"] = r.idle_settle_s * 1e3;
    }
    if (spec.held_first && r.held_s >= 0) {
        c["held_ms"] = r.held_s * 1e3;  // from the last connect until the server held them all
    }
    return c;
}

}  // namespace

nlohmann::json measure_point(const std::string& workload, const std::map<std::string, std::string>& params, int port,
                             pid_t server_pid, const CpuSplit& split) {
    Spec spec;
    spec.port = port;
    spec.server_pid = server_pid;
    spec.cpus = split.client;
    spec.connections = static_cast<unsigned>(param(params, "connections", 1));
    spec.size = static_cast<std::size_t>(param(params, "size", 512));
    spec.warmup_s = static_cast<double>(param(params, "warmup_ms", 200)) * 1e-3;
    spec.duration_s = static_cast<double>(param(params, "duration_ms", 1000)) * 1e-3;
    spec.max_requests = static_cast<std::uint64_t>(param(params, "max_requests", 0));
    spec.threads = client_threads(params);
    nlohmann::json reply;
    double calibrated = 0;
    // The workloads (workloads/io/): a protocol and a loop.
    const bool http = workload == "http-hello" || workload == "http-hello-open";
    const bool rpc = workload == "rpc" || workload == "rpc-open";
    const bool hogs = workload == "echo-hogs";
    const bool open = workload == "echo-open" || workload == "http-hello-open" || workload == "rpc-open" ||
                      workload == "echo-idle" || hogs;
    // echo-idle: echo-open's load on `connections`, with `idle` more connections that never
    // send, opened (and the server's RSS read around them) before the load.
    if (workload == "echo-idle") spec.idle = static_cast<unsigned>(param(params, "idle", 10000));
    // echo-hogs: the window starts once the server holds every connection (loadgen.hpp,
    // "Held first"): an accept backlog behind the hogs is churn's question, not this one's.
    spec.held_first = hogs;
    if (http) spec.protocol = Protocol::http;
    if (rpc) {
        spec.protocol = Protocol::rpc;
        spec.size = static_cast<std::size_t>(param(params, "size", 128));
        spec.work_rounds = static_cast<std::uint64_t>(param(params, "work", 0));
    }
    if (workload == "churn") {
        spec.churn = true;
        spec.size = static_cast<std::size_t>(param(params, "size", 64));
    }
    if (workload == "echo" || workload == "http-hello" || workload == "rpc" || workload == "churn") {
        spec.mode = Mode::closed;
    } else if (open) {
        spec.mode = Mode::open;
        spec.rate = static_cast<double>(param(params, "rate", hogs ? 1000 : 0));
        // echo-hogs: a fixed offered rate, never a share of a calibrated maximum (what it
        // measures is the tail while the hogs run, not a point on the hockey stick).
        if (hogs && spec.rate <= 0) throw std::invalid_argument("echo-hogs needs a rate > 0 (requests/s)");
        if (spec.rate <= 0) {
            // The offered load as a fraction of this server's closed-loop maximum, measured
            // now on the same connections' count (a closed-loop run of calibrate_ms).
            Spec cal = spec;
            cal.mode = Mode::closed;
            cal.warmup_s = 0.1;
            cal.duration_s = static_cast<double>(param(params, "calibrate_ms", 500)) * 1e-3;
            cal.max_requests = 0;
            cal.idle = 0;  // on the loaded connections alone, before the idle ones are opened
            const Result c = run(cal);
            if (!c.ok) {
                reply["status"] = c.check.rfind("system limit: ", 0) == 0 ? "refused" : "ok";
                if (reply["status"] == "refused") {
                    reply["reason"] = c.check.substr(14);
                    return reply;
                }
                if (c.check.rfind("self-check failed", 0) == 0) {
                    reply["seconds"] = 0;
                    reply["value"] = 0;
                    reply["check"] = c.check + " (in the closed-loop calibration)";
                } else {
                    reply["status"] = "failed";
                    reply["reason"] = "calibration (closed loop): " + c.check;
                }
                return reply;
            }
            calibrated = static_cast<double>(c.requests) / c.seconds;
            spec.rate = calibrated * static_cast<double>(param(params, "load", 50)) / 100.0;
        }
    } else {
        throw std::invalid_argument("the load generator knows no workload '" + workload + "'");
    }
    const Result r = run(spec);
    if (!r.ok && r.check.rfind("system limit: ", 0) == 0) {
        reply["status"] = "refused";
        reply["reason"] = r.check.substr(14);
        return reply;
    }
    if (!r.ok && r.check.rfind("self-check failed", 0) != 0) {  // no verdict on the server: it could not load it
        reply["status"] = "failed";
        reply["reason"] = r.check;
        return reply;
    }
    reply["status"] = "ok";
    reply["seconds"] = r.seconds > 0 ? r.seconds : 0;
    reply["check"] = r.check;
    reply["counters"] = counters_of(r, spec, split);
    if (calibrated > 0) reply["counters"]["calibrated_rps"] = calibrated;
    if (hogs) {
        // The hogs' slice: its nominal length and one slice's rounds timed here, on the
        // client's CPU (the server's hogs do the same rounds: protocol.hpp).
        const std::uint64_t slice_us = static_cast<std::uint64_t>(param(params, "slice_us", 1000));
        timespec a{}, b{};
        clock_gettime(CLOCK_MONOTONIC, &a);
        volatile std::uint64_t sink = rpc_work(0x9E3779B97F4A7C15ull, hog_slice_rounds(slice_us));
        (void)sink;
        clock_gettime(CLOCK_MONOTONIC, &b);
        reply["counters"]["slice_us"] = slice_us;
        reply["counters"]["slice_timed_us"] =
            static_cast<double>(b.tv_sec - a.tv_sec) * 1e6 + static_cast<double>(b.tv_nsec - a.tv_nsec) / 1e3;
    }
    if (spec.mode == Mode::closed)
        reply["value"] = r.seconds > 0 ? static_cast<double>(r.requests) / r.seconds : 0;
    else
        reply["value"] = static_cast<double>(r.latency.percentile(0.99)) / 1000.0;
    return reply;
}

}  // namespace coopbench::loadgen
