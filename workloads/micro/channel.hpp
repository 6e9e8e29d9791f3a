// channel.hpp — workload `channel`: the cost of one hand-off over a channel (a Fig.-8-like
// microbenchmark beside `switch`, Negele et al. 2017, section 6).
//
// T pairs play ping-pong: in each pair, ping sends j (j = 0..K-1) over channel `there` and
// receives the reply over channel `back`; pong receives each value and sends it + 1 back.
// Both channels have capacity C (0: unbuffered, a rendezvous) and are never closed. The
// channel is each backend's best (apps::channel_t: its own channel when it has one, made
// with apps::never_closed_channel, else GenericChannel from its mutex and condition
// variables). Value: wall ns per hand-off = elapsed / (2*T*K), from
// opening the start gate to the last join. Self-check: every ping received K replies adding
// up to K(K+1)/2.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/common.hpp"

namespace coopbench {

struct ChannelPingPong {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "channel";
        w.origin = "hand-off microbenchmark (ping-pong over channel_t; cf. Negele et al. 2017, Fig. 8)";
        w.description = "T pairs ping-pong K values over two channels of capacity C";
        w.unit = "ns/hand-off";
        w.params = {{"T", "1", "pairs"}, {"K", "10000", "round trips per pair"}, {"C", "0", "channel capacity (0: unbuffered)", 0}};
        w.plans["tiny"] = {{{"T", values({1, 3})}, {"K", values({100})}, {"C", values({0, 1})}}};
        // quick: 500 round trips, not 2000: on OS threads a hand-off is a futex wake (several
        // microseconds), and at 2000 this workload alone took a fifth of run.sh on 2 cores.
        w.plans["quick"] = {{{"T", values({1, 10, 100})}, {"K", values({500})}, {"C", values({0, 1})}}};
        w.plans["paper"] = {{{"T", values({1, 10, 100, 1000})}, {"K", values({10000})}, {"C", values({0, 1})}}};
        // Expected seconds, roughly: ~1 us per round trip on the slower backends.
        w.cost = [](const Params& p) { return 1e-6 * param_number(p, "T") * param_number(p, "K"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        using Chan = apps::channel_t<B, std::int64_t>;
        const std::size_t t = ctx.size("T");
        const std::int64_t k = ctx.i64("K");
        const std::size_t c = ctx.size("C");
        Group<B> group(2 * t);
        if (!group.check_capacity(ctx, 2 * t)) return Outcome::failed(group.error());
        std::vector<std::unique_ptr<Chan>> there, back;
        for (std::size_t i = 0; i < t; ++i) {
            // Never closed: a backend may use its channel without close (never_closed_channel).
            there.push_back(std::unique_ptr<Chan>(new Chan(apps::never_closed_channel<Chan>(c))));
            back.push_back(std::unique_ptr<Chan>(new Chan(apps::never_closed_channel<Chan>(c))));
        }
        std::vector<Padded<std::int64_t>> sums(t), replies(t);
        StartGate<B> gate(GateWait::spin);
        const bool spawned = spawn_behind(group, gate, 2 * t, [&, k](std::size_t i) {
            const std::size_t pair = i / 2;
            Chan& out = *there[pair];
            Chan& in = *back[pair];
            if (i % 2 == 0) {  // ping
                std::int64_t sum = 0, got = 0;
                for (std::int64_t j = 0; j < k; ++j) {
                    out.send(j);
                    if (std::optional<std::int64_t> v = in.recv()) {
                        sum += *v;
                        ++got;
                    }
                }
                sums[pair].value = sum;
                replies[pair].value = got;
            } else {  // pong
                for (std::int64_t j = 0; j < k; ++j)
                    if (std::optional<std::int64_t> v = out.recv()) in.send(*v + 1);
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        Stopwatch clock;
        gate.go();
        group.join_all();
        const double secs = clock.seconds();
        std::int64_t total = 0, sum = 0;
        for (std::size_t i = 0; i < t; ++i) {
            total += replies[i].value;
            sum += sums[i].value;
        }
        if (ctx.inject_fault) total -= 1;
        if (auto bad = expect("replies", total, static_cast<std::int64_t>(t) * k)) return Outcome::failed(*bad);
        if (auto bad = expect("sum of replies", sum, static_cast<std::int64_t>(t) * (k * (k + 1) / 2)))
            return Outcome::failed(*bad);
        return Outcome::measured(secs, secs * 1e9 / (2.0 * static_cast<double>(t) * static_cast<double>(k)));
    }
};

}  // namespace coopbench
