// local_policy.hpp — what a processor-local scheduling policy offers the runtime: the
// LocalSchedulingPolicy concept and the pieces both policies share (Pick, counters, the
// spinning rule, victim selection).
//
// Wired into the runtime by ws/scheduler_select.hpp and ws/dispatch.cpp (coop::Options::
// scheduling; backends native-ws, native-parasail): the dispatcher reaches each processor's
// `Local` through this_processor(), applies the spinning rule below itself, and parks through
// park.hpp's protocol with has_ready() as the parker's re-check (no second park protocol).
//
// Citation: the per-processor-state interface the issue asks for; Go runtime/proc.go
// (schedule: the global run queue checked every 61 schedticks; findRunnable: steal from
// random victims, runnext only on the last pass; the spinning rule 2*nmspinning < P -
// npidle in wakep/findRunnable), learnt from, not copied.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>

#include "runtimes/native/activity.hpp"

namespace coop::ws {

using coop::internal::Activity;

// Pick — pick_next's answer: the activity (nullptr: none) and whether it inherits the
// running time slice (it was handed off through runnext: the runtime should not reset
// the quantum, so a ping-pong pair shares one quantum, Go's inheritTime).
struct Pick {
    Activity* activity = nullptr;
    bool inherits = false;
};

// Counter — a statistics counter written by one thread (the processor that owns it) and
// read by any: a relaxed load and store, no locked instruction; an atomic so that a reader
// (Runtime::stats, while idle processors still count failed steals) is no data race.
struct Counter {
    std::atomic<std::uint64_t> v{0};
    Counter& operator++() noexcept { return *this += 1; }
    Counter& operator+=(std::uint64_t n) noexcept {
        // relaxed: only the owner writes; readers want a value, not an order.
        v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        return *this;
    }
    operator std::uint64_t() const noexcept { return v.load(std::memory_order_relaxed); }
};

// Counters — per processor, written only by its owner (Counter: relaxed atomics; read by
// Runtime::stats and the tests).
struct Counters {
    Counter local_picks;      // picked from the own ring/deque
    Counter runnext_hits;     // picked from runnext (inherits)
    Counter global_picks;     // picked from a global queue
    Counter fairness_checks;  // global looked at first (every kGlobalCheckInterval)
    Counter steals;           // activities obtained by steals (incl. the one run)
    Counter steal_batches;    // successful find_work steals
    Counter failed_steals;    // find_work calls that found nothing
    Counter overflowed;       // items moved to the global queue by a full ring
};

// kGlobalCheckInterval — every this many picks the global queue is looked at first, so
// that a processor whose local queue never empties cannot starve it (Go: 61, a prime so it
// does not beat against other periodic patterns).
inline constexpr std::uint32_t kGlobalCheckInterval = 61;

// may_spin — Go's rule: a processor starts spinning (looking for work to steal) only if
// fewer than half of the busy processors are already spinning, 2*spinning < P - parked;
// otherwise it should park at once (park.hpp; applied in ws/dispatch.cpp). Bounds the CPU
// burnt by idle processors, and the contention on victims' head_ lines, at large P.
inline bool may_spin(int spinning, int processors, int parked) noexcept {
    return 2 * spinning < processors - parked;
}

// XorShift — the victim chooser's state (per processor, owner-only).
struct XorShift {
    std::uint32_t s;
    explicit XorShift(std::uint32_t seed) : s(seed * 2654435761u + 1u) {}
    std::uint32_t next() noexcept {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    }
};

// LocalSchedulingPolicy — what the (templated) runtime will need.
template <class P>
concept LocalSchedulingPolicy = requires(P& p, typename P::Local& local, Activity* a, coop::Priority min,
                                         int spinning, int parked) {
    { p.local(0u) } -> std::same_as<typename P::Local&>;
    p.awakened(local, a);                                  // a woke up / was spawned here
    p.yielded(local, a);                                   // a yielded: behind the others
    { p.pick_next(local, min) } -> std::same_as<Pick>;     // own queue, fairness, global
    { p.find_work(local, min, spinning, parked) } -> std::same_as<Pick>;  // steal
    { p.has_ready() } -> std::same_as<bool>;               // the parker's re-check
};

}  // namespace coop::ws
