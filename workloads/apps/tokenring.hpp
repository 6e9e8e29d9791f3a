// tokenring.hpp — the Token Ring game (Negele et al. 2017, section 5 and Table 1;
// paper: N = 1000 players, K = 1000 rounds).
//
// N player threads form a ring; each has a one-slot mailbox: with via=monitor (the paper's
// program) a Mailbox (two B::Semaphores), with via=channel the backend's channel of
// capacity 1 (workloads/apps/via.hpp). The main
// thread puts the token, a hand-off counter starting at 0, into player 0's mailbox; each
// player, K times, takes the token from its mailbox, checks that the counter is the one
// ring order predicts for it (player i sees i, i + N, i + 2N, ...), and puts counter + 1
// into the next player's mailbox: N*K hand-offs. The last one lands in player 0's mailbox,
// which main empties after the join. Value: ms from before the first spawn to after the last
// join. Self-check: the final counter and the players' hand-off counts are N*K, and no
// player saw the token out of ring order.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/apps/via.hpp"
#include "workloads/common.hpp"

namespace coopbench {

// TokenRing — the token ring workload (see the file comment).
struct TokenRing {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "tokenring";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "N threads in a ring pass a token K times around through one-slot mailboxes";
        w.unit = "ms";
        w.params = {{"N", "1000", "players (threads)"},
                    {"K", "1000", "rounds of the token around the ring"},
                    apps::via_param()};
        const auto via = apps::both_vias();
        w.plans["tiny"] = {{{"N", values({10})}, {"K", values({50})}, {"via", via}}};
        w.plans["quick"] = {{{"N", values({100})}, {"K", values({200})}, {"via", via}}};
        w.plans["paper"] = {{{"N", values({1000})}, {"K", values({1000})}, {"via", via}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 6e-6 * param_number(p, "N") * param_number(p, "K"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (apps::via_of(ctx) == apps::Via::channel) return run_via<B, apps::Via::channel>(ctx);
        return run_via<B, apps::Via::monitor>(ctx);
    }

    // run_via — the program over the variant's mailboxes.
    template <Backend B, apps::Via via>
    static Outcome run_via(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::int64_t k = ctx.i64("K");
        const auto ring = static_cast<std::int64_t>(n);
        std::unique_ptr<apps::Box<B, std::int64_t, via>[]> boxes(new apps::Box<B, std::int64_t, via>[n]);
        struct alignas(64) Player {
            std::int64_t handoffs = 0, out_of_order = 0;  // written by its player only
        };
        std::vector<Player> players(n);

        Group<B> group(n);
        if (!group.check_capacity(ctx, n)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        const bool spawned = apps::spawn_gated(group, gate, n, [&](std::size_t i) {
            Player& me = players[i];
            auto& next = boxes[(i + 1) % n];
            for (std::int64_t round = 0; round < k; ++round) {
                const std::int64_t token = boxes[i].take();
                if (token != static_cast<std::int64_t>(i) + round * ring) ++me.out_of_order;
                next.put(token + 1);
                ++me.handoffs;
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        boxes[0].put(0);
        group.join_all();
        const double secs = clock.seconds();
        std::int64_t final_token = boxes[0].take();  // the last hand-off, from player N-1

        std::int64_t handoffs = 0, out_of_order = 0;
        for (auto& p : players) {
            handoffs += p.handoffs;
            out_of_order += p.out_of_order;
        }
        if (ctx.inject_fault) final_token += 1;
        if (auto bad = expect("final token", final_token, ring * k)) return Outcome::failed(*bad);
        if (auto bad = expect("hand-offs", handoffs, ring * k)) return Outcome::failed(*bad);
        if (auto bad = expect("hand-offs out of ring order", out_of_order, std::int64_t{0}))
            return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["handoffs"] = static_cast<double>(handoffs);
        return o;
    }
};

}  // namespace coopbench
