// switch.hpp — context switch (Negele et al. 2017, section 6, Fig. 8).
//
// T threads each call yield() K times in a loop that does nothing else. Value: wall ns per
// switch = elapsed / (T*K), from opening the start gate to the last join. Self-check: the
// per-thread yield counts add up to T*K.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

struct Switch {
    static constexpr double kOsSwitchSeconds = 5e-6;     // a yield of an OS thread (see info)
    static constexpr double kUserSwitchSeconds = 2.5e-7; // a yield of a user-level thread
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "switch";
        w.origin = "Negele et al. 2017, Fig. 8";
        w.description = "T threads each yield K times";
        w.unit = "ns/switch";
        w.params = {{"T", "2", "threads"}, {"K", "10000", "yields per thread"}};
        w.plans["tiny"] = {{{"T", values({1, 4})}, {"K", values({100})}}};
        w.plans["quick"] = {{{"T", values({1, 2, 10, 100, 1000})}, {"K", values({2000})}}};
        w.plans["paper"] = {{{"T", values({1, 2, 10, 100, 1000, 10000})}, {"K", values({10000})}}};
        // Expected seconds per run, roughly, from results/reference/ (every switch point of
        // every folder, T=100..10000): user-level threads yield in 20-505 ns (native at P=2
        // and boostfiber/shared_work the slowest: one shared queue), about 250 ns taken;
        // OS threads (pthreads, stdthread: a yield is sched_yield, a kernel context switch)
        // in 0.8-5.2 us, 5 us taken (their P=1 values). Without a backend, the OS threads'
        // (--shard balances by it, default_iterations sizes the forks by it).
        w.cost = [](const Params& p) { return kOsSwitchSeconds * param_number(p, "T") * param_number(p, "K"); };
        w.cost_on = [](const Params& p, const CostOf& on) {
            const bool os_threads = on.family.empty() || on.family == "pthreads" || on.family == "stdthread";
            return (os_threads ? kOsSwitchSeconds : kUserSwitchSeconds) * param_number(p, "T") * param_number(p, "K");
        };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t t = ctx.size("T");
        const std::int64_t k = ctx.i64("K");
        Group<B> group(t);
        if (!group.check_capacity(ctx, t)) return Outcome::failed(group.error());
        std::vector<Padded<std::int64_t>> yields(t);
        StartGate<B> gate(GateWait::spin);
        const bool spawned = spawn_behind(group, gate, t, [&yields, k](std::size_t i) {
            std::int64_t* mine = &yields[i].value;
            for (std::int64_t j = 0; j < k; ++j) {
                B::yield();
                ++*mine;
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        Stopwatch clock;
        gate.go();
        group.join_all();
        const double secs = clock.seconds();
        std::int64_t total = 0;
        for (auto& y : yields) total += y.value;
        if (ctx.inject_fault) total -= 1;
        if (auto bad = expect("yields", total, static_cast<std::int64_t>(t) * k)) return Outcome::failed(*bad);
        return Outcome::measured(secs, secs * 1e9 / (static_cast<double>(t) * static_cast<double>(k)));
    }
};

}  // namespace coopbench
