// hogs.hpp — the I/O workload `echo-hogs`: I/O latency while K compute-bound activities hog
// the processors, each yielding to its runtime after every slice of `slice_us` of work (poll
// starvation: does a runtime that runs activities back to back still poll its sockets, and
// how often?). The load is echo-open's at a fixed offered rate (`rate`, 1000 requests/s: what
// is measured is the tail while the hogs run, so the rate is not a share of a calibrated
// maximum), latency from each request's intended send time (wrk2's method); the server is
// echo's, unchanged, with the hogs beside it.
//
// A hog: loop { hog_slice_rounds(slice_us) rounds of rpc_work (harness/loadgen/protocol.hpp:
// a count of rounds, not a time, the same work on every backend); yield } until the point
// ends. On a C++ backend the hogs are `hogs` threads of the backend (B::spawn) and the yield
// is the backend's (B::yield): coop's activities yield to coop's scheduler, an OS-thread
// backend's threads call sched_yield / std::this_thread::yield (the kernel preempts them
// anyway: a preemptive baseline). The external programs run theirs as their runtime's users
// would (docs/io-workloads.md, "CPU hogs": goroutines with runtime.Gosched, tasks with
// tokio::task::yield_now, Asio handlers that re-post themselves, OS threads with sched_yield).
//
// Self-check: the server counts the slices its hogs completed (counter hog_slices); a point
// in which they completed none (hogs that never ran) fails. The test-only environment
// variable COOPBENCH_TEST_LAZY_HOGS makes every server skip starting them
// (tests/io/test_hogs.py sees that point fail).
//
// value: p99 latency (µs). counters: echo-open's, plus hogs (K), hog_slices, slice_us and
// slice_timed_us (one slice's rounds timed on the load generator's CPU).
#pragma once

#include <cstdlib>
#include <memory>

#include "workloads/io/echo.hpp"

namespace coopbench {

namespace io {

// HogThreads — the hogs of a C++ backend's server (Beside, echo.hpp).
template <Backend B>
class HogThreads final : public Beside<B> {
  public:
    HogThreads(std::size_t k, std::uint64_t rounds, bool lazy) : k_(k), rounds_(rounds), lazy_(lazy), hogs_(k) {}
    std::size_t threads() const override { return k_; }
    bool start(Group<B>& group) override {
        if (lazy_) return true;  // the test-only fault: the hogs are never started
        for (std::size_t i = 0; i < k_; ++i)
            if (!group.spawn([this, i] { hog(hogs_[i]); })) return false;
        return true;
    }
    void stop() override {
        // relaxed: the flag carries no data; each hog only needs to see it eventually, and
        // its slice count is read after its join, which orders every write of the hog before
        // the read.
        stop_.store(true, std::memory_order_relaxed);
    }
    void finish(Outcome& o) override {
        std::uint64_t slices = 0;
        for (auto& h : hogs_) slices += h.slices;
        if (!o.ok) return;
        o.counters["hogs"] = static_cast<double>(k_);
        o.counters[loadgen::kHogSlicesKey] = static_cast<double>(slices);
        if (slices == 0)
            o = Outcome::failed("self-check failed: hog_slices = 0: the server's " + std::to_string(k_) +
                                " hogs completed no slice (they never ran)");
    }

  private:
    // One hog's own: written by it alone, read after its join; a line each, so that the hogs'
    // counts do not share a cache line.
    struct alignas(64) Hog {
        std::uint64_t slices = 0;
        std::uint64_t x = 0;  // the work's result, kept so that the work is not dead code
    };
    void hog(Hog& h) {
        std::uint64_t x = 0x9E3779B97F4A7C15ull + reinterpret_cast<std::uintptr_t>(&h);
        std::uint64_t n = 0;
        while (!stop_.load(std::memory_order_relaxed)) {  // relaxed: see stop()
            x = loadgen::rpc_work(x, rounds_);
            ++n;
            h.slices = n;
            B::yield();
        }
        h.x = x;
    }

    std::size_t k_;
    std::uint64_t rounds_;
    bool lazy_;
    std::vector<Hog> hogs_;
    std::atomic<bool> stop_{false};
};

}  // namespace io

struct EchoHogs : io::ServedOverSockets {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "echo-hogs";
        w.origin = "io-anchors review §5.2 #5 (I/O latency under CPU hogs: K activities compute and yield every "
                   "0.1 / 1 / 10 ms; poll starvation, golang/go PR #51651)";
        w.description = "TCP echo, open loop at a fixed rate, while `hogs` compute-bound activities yield to the runtime "
                        "after every slice of `slice_us`";
        w.unit = "us (p99)";
        w.io = true;
        w.params = io::common_params("512", "100");
        w.params.push_back({"rate", "1000", "offered rate in requests/s (fixed: not a share of a calibrated maximum)"});
        w.params.push_back({"hogs", "0", "compute-bound activities beside the server (0: two per processor)", 0});
        w.params.push_back({"slice_us", "1000",
                            "each hog's work between two yields, in µs at 600 rounds a µs (hog_slice_rounds: a count of "
                            "rounds, not a time)"});
        w.plans["tiny"] = {{{"connections", values({10})}, {"rate", values({200})}, {"hogs", values({2})},
                            {"slice_us", values({100})}, {"duration_ms", values({100})}, {"warmup_ms", values({20})}}};
        w.plans["quick"] = {{{"connections", values({100})}, {"slice_us", values({100, 1000, 10000})},
                             {"duration_ms", values({1000})}, {"warmup_ms", values({200})}}};
        w.plans["anchors"] = {{{"connections", values({100})}, {"slice_us", values({100, 1000, 10000})},
                               {"duration_ms", values({10000})}, {"warmup_ms", values({2000})},
                               {"processors", values({1, static_cast<std::int64_t>(std::max(1u, m.cores))})}}};
        // A run's cost: the warm-up and the window (a fixed rate: no calibration run), the
        // connections' set-up; one warm-up and three measured runs per fork, as the others.
        w.cost = [](const Params& p) {
            return (param_number(p, "duration_ms") + param_number(p, "warmup_ms")) * 1e-3 + 0.05;
        };
        w.iterations = [](const Params&) { return WorkloadInfo::Iterations{1, 3}; };
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t k = loadgen::hog_count(ctx.size("hogs"), ctx.options.processors);
        io::HogThreads<B> hogs(k, loadgen::hog_slice_rounds(ctx.size("slice_us")),
                               std::getenv(loadgen::kLazyHogsEnv) != nullptr);
        return io::run_server<B>("echo-hogs", io::Protocol::echo, ctx, &hogs);
    }
};

}  // namespace coopbench
