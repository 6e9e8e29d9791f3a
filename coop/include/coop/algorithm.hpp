// algorithm.hpp — what a scheduling algorithm offers coop's Scheduler: one concept,
// `Algorithm`, met by the three algorithms (the paper's global queues, GlobalQueueAlgorithm in
// global_queue.hpp, backend `native`; Go-style rings with runnext, ws/ws_ring.hpp, `native-ws`;
// ParaSail's deques, ws/parasail_deque.hpp, `native-parasail`), and the types they share
// (Pick, Counter, Counters).
//
// Citation: the interface follows Boost.Fiber's boost::fibers::algo::algorithm (awakened /
// pick_next / has_ready_fibers), split per processor as Go's runtime/proc.go splits its P
// (runqput / runqget / findRunnable's stealWork): an algorithm is a queue and a pick order;
// parking, the spinning rule and the park/wake-up counters are the Scheduler's, the same for
// every algorithm (Scheduler<A>, scheduler.hpp; park.hpp).
//
// Design summary
// - `A::kProcessorLocal`: whether ready activities sit in per-processor queues (the
//   Scheduler then lets idle processors steal, and a yield wakes a parked processor).
// - `A::Local`: one processor's state (its queue, its pick tick, its counters; empty for the
//   global algorithm). `local(i)` is processor i's; only processor i passes it to awakened,
//   yielded, pick_next and find_work (the owner's calls).
// - awakened(self, a): `a` became ready on self's processor (woken or spawned there: it runs
//   soon); yielded(self, a): `a` yielded (behind the other ready activities: round robin,
//   Negele et al. 2017 Sect. 4.4); pick_next(self, min): the next activity of priority >= min,
//   or none; find_work(self, min): an idle processor steals (nothing for the global
//   algorithm); has_ready(): whether anything looks ready anywhere (the parker's re-check of
//   park.hpp's protocol: any processor may call it).
// - None of them wakes a processor: the Scheduler notifies after publishing (park.hpp's
//   waker half), as each call's Pick or the priority tells it.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>

#include "activity.hpp"
#include "config.hpp"

namespace coop::internal {

// Pick — pick_next's / find_work's answer: the activity (nullptr: none) and whether it
// inherits the running time slice (it was handed off through runnext: the runtime should
// not reset the quantum, so a ping-pong pair shares one quantum, Go's inheritTime).
struct Pick {
    Activity* activity = nullptr;
    bool inherits = false;
    // refilled — activities this pick moved from the global Default queue into the local
    // queue besides `activity` (WsRingAlgorithm's refill). They were in no queue while
    // being moved, so a parker's re-check may have missed them: the runtime notifies
    // (Scheduler<A>::pick_next, scheduler.hpp).
    std::uint32_t refilled = 0;
};

// owner_add — adds `n` to a word that only the calling thread writes and any thread may read
// (atomic loads). On x86-64 one non-locked `add` to memory: with a single writer no update
// can be lost, and a reader's load of the aligned 8-byte word sees the old or the new value,
// never a mix (Intel SDM Vol. 3A, "Guaranteed Atomic Operations": an aligned quadword
// access is atomic) — the relaxed load and store that GCC would otherwise emit as three
// instructions (compilers do not merge atomic accesses), in one. A store of x86 is a release (TSO): with the "memory"
// clobber the compiler keeps every earlier access before it, so owner_add is also a release
// increment (bump relies on it). Under TSan (which cannot see into asm) and elsewhere: the
// relaxed load and the release store themselves.
[[gnu::always_inline]] inline void owner_add(std::atomic<std::uint64_t>& c, std::uint64_t n) noexcept {
#if defined(__x86_64__) && !COOP_TSAN
    static_assert(sizeof(c) == 8 && alignof(std::atomic<std::uint64_t>) == 8);
    asm volatile("addq %1, %0" : "+m"(c) : "er"(n) : "memory");
#else
    // relaxed load: only we write c. release store: see above (bump).
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_release);
#endif
}

// Counter — a statistics counter written by one thread (the processor that owns it) and
// read by any: owner_add, no locked instruction; an atomic so that a reader
// (Runtime::stats, while idle processors still count failed steals) is no data race.
struct Counter {
    std::atomic<std::uint64_t> v{0};
    [[gnu::always_inline]] Counter& operator++() noexcept { return *this += 1; }
    [[gnu::always_inline]] Counter& operator+=(std::uint64_t n) noexcept {
        owner_add(v, n);  // only the owner writes; readers want a value, not an order
        return *this;
    }
    operator std::uint64_t() const noexcept { return v.load(std::memory_order_relaxed); }
};

// Counters — an algorithm's per-processor counters, written only by their owner (Counter:
// relaxed atomics; read by Runtime::stats and the tests; names: docs/native-runtime.md).
struct Counters {
    Counter local_picks;      // picked from the own ring/deque
    Counter runnext_hits;     // picked from runnext (inherits)
    Counter global_picks;     // picked from a global queue
    Counter fairness_checks;  // global looked at first (every kGlobalCheckInterval)
    Counter steals;           // activities obtained by steals (incl. the one run)
    Counter steal_batches;    // successful find_work steals
    Counter failed_steals;    // find_work calls that found nothing
    Counter overflowed;       // items moved to the global queue by a full ring
    Counter near_steals;      // steal batches taken in the first, own-cache-group pass
    Counter refilled;         // items moved from the global Default queue into an empty ring
};

// Algorithm — what the Scheduler needs from a scheduling algorithm (see the file comment).
template <class A>
concept Algorithm = requires(A& alg, const A& calg, typename A::Local& self, Activity* a, Priority min) {
    { A::kProcessorLocal } -> std::convertible_to<bool>;    // per-processor queues?
    { alg.local(0u) } -> std::same_as<typename A::Local&>;
    alg.awakened(self, a);                                   // woken / spawned here
    alg.yielded(self, a);                                    // behind the others
    { alg.pick_next(self, min) } -> std::same_as<Pick>;      // the next to run here
    { alg.find_work(self, min) } -> std::same_as<Pick>;      // an idle processor steals
    { calg.has_ready() } -> std::same_as<bool>;              // the parker's re-check
};

}  // namespace coop::internal
