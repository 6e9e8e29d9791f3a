// skynet.hpp — skynet: a tree of threads that stay alive while their children run (the
// classic runtime benchmark of A. Temerev, github.com/atemerev/skynet: 10^6 leaves).
//
// The root has B children, each of those B children, down to L levels: B^L leaves, and
// sum_{l=1..L} B^l spawned threads. A leaf returns its index among the leaves
// (0 .. B^L - 1); an inner thread spawns its B children, joins them all and returns the sum
// of their results. The root runs in the workload's own thread. Value: ms for the whole
// tree, from the root's first spawn to its last join. Self-check: the root's sum is
// n(n-1)/2 with n = B^L.
//
// Unlike `create`, the threads live at once depends on the backend's scheduling order: a
// FIFO run queue (native) runs the tree breadth-first, so every inner thread (111,111 at
// L=6) is blocked in a join holding a stack while the 10^6 leaves wait to run; a LIFO
// runnext (native-ws, Go) goes depth-first and keeps few alive. The capacity check
// therefore counts every spawned thread as live (the worst case).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

struct Skynet {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "skynet";
        w.origin = "A. Temerev, skynet (github.com/atemerev/skynet): 10^6 leaves at L=6";
        w.description = "a tree of B^L leaf threads; every inner thread spawns B children, joins them and sums";
        w.unit = "ms";
        w.params = {{"L", "6", "levels below the root (B^L leaves)"}, {"B", "10", "children per inner thread", 2}};
        const auto cores = static_cast<std::int64_t>(m.cores);
        w.plans["tiny"] = {{{"L", values({1, 2, 3})}}};
        w.plans["quick"] = {{{"L", values({2, 3, 4, 5})}, {"processors", values({1, cores})}}};
        w.plans["paper"] = {{{"L", values({2, 3, 4, 5, 6})}, {"processors", values({1, cores})}}};
        // ~1 us per thread (native, skynet L=6 on a 2-core host), threads ~ 1.11 * B^L.
        w.cost = [](const Params& p) { return 1e-6 * static_cast<double>(threads(p)); };
        return w;
    }

    // threads — every thread the tree spawns: B + B^2 + ... + B^L.
    static std::size_t threads(std::size_t levels, std::size_t fanout) {
        std::size_t total = 0, width = 1;
        for (std::size_t l = 0; l < levels; ++l) {
            width *= fanout;
            total += width;
        }
        return total;
    }
    static std::size_t threads(const Params& p) {
        return threads(static_cast<std::size_t>(param_number(p, "L", 6)),
                       static_cast<std::size_t>(param_number(p, "B", 10)));
    }

    // Shared — the tree's parameters and its first failure (a refused spawn).
    struct Shared {
        std::int64_t levels = 0;
        std::uint64_t fanout = 0;
        std::atomic<bool> failed{false};
        std::string error;  // written once, by the thread that set `failed`; read after the joins
        void fail(const std::string& why) {
            // acq_rel: only the first failure writes `error`; the joins order it before the read.
            if (!failed.exchange(true, std::memory_order_acq_rel)) error = why;
        }
    };

    // Frame — an inner thread's state, on its own stack: its children read their level and
    // index from it and write their sums into it (the children's closures hold a Frame* and a
    // slot: 16 bytes, so that a coop descriptor with its closure fits a 64-byte block).
    struct Frame {
        Shared* shared;
        std::int64_t level;
        std::uint64_t index;
        std::vector<std::int64_t> sums;
    };

    // node — thread `slot` of `parent`: a leaf returns its index, an inner thread the sum of
    // its children's results.
    template <Backend B>
    static void node(Frame* parent, std::size_t slot) {
        Shared& s = *parent->shared;
        const std::int64_t level = parent->level + 1;
        const std::uint64_t index = parent->index * s.fanout + slot;
        if (level == s.levels) {
            parent->sums[slot] = static_cast<std::int64_t>(index);
            return;
        }
        Frame me{&s, level, index, std::vector<std::int64_t>(s.fanout, 0)};
        {
            Group<B> group(s.fanout);
            for (std::size_t i = 0; i < s.fanout; ++i) {
                // relaxed: a hint to stop spawning early; the failure itself is recorded by fail().
                if (s.failed.load(std::memory_order_relaxed)) break;
                if (!group.spawn([f = &me, i] { node<B>(f, i); })) {
                    s.fail(group.error());
                    break;
                }
            }
            group.join_all();  // orders the children's writes to me.sums before the sum
            if (!group.error().empty()) s.fail(group.error());  // a refused spawn, or a child that never ran
        }
        std::int64_t sum = 0;
        for (std::int64_t v : me.sums) sum += v;
        parent->sums[slot] = sum;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const auto levels = ctx.i64("L");
        const auto fanout = static_cast<std::uint64_t>(ctx.i64("B"));
        const std::size_t total = threads(static_cast<std::size_t>(levels), fanout);
        std::uint64_t leaves = 1;
        for (std::int64_t l = 0; l < levels; ++l) leaves *= fanout;
        // The sum must fit an int64: n(n-1)/2 < 2^63.
        if (leaves > (std::uint64_t{1} << 31))
            return Outcome::failed("skynet: B^L = " + std::to_string(leaves) + " leaves is more than 2^31");
        {
            // Every spawned thread may be alive at once (a breadth-first order): check them all.
            Group<B> probe;
            if (!probe.check_capacity(ctx, total)) return Outcome::failed(probe.error());
        }
        Shared shared;
        shared.levels = levels;
        shared.fanout = fanout;
        Frame top{&shared, -1, 0, std::vector<std::int64_t>(1, 0)};
        Stopwatch clock;
        node<B>(&top, 0);  // the root, in this thread
        const double secs = clock.seconds();
        // acquire: with fail()'s acq_rel exchange (and the joins, which order every thread's
        // writes before this one) the winner's write of `error` is visible here.
        if (shared.failed.load(std::memory_order_acquire)) return Outcome::failed(shared.error);
        std::int64_t sum = top.sums[0];
        if (ctx.inject_fault) --sum;
        const auto n = static_cast<std::int64_t>(leaves);
        if (auto bad = expect("root's sum", sum, n * (n - 1) / 2)) return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["threads"] = static_cast<double>(total);
        o.counters["leaves"] = static_cast<double>(leaves);
        return o;
    }
};

}  // namespace coopbench
