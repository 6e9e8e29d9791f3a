// abortable_lock.hpp — workload `abortable-lock`: the CAL paper's lock benchmark
// (Marathe, Moir and Shavit, "Composite Abortable Locks", IPDPS 2006, section 4,
// Figs. 3–5), for every lock of locks/ (parameter `lock`).
//
// T threads each make A acquisition attempts with patience W (0 = infinite). A success
// runs a critical section of cs_ns (a busy loop reading the clock, as the paper's "tight
// 300 ns loop accessing only the high resolution timer"); every attempt is followed by a
// non-critical section of ncs_ns. Value: throughput (successful acquisitions per second).
// Counters: throughput, timeouts_pct (attempts that timed out), fairness_stddev (standard
// deviation of the per-thread acquisition counts), fairness_cv (stddev / mean),
// acquisitions, attempts. Self-check: an owner field and an unsynchronised counter inside
// the critical section (mutual exclusion, nothing lost), and no timeout where patience is
// infinite. The locks spin, so the workload runs only on preemptive backends.
//
// Plans: fig3_scalability (T = 1..P, very large patience: throughput against T),
// fig4_preemption (T = P..8P, patience 512 us: % timed out against T), fig5_degradation
// (T = P and 2P, patience 144 us down to 2 us: % timed out against patience), where P =
// the machine's cores; tiny (CI), quick (a small subset), paper (all three figures).
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "locks/all.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
// busy_ns — spin for about `ns` nanoseconds reading only the clock (the paper's loop).
inline void busy_ns(std::int64_t ns) {
    if (ns <= 0) return;
    const std::int64_t start = locks::now_ns();
    while (locks::now_ns() - start < ns) {
    }
}

// thread_steps — 1..n, thinned to at most ~12 values on big machines, always ending at n.
inline std::vector<std::int64_t> thread_steps(std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> v;
    const std::int64_t step = std::max<std::int64_t>(1, (to - from + 1) / 12);
    for (std::int64_t t = from; t <= to; t += step) v.push_back(t);
    if (v.empty() || v.back() != to) v.push_back(to);
    return v;
}
inline std::vector<std::string> strings(const std::vector<std::int64_t>& xs) {
    std::vector<std::string> v;
    for (auto x : xs) v.push_back(std::to_string(x));
    return v;
}

template <Backend B, class L>
Outcome run_abortable(const Context& ctx) {
    const std::size_t t = ctx.size("T");
    const std::int64_t attempts = ctx.i64("A");
    const std::int64_t patience_us = ctx.i64("patience_us");
    const std::int64_t cs = ctx.i64("cs_ns"), ncs = ctx.i64("ncs_ns");
    const locks::Patience patience =
        patience_us == 0 ? locks::Patience::infinite() : locks::Patience::micros(patience_us);
    L lock(locks::LockOptions{.nodes = static_cast<unsigned>(ctx.i64("C"))});

    struct Shared {
        std::atomic<std::size_t> owner{0};
        std::atomic<std::int64_t> violations{0};
        alignas(64) std::int64_t counter = 0;  // protected by the lock under test
    } shared;
    struct alignas(64) PerThread {
        std::int64_t acquired = 0, timed_out = 0;
    };
    std::unique_ptr<PerThread[]> per(new PerThread[t]);

    Group<B> group(t);
    if (!group.check_capacity(ctx, t)) return Outcome::failed(group.error());
    StartGate<B> gate(GateWait::spin);
    const bool spawned = spawn_behind(group, gate, t, [&](std::size_t i) {
        PerThread* me = &per[i];
        const std::size_t id = i + 1;
        for (std::int64_t a = 0; a < attempts; ++a) {
            if (auto ticket = lock.try_lock_for(patience)) {
                // relaxed: only detects overlap; the lock orders the critical section.
                if (shared.owner.exchange(id, std::memory_order_relaxed) != 0)
                    shared.violations.fetch_add(1, std::memory_order_relaxed);
                ++shared.counter;
                busy_ns(cs);
                if (shared.owner.exchange(0, std::memory_order_relaxed) != id)
                    shared.violations.fetch_add(1, std::memory_order_relaxed);
                lock.unlock(ticket);
                ++me->acquired;
            } else {
                ++me->timed_out;
            }
            busy_ns(ncs);
        }
    });
    if (!spawned) return Outcome::failed(group.error());
    Stopwatch clock;
    gate.go();
    group.join_all();
    const double secs = clock.seconds();

    std::int64_t acquired = 0, timed_out = 0;
    for (std::size_t i = 0; i < t; ++i) acquired += per[i].acquired, timed_out += per[i].timed_out;
    std::int64_t counter = shared.counter;
    if (ctx.inject_fault) counter += 1;
    if (shared.violations.load() != 0)
        return Outcome::failed("self-check failed: mutual exclusion violated " +
                               std::to_string(shared.violations.load()) + " times");
    if (auto bad = expect("critical sections", counter, acquired)) return Outcome::failed(*bad);
    if (auto bad = expect("attempts", acquired + timed_out, static_cast<std::int64_t>(t) * attempts))
        return Outcome::failed(*bad);
    if (patience.is_infinite() && timed_out != 0)
        return Outcome::failed("self-check failed: " + std::to_string(timed_out) + " timeouts with infinite patience");

    const double mean = static_cast<double>(acquired) / static_cast<double>(t);
    double var = 0;
    for (std::size_t i = 0; i < t; ++i) var += std::pow(static_cast<double>(per[i].acquired) - mean, 2);
    const double stddev = std::sqrt(var / static_cast<double>(t));
    const double throughput = secs > 0 ? static_cast<double>(acquired) / secs : 0;
    Outcome o = Outcome::measured(secs, throughput);
    o.counters["throughput"] = throughput;
    o.counters["timeouts_pct"] = 100.0 * static_cast<double>(timed_out) / static_cast<double>(t * attempts);
    o.counters["fairness_stddev"] = stddev;
    o.counters["fairness_cv"] = mean > 0 ? stddev / mean : 0;
    o.counters["acquisitions"] = static_cast<double>(acquired);
    o.counters["attempts"] = static_cast<double>(t * attempts);
    return o;
}
}  // namespace detail

// AbortableLockWorkload — T threads, A attempts each, patience W; see the file comment.
struct AbortableLockWorkload {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "abortable-lock";
        w.origin = "Marathe, Moir and Shavit 2006, Composite Abortable Locks, section 4, Figs. 3-5";
        w.description = "T threads each make A attempts (patience W) to run a critical section under an abortable lock";
        w.unit = "acquisitions/s";
        w.params = {
            {"lock", "cal", "the lock algorithm (locks/)", 1, locks::AllLocks::names()},
            {"T", "2", "threads"},
            {"A", "10000", "acquisition attempts per thread"},
            {"patience_us", "512", "patience in microseconds (0 = infinite)", 0},
            {"cs_ns", "300", "critical section busy loop (ns)", 0},
            {"ncs_ns", "300", "non-critical section busy loop after every attempt (ns)", 0},
            {"C", "4", "CAL: size of the node array", 1},
        };
        const std::int64_t p = std::max<unsigned>(1, m.cores);
        const std::vector<std::string> all = locks::AllLocks::names();
        const std::vector<std::string> procs = {std::to_string(p)};
        // fig4: P, 4P/3, then well past P so that preemption happens even on small machines.
        std::vector<std::int64_t> fig4 = {p, std::max(p + 1, (4 * p) / 3), 2 * p, 3 * p, 4 * p, 6 * p, 8 * p};
        fig4.erase(std::unique(fig4.begin(), fig4.end()), fig4.end());
        const Grid fig3 = {{"lock", all},
                           {"T", detail::strings(detail::thread_steps(1, p))},
                           {"A", values({100000})},
                           {"patience_us", values({100000})},
                           {"processors", procs}};
        const Grid fig4g = {{"lock", all},
                            {"T", detail::strings(fig4)},
                            {"A", values({2000})},
                            {"patience_us", values({512})},
                            {"processors", procs}};
        const Grid fig5 = {{"lock", all},
                           {"T", detail::strings({p, 2 * p})},
                           {"A", values({5000})},
                           {"patience_us", values({144, 96, 64, 48, 32, 24, 16, 12, 8, 6, 4, 3, 2})},
                           {"processors", procs}};
        w.plans["fig3_scalability"] = {fig3};
        w.plans["fig4_preemption"] = {fig4g};
        w.plans["fig5_degradation"] = {fig5};
        w.plans["paper"] = {fig3, fig4g, fig5};
        w.plans["tiny"] = {{{"lock", all}, {"T", values({2})}, {"A", values({200})}, {"patience_us", values({0, 50})}}};
        w.plans["quick"] = {
            {{"lock", all}, {"T", detail::strings({1, p})}, {"A", values({5000})}, {"patience_us", values({0})},
             {"processors", procs}},
            {{"lock", all}, {"T", detail::strings({2 * p})}, {"A", values({1000})}, {"patience_us", values({512})},
             {"processors", procs}},
        };
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) {
            return 1e-9 * param_number(p, "T") * param_number(p, "A") *
                   (param_number(p, "cs_ns") + param_number(p, "ncs_ns") + 1000);
        };
        return w;
    }

    template <Backend B>
    static constexpr bool supports() {
        return is_preemptive<B>();
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        Outcome out = Outcome::failed("unknown lock '" + ctx.str("lock") + "'");
        locks::AllLocks::with(ctx.str("lock"), [&]<class L>() { out = detail::run_abortable<B, L>(ctx); });
        return out;
    }
};

}  // namespace coopbench
