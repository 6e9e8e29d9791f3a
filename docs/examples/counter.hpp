// counter.hpp — workload `counter`: T threads each add 1 to one shared counter K times under
// the backend's Mutex. Value: wall ns per increment, from the start gate's go() to the last
// join. Self-check: the counter ends at T*K (a mutex that does not exclude loses updates).
#pragma once

#include <cstdint>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

struct Counter {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "counter";
        w.origin = "docs/adding-a-workload.md (an example)";
        w.description = "T threads add 1 to a shared counter K times each under one mutex";
        w.unit = "ns/increment";
        w.params = {{"T", "4", "threads"}, {"K", "10000", "increments per thread"}};
        w.plans["tiny"] = {{{"T", values({1, 4})}, {"K", values({1000})}}};
        w.plans["quick"] = {{{"T", values({1, 4, 16, 64})}, {"K", values({100000})}}};
        w.plans["paper"] = {{{"T", values({1, 2, 4, 8, 16, 32, 64, 128})},
                             {"K", values({1000000})},
                             {"processors", values({1, static_cast<std::int64_t>(m.cores)})}}};
        w.cost = [](const Params& p) { return 5e-8 * param_number(p, "T") * param_number(p, "K"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t t = ctx.size("T");
        const std::int64_t k = ctx.i64("K");
        Group<B> group(t);
        if (!group.check_capacity(ctx, t)) return Outcome::failed(group.error());
        typename B::Mutex mutex;
        std::int64_t counter = 0;  // guarded by mutex
        StartGate<B> gate(GateWait::spin);
        if (!spawn_behind(group, gate, t, [&](std::size_t) {
                for (std::int64_t i = 0; i < k; ++i) {
                    mutex.lock();
                    ++counter;
                    mutex.unlock();
                }
            }))
            return Outcome::failed(group.error());
        Stopwatch clock;
        gate.go();
        group.join_all();
        const double secs = clock.seconds();
        if (ctx.inject_fault) --counter;
        const std::int64_t want = static_cast<std::int64_t>(t) * k;
        if (auto bad = expect("counter", counter, want)) return Outcome::failed(*bad);
        return Outcome::measured(secs, secs * 1e9 / static_cast<double>(want));
    }
};

}  // namespace coopbench
