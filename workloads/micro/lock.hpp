// lock.hpp — local and global locking (Negele et al. 2017, section 6, Fig. 9).
//
// T threads each lock and unlock a mutex K times, incrementing a counter inside the
// critical section: their own mutex and counter (lock-local) or one shared mutex and one
// shared, unsynchronised counter (lock-global: a lost update means mutual exclusion
// failed). Value: wall ns per lock+unlock pair = elapsed / (T*K). Self-check: the
// counters add up to T*K.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
inline std::vector<std::string> lock_threads(unsigned cores, std::int64_t upto) {
    // 1, 2, 4, ... up to max(upto, 4 * cores): scales with the machine.
    std::vector<std::string> v;
    const std::int64_t top = std::max<std::int64_t>(upto, 4 * static_cast<std::int64_t>(cores));
    for (std::int64_t x = 1; x <= top; x *= 2) v.push_back(std::to_string(x));
    return v;
}

template <Backend B, bool Global>
Outcome run_lock(const Context& ctx) {
    const std::size_t t = ctx.size("T");
    const std::int64_t k = ctx.i64("K");
    struct alignas(64) Slot {
        typename B::Mutex mutex;
        std::int64_t counter = 0;
    };
    // Global: all threads use slot 0; local: thread i uses slot i.
    std::unique_ptr<Slot[]> slots(new Slot[Global ? 1 : t]);
    Group<B> group(t);
    if (!group.check_capacity(ctx, t)) return Outcome::failed(group.error());
    StartGate<B> gate(GateWait::spin);
    const bool spawned = spawn_behind(group, gate, t, [&slots, k](std::size_t i) {
        Slot* s = &slots[Global ? 0 : i];
        for (std::int64_t j = 0; j < k; ++j) {
            s->mutex.lock();
            ++s->counter;
            s->mutex.unlock();
        }
    });
    if (!spawned) return Outcome::failed(group.error());
    Stopwatch clock;
    gate.go();
    group.join_all();
    const double secs = clock.seconds();
    std::int64_t total = 0;
    for (std::size_t i = 0; i < (Global ? 1 : t); ++i) total += slots[i].counter;
    if (ctx.inject_fault) total += 1;
    if (auto bad = expect("critical sections", total, static_cast<std::int64_t>(t) * k)) return Outcome::failed(*bad);
    return Outcome::measured(secs, secs * 1e9 / (static_cast<double>(t) * static_cast<double>(k)));
}
}  // namespace detail

struct LockLocal {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w;
        w.name = "lock-local";
        w.origin = "Negele et al. 2017, Fig. 9 (local)";
        w.description = "T threads each lock and unlock their own mutex K times";
        w.unit = "ns/lock";
        w.params = {{"T", "2", "threads"}, {"K", "100000", "lock+unlock pairs per thread"}};
        w.plans["tiny"] = {{{"T", values({1, 4})}, {"K", values({1000})}}};
        w.plans["quick"] = {{{"T", detail::lock_threads(m.cores, 64)}, {"K", values({20000})}}};
        w.plans["paper"] = {{{"T", detail::lock_threads(m.cores, 64)}, {"K", values({100000})}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 2e-8 * param_number(p, "T") * param_number(p, "K"); };
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return detail::run_lock<B, false>(ctx);
    }
};

struct LockGlobal {
    static WorkloadInfo info(const Machine& m) {
        WorkloadInfo w = LockLocal::info(m);
        w.name = "lock-global";
        w.origin = "Negele et al. 2017, Fig. 9 (global)";
        w.description = "T threads lock and unlock one shared mutex K times each";
        return w;
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        return detail::run_lock<B, true>(ctx);
    }
};

}  // namespace coopbench
