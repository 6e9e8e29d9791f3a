// share.hpp — compute-bound threads that never yield: do they share the processors?
// (What implicit cooperative multitasking is for: Negele et al. 2017, Sect. 3.1; the
// `native-implicit` backend, plugin/.)
//
// T threads each run W units of pure computation (U steps of a 64-bit LCG per unit, in a
// loop with no call and no yield) and publish their progress after every unit; one more
// thread, the sleeper, waits on a semaphore that thread 0 releases after every R-th unit of
// its own. With T > P on a cooperative backend without quantum checks, the first threads
// run to completion before the others start; with preemptive threads or compiler-inserted
// checks they share the processors.
// Value: ms from opening the gate to the last join. Counters:
// - progress_ratio: max/min progress over the T threads when the first of them finishes
//   (the minimum counted as at least 1 unit; 1.0 = perfectly fair, W = the others had not
//   started); progress_min_share = min/max at that moment (0 = one ran alone).
// - wake_p50_us / wake_max_us: from thread 0's release to the sleeper running (its acquire
//   returning), the wake-up-to-run latency of a ready thread among busy ones.
// Self-check: every thread's final LCG state equals the sequential computation's and the
// sleeper saw every release.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
// share_unit — one unit of work: `u` LCG steps (Knuth's MMIX constants), not foldable.
inline std::uint64_t share_unit(std::uint64_t x, std::int64_t u) {
    for (std::int64_t i = 0; i < u; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}
inline std::int64_t share_now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
}  // namespace detail

struct Share {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "share";
        w.origin = "Negele et al. 2017, Sect. 3.1 (implicit task switches)";
        w.description = "T compute-bound threads (W units of U LCG steps, no yields) and a sleeper woken every R "
                        "units: progress ratio when the first finishes, wake-up-to-run latency";
        w.unit = "ms";
        w.params = {{"T", "4", "compute-bound threads"},
                    {"W", "20000", "units of work per thread"},
                    {"U", "1000", "LCG steps per unit"},
                    {"R", "100", "thread 0 wakes the sleeper every R units"}};
        w.plans["tiny"] = {{{"T", values({2, 4})}, {"W", values({200})}, {"U", values({1000})}, {"R", values({20})}}};
        w.plans["quick"] = {{{"T", values({4})}, {"W", values({20000})}, {"U", values({1000})}, {"R", values({100})}}};
        w.plans["paper"] = {{{"T", values({2, 4, 8})}, {"W", values({50000})}, {"U", values({1000})}, {"R", values({100})}}};
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t t = ctx.size("T");
        const std::int64_t w = ctx.i64("W");
        const std::int64_t u = ctx.i64("U");
        const std::int64_t r = std::max<std::int64_t>(1, ctx.i64("R"));
        const std::int64_t wakes = w / r;
        std::vector<Padded<std::atomic<std::int64_t>>> progress(t);
        std::vector<Padded<std::uint64_t>> state(t);
        std::vector<std::int64_t> snapshot(t, -1);
        std::vector<std::atomic<std::int64_t>> released_at(static_cast<std::size_t>(wakes));
        std::vector<std::int64_t> latency(static_cast<std::size_t>(wakes), -1);
        std::atomic<bool> first_done{false};
        typename B::Semaphore wake(0);

        Group<B> group(t + 1);
        if (!group.check_capacity(ctx, t + 1)) return Outcome::failed(group.error());
        // One start gate (common.hpp): thread t is the sleeper, 0..t-1 compute.
        StartGate<B> gate(GateWait::spin);
        const bool spawned = spawn_behind(group, gate, t + 1, [&](std::size_t i) {
            if (i == t) {
                for (std::int64_t n = 0; n < wakes; ++n) {
                    wake.acquire();
                    latency[static_cast<std::size_t>(n)] =
                        detail::share_now_ns() - released_at[static_cast<std::size_t>(n)].load(std::memory_order_relaxed);
                }
                return;
            }
            std::uint64_t x = i + 1;
            std::int64_t woken = 0;
            for (std::int64_t j = 1; j <= w; ++j) {
                x = detail::share_unit(x, u);
                progress[i].value.store(j, std::memory_order_relaxed);
                if (i == 0 && j % r == 0 && woken < wakes) {
                    released_at[static_cast<std::size_t>(woken++)].store(detail::share_now_ns(),
                                                                          std::memory_order_relaxed);
                    wake.release();  // orders the store above before the sleeper's read
                }
            }
            state[i].value = x;
            if (!first_done.exchange(true))
                for (std::size_t k = 0; k < t; ++k) snapshot[k] = progress[k].value.load(std::memory_order_relaxed);
        });
        if (!spawned) return Outcome::failed(group.error());
        Stopwatch clock;
        gate.go();
        group.join_all();
        const double secs = clock.seconds();

        for (std::size_t i = 0; i < t; ++i) {
            std::uint64_t want = detail::share_unit(i + 1, u * w);
            if (ctx.inject_fault && i == 0) want += 1;
            if (auto bad = expect("share: state of thread " + std::to_string(i), state[i].value, want))
                return Outcome::failed(*bad);
        }
        for (std::int64_t l : latency)
            if (l < 0) return Outcome::failed("share: the sleeper missed a release");
        const std::int64_t hi = *std::max_element(snapshot.begin(), snapshot.end());
        const std::int64_t lo = *std::min_element(snapshot.begin(), snapshot.end());
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["progress_ratio"] = static_cast<double>(hi) / static_cast<double>(std::max<std::int64_t>(lo, 1));
        o.counters["progress_min_share"] = hi > 0 ? static_cast<double>(lo) / static_cast<double>(hi) : 0.0;
        if (!latency.empty()) {
            std::sort(latency.begin(), latency.end());
            o.counters["wake_p50_us"] = static_cast<double>(latency[latency.size() / 2]) / 1e3;
            o.counters["wake_max_us"] = static_cast<double>(latency.back()) / 1e3;
        }
        return o;
    }
};

}  // namespace coopbench
