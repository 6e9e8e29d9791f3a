// owner_access.hpp — workload `owner-access`: one owner and W non-owners use one resource
// (S. T. Taft, "Work stealing and mostly lock-free access", ParaSail blog, 2012; full
// reference in docs/papers.md), the owner making `share_permille` of all accesses.
//
// The owner makes N accesses in bursts of 256; the non-owners make N * (1000 - share) /
// share accesses together, paced against the owner's progress both ways (see the code), so
// that they interleave with the owner's bursts in the given proportion. An access increments an unsynchronised
// counter and checks an owner field. Guards (parameter `guard`): owner-guard (seq_cst
// flags), owner-guard-asym (membarrier), and as references pthread-mutex and tas-backoff
// used by everybody alike. Value: ns per owner access (time inside the owner's bursts / N).
// Counters: owner_ns, nonowner_ns (mean time inside one non-owner access, timed around
// it), owner_slow_pct (owner accesses that took the mutex), membarrier (1 when the asym
// guard really uses membarrier). Self-check: counter = all accesses, no overlap. Runs on
// preemptive backends only (the reference locks spin).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "locks/all.hpp"
#include "locks/owner_guard.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {

// OwnerSide — one interface for the guards and for plain locks used by owner and others.
template <class G>
struct OwnerSide {  // a lock from locks/: everyone locks
    G g{locks::LockOptions{}};
    typename G::Ticket t{};
    bool owner_enter() {
        t = g.try_lock_for(locks::Patience::infinite());
        return true;
    }
    void owner_exit(bool) { g.unlock(t); }
    void nonowner_enter() { t = g.try_lock_for(locks::Patience::infinite()); }
    void nonowner_exit() { g.unlock(t); }
    static constexpr bool uses_membarrier() { return false; }
};
template <bool Asym>
struct OwnerSide<locks::OwnerGuardT<Asym>> {
    locks::OwnerGuardT<Asym> g;
    bool owner_enter() { return g.owner_lock(); }
    void owner_exit(bool locked) { g.owner_unlock(locked); }
    void nonowner_enter() { g.nonowner_lock(); }
    void nonowner_exit() { g.nonowner_unlock(); }
    bool uses_membarrier() const { return g.using_membarrier(); }
};

// GuardList — the guards the `guard` parameter names.
template <class... Gs>
struct GuardList {
    static std::vector<std::string> names() { return {std::string(Gs::name)...}; }
    template <class F>
    static bool with(const std::string& name, F&& fn) {
        return ((Gs::name == name ? (fn.template operator()<Gs>(), true) : false) || ...);
    }
};
using OwnerGuards = GuardList<locks::OwnerGuard, locks::OwnerGuardAsym, locks::PthreadMutex, locks::TasBackoff>;

template <Backend B, class G>
Outcome run_owner_access(const Context& ctx) {
    const std::int64_t n = ctx.i64("N");
    const std::int64_t w = ctx.i64("W");
    const std::int64_t share = ctx.i64("share_permille");
    if (share < 1 || share > 1000) return Outcome::failed("share_permille must be 1..1000");
    const std::int64_t m_total = w == 0 ? 0 : n * (1000 - share) / share;

    auto side = std::make_unique<OwnerSide<G>>();  // the guard (the ticket field is the holder's)
    struct Shared {
        std::atomic<int> inside{0};
        std::atomic<std::int64_t> violations{0};
        alignas(64) std::int64_t counter = 0;           // the resource, protected by the guard
        alignas(64) std::atomic<std::int64_t> progress{0};  // the end of the owner's current burst
        alignas(64) std::atomic<std::int64_t> done{0};      // non-owner accesses done
    } sh;
    auto access = [&sh](int who) {
        // relaxed loads and stores (plain moves, not RMWs, so the check does not swamp the
        // guard's own cost): they detect an overlap whenever one is seen; the guard orders
        // the accesses, and the unsynchronised counter catches lost updates too.
        if (sh.inside.load(std::memory_order_relaxed) != 0) sh.violations.fetch_add(1);
        sh.inside.store(who, std::memory_order_relaxed);
        ++sh.counter;
        if (sh.inside.load(std::memory_order_relaxed) != who) sh.violations.fetch_add(1);
        sh.inside.store(0, std::memory_order_relaxed);
    };
    struct alignas(64) Result {
        std::int64_t accesses = 0, slow = 0, inside_ns = 0;
        double secs = 0;
    };
    std::unique_ptr<Result[]> res(new Result[static_cast<std::size_t>(w) + 1]);

    Group<B> group(static_cast<std::size_t>(w) + 1);
    if (!group.check_capacity(ctx, static_cast<std::size_t>(w) + 1)) return Outcome::failed(group.error());
    StartGate<B> gate(GateWait::spin);
    // Pacing (both ways, so that the share holds whatever the relative speeds): the owner
    // works in bursts of kBurst accesses. Before a burst it publishes `progress` = the
    // burst's end, which makes the non-owner accesses due by then eligible, so they run
    // concurrently with the burst; after it, it waits (untimed) until those are done. A
    // non-owner's k-th of `mine` accesses is due at owner progress (2k+1)n / (2 mine).
    // Only the bursts are timed (two clock reads per kBurst accesses).
    constexpr std::int64_t kBurst = 256;
    std::vector<std::int64_t> mine(static_cast<std::size_t>(w));
    for (std::int64_t j = 0; j < w; ++j) mine[static_cast<std::size_t>(j)] = m_total / w + (j < m_total % w ? 1 : 0);
    auto due = [n](std::int64_t k, std::int64_t m) { return (2 * k + 1) * n / (2 * m); };
    auto owner = [&] {  // thread 0
        Result& r = res[0];
        std::vector<std::int64_t> next(static_cast<std::size_t>(w), 0);  // per non-owner: first not due
        std::int64_t expected = 0, slow = 0, ns = 0;
        for (std::int64_t i = 0; i < n; i += kBurst) {
            const std::int64_t end = std::min(n, i + kBurst);
            // relaxed: pacing only; the guard orders the resource.
            sh.progress.store(end, std::memory_order_relaxed);
            const std::int64_t t0 = locks::now_ns();
            for (std::int64_t k = i; k < end; ++k) {
                const bool locked = side->owner_enter();
                access(1);
                side->owner_exit(locked);
                slow += locked;
            }
            ns += locks::now_ns() - t0;
            for (std::int64_t j = 0; j < w; ++j) {
                auto& k = next[static_cast<std::size_t>(j)];
                const std::int64_t m = mine[static_cast<std::size_t>(j)];
                while (k < m && due(k, m) < end) ++k, ++expected;
            }
            while (sh.done.load(std::memory_order_relaxed) < expected) B::yield();
        }
        r.secs = static_cast<double>(ns) * 1e-9;
        r.accesses = n;
        r.slow = slow;
    };
    auto non_owner = [&](std::int64_t j) {  // threads 1..W
        const std::int64_t m = mine[static_cast<std::size_t>(j)];
        Result& r = res[static_cast<std::size_t>(j) + 1];
        for (std::int64_t k = 0; k < m; ++k) {
            while (sh.progress.load(std::memory_order_relaxed) <= due(k, m)) B::yield();
            const std::int64_t t0 = locks::now_ns();
            side->nonowner_enter();
            access(static_cast<int>(j) + 2);
            side->nonowner_exit();
            r.inside_ns += locks::now_ns() - t0;
            sh.done.fetch_add(1, std::memory_order_relaxed);  // relaxed: pacing only
        }
        r.accesses = m;
    };
    const bool spawned = spawn_behind(group, gate, static_cast<std::size_t>(w) + 1, [&](std::size_t i) {
        if (i == 0) owner();
        else non_owner(static_cast<std::int64_t>(i) - 1);
    });
    if (!spawned) return Outcome::failed(group.error());
    Stopwatch clock;
    gate.go();
    group.join_all();
    const double secs = clock.seconds();

    std::int64_t total = 0, non = 0, non_ns = 0;
    for (std::int64_t j = 0; j <= w; ++j) total += res[static_cast<std::size_t>(j)].accesses;
    for (std::int64_t j = 1; j <= w; ++j)
        non += res[static_cast<std::size_t>(j)].accesses, non_ns += res[static_cast<std::size_t>(j)].inside_ns;
    std::int64_t counter = sh.counter;
    if (ctx.inject_fault) counter -= 1;
    if (sh.violations.load() != 0)
        return Outcome::failed("self-check failed: owner/non-owner overlap " + std::to_string(sh.violations.load()) +
                               " times");
    if (auto bad = expect("accesses", counter, n + m_total)) return Outcome::failed(*bad);
    if (auto bad = expect("counted accesses", total, n + m_total)) return Outcome::failed(*bad);

    const double owner_ns = res[0].secs * 1e9 / static_cast<double>(n);
    Outcome o = Outcome::measured(secs, owner_ns);
    o.counters["owner_ns"] = owner_ns;
    if (non > 0) o.counters["nonowner_ns"] = static_cast<double>(non_ns) / static_cast<double>(non);
    o.counters["owner_slow_pct"] = 100.0 * static_cast<double>(res[0].slow) / static_cast<double>(n);
    o.counters["nonowner_accesses"] = static_cast<double>(non);
    o.counters["membarrier"] = side->uses_membarrier() ? 1 : 0;
    return o;
}
}  // namespace detail

// OwnerAccessWorkload — one owner, W non-owners, the owner's share given; see above.
struct OwnerAccessWorkload {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "owner-access";
        w.origin = "Taft 2012, ParaSail blog: work stealing and mostly lock-free access";
        w.description = "one owner and W non-owners access one resource; the owner makes share_permille of accesses";
        w.unit = "ns/owner access";
        w.params = {
            {"guard", "owner-guard-asym", "owner/non-owner guard, or a lock used by all", 1,
             detail::OwnerGuards::names()},
            {"W", "1", "non-owner threads", 0},
            {"share_permille", "990", "owner's share of all accesses, per mille (1000 = owner only)"},
            {"N", "1000000", "owner accesses"},
        };
        const std::vector<std::string> procs = {std::to_string(std::max<unsigned>(1, m.cores))};
        const auto guards = detail::OwnerGuards::names();
        const Grid full = {{"guard", guards},
                           {"W", detail::strings({1, std::max<std::int64_t>(1, m.cores)})},
                           {"share_permille", values({900, 990, 999, 1000})},
                           {"N", values({2000000})},
                           {"processors", procs}};
        w.plans["owner_access"] = {full};
        w.plans["paper"] = {full};
        w.plans["tiny"] = {{{"guard", guards}, {"W", values({1})}, {"share_permille", values({990})}, {"N", values({20000})}}};
        w.plans["quick"] = {{{"guard", guards},
                             {"W", values({1})},
                             {"share_permille", values({900, 990, 1000})},
                             {"N", values({200000})},
                             {"processors", procs}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) {
            return 5e-8 * param_number(p, "N") * (1 + (1000 - param_number(p, "share_permille", 1000)) / 100);
        };
        return w;
    }

    template <Backend B>
    static constexpr bool supports() {
        return is_preemptive<B>();
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        Outcome out = Outcome::failed("unknown guard '" + ctx.str("guard") + "'");
        detail::OwnerGuards::with(ctx.str("guard"), [&]<class G>() { out = detail::run_owner_access<B, G>(ctx); });
        return out;
    }
};

}  // namespace coopbench
