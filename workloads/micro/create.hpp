// create.hpp — thread creation (Negele et al. 2017, section 6, Fig. 7).
//
// The main thread spawns N threads with an empty body; each is terminated when it is
// first scheduled; the main thread then waits until all have finished. Value: wall ns per
// thread, from before the first spawn to after the last join. Self-check: every thread ran
// exactly once (each writes its own flag byte; join orders those writes before the check).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

struct Create {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "create";
        w.origin = "Negele et al. 2017, Fig. 7";
        w.description = "spawn N threads with an empty body, then join them all";
        w.unit = "ns/thread";
        w.params = {{"N", "1000", "threads created (all alive until joined)"}};
        w.plans["tiny"] = {{{"N", values({1, 100})}}};
        w.plans["quick"] = {{{"N", pow10_values(1, 100000)}}};
        w.plans["paper"] = {{{"N", pow10_values(1, 10000000)}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 3e-6 * param_number(p, "N"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        Group<B> group(n);
        if (!group.check_capacity(ctx, n)) return Outcome::failed(group.error());
        // One flag byte per thread; plain stores to distinct bytes, published by join.
        std::unique_ptr<std::uint8_t[]> ran(new std::uint8_t[n]());
        Stopwatch clock;
        for (std::size_t i = 0; i < n; ++i) {
            std::uint8_t* flag = &ran[i];
            if (!group.spawn([flag] { *flag = 1; })) {
                group.join_all();
                return Outcome::failed(group.error());
            }
        }
        group.join_all();
        const double secs = clock.seconds();
        if (ctx.inject_fault && n > 0) ran[n / 2] = 0;
        const auto count = static_cast<std::int64_t>(std::count(ran.get(), ran.get() + n, std::uint8_t{1}));
        if (auto bad = expect("threads that ran", count, static_cast<std::int64_t>(n))) return Outcome::failed(*bad);
        return Outcome::measured(secs, secs * 1e9 / static_cast<double>(n));
    }
};

}  // namespace coopbench
