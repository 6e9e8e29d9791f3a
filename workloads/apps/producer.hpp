// producer.hpp — Producer/Consumer (Negele et al. 2017, section 5 and Table 1;
// paper: N = 1 and N = 64 pairs, C = 10, K = 10000).
//
// N producers and N consumers share one global buffer of capacity C: with via=monitor (the
// paper's program) a BoundedBuffer (a B::Mutex and two B::CondVars), with via=channel the
// backend's channel of capacity C (workloads/apps/via.hpp). Producer p puts K messages,
// p*K + 1 .. p*K + K; each consumer takes K messages. Value: ms from before the first
// spawn to after the last join. Self-check: the number and the sum of all consumed messages
// equal those produced, and so does a sum of their hashes (so a duplicated and a lost message cannot cancel out).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/apps/via.hpp"
#include "workloads/common.hpp"

namespace coopbench {

// Producer — the producer/consumer workload (see the file comment).
struct Producer {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "producer";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "N producers and N consumers exchange K messages each through one bounded buffer "
                        "of capacity C";
        w.unit = "ms";
        w.params = {{"N", "1", "producer/consumer pairs"},
                    {"C", "10", "capacity of the shared buffer"},
                    {"K", "10000", "messages each producer puts and each consumer takes"},
                    apps::via_param()};
        const auto via = apps::both_vias();
        w.plans["tiny"] = {{{"N", values({1, 4})}, {"C", values({10})}, {"K", values({500})}, {"via", via}}};
        w.plans["quick"] = {{{"N", values({1, 64})}, {"C", values({10})}, {"K", values({1000})}, {"via", via}}};
        w.plans["paper"] = {{{"N", values({1, 64})}, {"C", values({10})}, {"K", values({10000})}, {"via", via}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 4e-6 * param_number(p, "N") * param_number(p, "K"); };
        return w;
    }

    // digest — a non-linear 64-bit mix of a message (the splitmix64 finaliser).
    static std::uint64_t digest(std::int64_t msg) {
        auto x = static_cast<std::uint64_t>(msg);
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        return x ^ (x >> 31);
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (apps::via_of(ctx) == apps::Via::channel) return run_via<B, apps::Via::channel>(ctx);
        return run_via<B, apps::Via::monitor>(ctx);
    }

    // run_via — the program over the variant's buffer.
    template <Backend B, apps::Via via>
    static Outcome run_via(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::int64_t k = ctx.i64("K");
        apps::Pipe<B, std::int64_t, via> buffer(ctx.size("C"));
        struct alignas(64) Tally {
            std::int64_t count = 0, sum = 0;  // written by its consumer only
            std::uint64_t hash = 0;
        };
        std::vector<Tally> tallies(n);

        Group<B> group(2 * n);
        if (!group.check_capacity(ctx, 2 * n)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        // Threads 0..N-1 are producers, N..2N-1 consumers.
        const bool spawned = apps::spawn_gated(group, gate, 2 * n, [&](std::size_t t) {
            if (t < n) {
                const std::int64_t base = static_cast<std::int64_t>(t) * k;
                for (std::int64_t j = 1; j <= k; ++j) buffer.put(base + j);
                return;
            }
            Tally& me = tallies[t - n];
            for (std::int64_t j = 0; j < k; ++j) {
                const std::int64_t v = buffer.take();
                ++me.count;
                me.sum += v;
                me.hash += digest(v);
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        const std::int64_t messages = static_cast<std::int64_t>(n) * k;
        std::int64_t count = 0, sum = 0;
        std::uint64_t hash = 0, want_hash = 0;
        for (auto& t : tallies) {
            count += t.count;
            sum += t.sum;
            hash += t.hash;
        }
        for (std::int64_t v = 1; v <= messages; ++v) want_hash += digest(v);
        if (ctx.inject_fault) sum += 1;
        if (auto bad = expect("messages consumed", count, messages)) return Outcome::failed(*bad);
        if (auto bad = expect("sum consumed", sum, messages * (messages + 1) / 2)) return Outcome::failed(*bad);
        if (auto bad = expect("hash of consumed", hash, want_hash)) return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["threads"] = static_cast<double>(2 * n);
        return o;
    }
};

}  // namespace coopbench
