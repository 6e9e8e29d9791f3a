// city.hpp — the City simulation (Negele et al. 2017, section 5 and Table 1;
// paper: N = 1000 houses, K = 10 units, C = 100 capacity).
//
// One power-plant thread and N house threads share a river (a mutex-guarded counter of
// the water drawn) and the plant's energy store (a buffer of capacity C, one entry per unit
// of energy: with via=monitor, the paper's program, a BoundedBuffer; with via=channel the
// backend's channel of capacity C, workloads/apps/via.hpp; the river is a mutex in both). The plant repeatedly draws one unit of water and stores one unit of
// energy, blocking while its store holds C units, and stops after N*K units. Each house, K
// times, takes one unit of energy (blocking while the store is empty) and draws one unit of
// water. Value: ms from before the first spawn to after the last join (the whole program,
// thread creation included). Self-check: energy produced = consumed = N*K and water drawn
// = 2*N*K.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/apps/via.hpp"
#include "workloads/common.hpp"

namespace coopbench {

// City — the City workload (see the file comment); run() is the same program on every backend.
struct City {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "city";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "a power plant fills an energy store of capacity C; N houses each take K units "
                        "of energy and K units of water";
        w.unit = "ms";
        w.params = {{"N", "1000", "houses (threads)"},
                    {"K", "10", "units of energy and of water each house consumes"},
                    {"C", "100", "units of energy the plant can store"},
                    apps::via_param()};
        const auto via = apps::both_vias();
        w.plans["tiny"] = {{{"N", values({10})}, {"K", values({10})}, {"C", values({5})}, {"via", via}}};
        w.plans["quick"] = {{{"N", values({500})}, {"K", values({10})}, {"C", values({100})}, {"via", via}}};
        w.plans["paper"] = {{{"N", values({1000})}, {"K", values({10})}, {"C", values({100})}, {"via", via}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 1.5e-5 * param_number(p, "N") * param_number(p, "K"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (apps::via_of(ctx) == apps::Via::channel) return run_via<B, apps::Via::channel>(ctx);
        return run_via<B, apps::Via::monitor>(ctx);
    }

    // run_via — the program over the variant's energy store.
    template <Backend B, apps::Via via>
    static Outcome run_via(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::int64_t k = ctx.i64("K");
        const std::int64_t units = static_cast<std::int64_t>(n) * k;

        struct River {
            typename B::Mutex mutex;
            std::int64_t drawn = 0;  // guarded by mutex
            void draw() {
                mutex.lock();
                ++drawn;
                mutex.unlock();
            }
        } river;
        apps::Pipe<B, std::uint8_t, via> store(ctx.size("C"));
        std::int64_t produced = 0;                         // written by the plant only
        std::vector<Padded<std::int64_t>> consumed(n);     // house i writes consumed[i] only

        Group<B> group(n + 1);
        if (!group.check_capacity(ctx, n + 1)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        // Thread 0 is the plant, threads 1..N the houses; join publishes their counters.
        const bool spawned = apps::spawn_gated(group, gate, n + 1, [&](std::size_t i) {
            if (i == 0) {
                for (std::int64_t u = 0; u < units; ++u) {
                    river.draw();
                    store.put(1);
                    ++produced;
                }
            } else {
                std::int64_t& mine = consumed[i - 1].value;
                for (std::int64_t j = 0; j < k; ++j) {
                    mine += store.take();
                    river.draw();
                }
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        std::int64_t used = 0;
        for (auto& c : consumed) used += c.value;
        if (ctx.inject_fault) used -= 1;
        if (auto bad = expect("energy produced", produced, units)) return Outcome::failed(*bad);
        if (auto bad = expect("energy consumed", used, units)) return Outcome::failed(*bad);
        if (auto bad = expect("water drawn", river.drawn, 2 * units)) return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["threads"] = static_cast<double>(n + 1);
        return o;
    }
};

}  // namespace coopbench
