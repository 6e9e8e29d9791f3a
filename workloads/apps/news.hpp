// news.hpp — the News agency (Negele et al. 2017, section 5 and Table 1;
// paper: N = 1000 customers, M = 10 reporters, K = 10 messages).
//
// Each of M reporters publishes K distinct messages on one shared board, a monitor (a
// B::Mutex and a B::CondVar) over an append-only array of M*K slots and its count. Every
// one of N customers reads every message once: it waits on the condition while no message
// is new to it, takes the count under the lock, then reads the new slots after unlocking
// (slots below the count are never written again, and the lock's release/acquire orders
// their writes before the reads). Value: ms from before the first spawn to after the last
// join. Self-check: each customer read M*K messages whose checksum (a sum of hashes)
// equals the published messages'.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/common.hpp"

namespace coopbench {

// News — the news agency workload (see the file comment).
struct News {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "news";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "M reporters each publish K messages on a board (monitor); N customers each read "
                        "every message once";
        w.unit = "ms";
        w.params = {{"N", "1000", "customers (threads)"},
                    {"M", "10", "reporters (threads)"},
                    {"K", "10", "messages per reporter"}};
        w.plans["tiny"] = {{{"N", values({20})}, {"M", values({3})}, {"K", values({5})}}};
        w.plans["quick"] = {{{"N", values({1000})}, {"M", values({10})}, {"K", values({10})}}};
        w.plans["paper"] = {{{"N", values({1000})}, {"M", values({10})}, {"K", values({10})}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 1e-6 * param_number(p, "N") * param_number(p, "M") * param_number(p, "K"); };
        return w;
    }

    // message — the k-th message of reporter r: distinct for every (r, k).
    static std::int64_t message(std::int64_t r, std::int64_t k, std::int64_t per) { return r * per + k + 1; }
    // digest — what a customer adds to its checksum per message: a non-linear 64-bit mix
    // (the splitmix64 finaliser), so a message read twice and another missed do not cancel
    // out as they could in a plain sum.
    static std::uint64_t digest(std::int64_t msg) {
        auto x = static_cast<std::uint64_t>(msg);
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
        return x ^ (x >> 31);
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::size_t m = ctx.size("M");
        const std::int64_t k = ctx.i64("K");
        const std::size_t total = m * static_cast<std::size_t>(k);

        struct Board {
            typename B::Mutex mutex;
            typename B::CondVar published;  // notified (all) after each new message
            std::unique_ptr<std::int64_t[]> slots;
            std::size_t count = 0;  // guarded by mutex; slots [0, count) are immutable
        } board;
        board.slots.reset(new std::int64_t[total]());
        struct alignas(64) Reader {
            std::int64_t read = 0;  // written by its customer only
            std::uint64_t sum = 0;
        };
        std::vector<Reader> readers(n);

        Group<B> group(n + m);
        if (!group.check_capacity(ctx, n + m)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        // Threads 0..M-1 are reporters, M..M+N-1 customers.
        const bool spawned = apps::spawn_gated(group, gate, n + m, [&](std::size_t t) {
            if (t < m) {
                for (std::int64_t j = 0; j < k; ++j) {
                    board.mutex.lock();
                    board.slots[board.count++] = message(static_cast<std::int64_t>(t), j, k);
                    board.published.notify_all();
                    board.mutex.unlock();
                }
                return;
            }
            Reader& me = readers[t - m];
            std::size_t seen = 0;
            while (seen < total) {
                board.mutex.lock();
                while (board.count == seen) board.published.wait(board.mutex);
                const std::size_t upto = board.count;
                board.mutex.unlock();
                for (; seen < upto; ++seen) {
                    me.sum += digest(board.slots[seen]);
                    ++me.read;
                }
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        std::uint64_t want_sum = 0;
        for (std::size_t r = 0; r < m; ++r)
            for (std::int64_t j = 0; j < k; ++j) want_sum += digest(message(static_cast<std::int64_t>(r), j, k));
        if (ctx.inject_fault && n > 0) readers[n / 2].sum -= 1;
        for (std::size_t i = 0; i < n; ++i) {
            const std::string who = "customer " + std::to_string(i);
            if (auto bad = expect(who + " messages read", readers[i].read, static_cast<std::int64_t>(total)))
                return Outcome::failed(*bad);
            if (auto bad = expect(who + " checksum", readers[i].sum, want_sum)) return Outcome::failed(*bad);
        }
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["threads"] = static_cast<double>(n + m);
        return o;
    }
};

}  // namespace coopbench
