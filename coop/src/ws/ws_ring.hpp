// ws_ring.hpp — WsRingAlgorithm, the algorithm of `native-ws`: per-processor bounded
// rings with a runnext slot (local_queue.hpp), steal-half from random victims, overflow into
// and fairness checks of the existing global lock-free queue (queue.hpp).
//
// Run by Scheduler<A> (scheduler.hpp; see local_algorithm.hpp); parking and
// notify are the runtime's (park.hpp), so this file has no suspend/notify of its own.
//
// Citation: Negele et al. 2017 Sect. 7 (processor-local ready queues, balancing "only now
// and then") and Sect. 4.4 (round robin within a priority); Go runtime/proc.go (runqput
// with next=true for a woken/spawned goroutine, runqget's inheritTime, schedule's
// `schedtick%61 == 0` global check, findRunnable's stealWork: 4 passes over random
// victims, runnext only on the last pass, the spinning rule). Learnt from, not copied.
//
// Design summary
// - Default-priority activities live in the processor's LocalQueue<Activity, RingCapacity> (kRingCapacity = 4096 in the runtime): a woken
//   or spawned activity goes to runnext (it runs next and inherits the time slice: the
//   cache-hot hand-off of a producer/consumer pair), a yielded one to the ring's tail
//   (behind every other ready activity of this processor: round robin). A full ring moves
//   half of itself to the global Default queue (Go's runqputslow).
// - Realtime/High/Low/Idle stay in the global per-priority queues of the paper: they are rare, and their cross-processor order matters more than locality.
// - pick_next: higher priorities (global) first; every kGlobalCheckInterval-th pick the
//   global Default queue before the ring (so overflowed or externally submitted work is not
//   starved by a busy ring); then the ring (runnext bounded by kMaxRunnextStreak); then the
//   global Default queue, taking one to run and up to kGlobalBatch more into the empty ring
//   (Go's globrunqget); then Low/Idle. Overflow goes to the global queue as one chain
//   (queue.hpp enqueue(Chain&)), not activity by activity.
// - find_work (an idle processor the runtime let spin, SchedulerCore::start_spinning): up to
//   kStealPasses passes over the other processors starting at a random one, stealing half a
//   victim's ring; runnext only on the last pass and only after kRunnextGraceNs (so a busy
//   owner keeps its hand-off, and a stuck one cannot stall it). A pinned runtime hands the policy its processors'
//   cache groups (set_groups, from hwloc): the first pass then visits only the victims
//   that share the thief's last-level cache (steal_passes, local_algorithm.hpp).
//
// Ownership rules: local(i) belongs to processor i: only the thread bound as processor i
// passes it to awakened/yielded/pick_next/find_work. The global queues need a bound
// processor (hazard pointers, queue.hpp). Activities are owned as in global_queue.hpp.
#pragma once

#include <cstdint>
#include <memory>

#include "coop/activity.hpp"
#include "coop/queue.hpp"
#include "coop/src/ws/local_algorithm.hpp"
#include "coop/src/ws/local_queue.hpp"

namespace coop::ws {

// kRingCapacity — the ring of native-ws: 4096 activities per processor (32 KiB), not Go's
// 256: coop's overflow target is the lock-free global queue (3 locked instructions per enqueue
// and per dequeue, one activity at a time), so overflowing is dearer than Go's batched
// runqputslow under a mutex. With 256, switch T=1000 moved 16 % of all yields through the
// global queue (counters overflowed/global_picks, 2026-11-23) and was 1.7x slower than with
// the deque of native-parasail; a steal still takes half of what is there. The default of
// WsRingAlgorithmT, so the policy's tests run at the runtime's size.
inline constexpr std::uint32_t kRingCapacity = 4096;

// WsRingLocal — one processor's state under WsRingAlgorithmT: its ring (with runnext), the
// fairness countdown, the victim chooser, its counters and near victims. Owner-only, but
// thieves reach `ring` through its Stealer.
template <std::uint32_t RingCapacity, class Hooks>
struct alignas(kRingLine) WsRingLocal {
    LocalQueue<Activity, RingCapacity, Hooks> ring;
    unsigned index = 0;
    std::uint32_t until_fairness = kGlobalCheckInterval;  // picks until the fairness check
    XorShift rng{1};
    Counters counters;
    Proximity proximity;  // victims of the own cache group (set_groups)
};

template <std::uint32_t RingCapacity = kRingCapacity, class Hooks = NoRingHooks>
class WsRingAlgorithmT : public PerProcessorLocals<WsRingLocal<RingCapacity, Hooks>> {
    using Base = PerProcessorLocals<WsRingLocal<RingCapacity, Hooks>>;
    using Base::locals_;
    using Base::processors_;

  public:
    // kProcessorLocal — Default-priority activities sit in per-processor queues: an idle
    // processor steals (find_work), and a yield notifies a parked processor (Scheduler).
    static constexpr bool kProcessorLocal = true;

    using Ring = LocalQueue<Activity, RingCapacity, Hooks>;
    using Local = WsRingLocal<RingCapacity, Hooks>;

    explicit WsRingAlgorithmT(unsigned processors) : Base(processors) {
        // One processor: nobody steals (find_work has no victim), so its ring's owner takes
        // without locked RMWs (LocalQueue::set_alone).
        if (processors == 1) locals_[0].ring.set_alone(true);
    }

    // awakened — `a` became ready on (or was spawned by) the processor owning `self`: it
    // runs next there. The runtime then calls the park protocol's notify (Scheduler<A>::awakened),
    // not this algorithm. Executed only by the owner of `self`.
    [[gnu::always_inline]] void awakened(Local& self, Activity* a) {
        if (a->priority != Priority::Default) {
            global_.push(a->priority, a);
            return;
        }
        // The displaced activity (Default: only those enter runnext) goes behind the ready
        // ones as a yielded one does; the overflow chain only when the ring is full.
        if (Activity* old = self.ring.exchange_next(a)) {
            if (!self.ring.try_push(old)) [[unlikely]]
                yielded_slow(self, old);
        }
    }

    // yielded — `a` yielded: behind the other ready activities of this processor. The ring
    // with room is the common case (a plain slot store and a release store of the tail);
    // the overflow chain is built only on the slow path. Executed only by the owner of
    // `self`.
    [[gnu::always_inline]] void yielded(Local& self, Activity* a) {
        if (a->priority == Priority::Default && self.ring.try_push(a)) [[likely]]
            return;
        yielded_slow(self, a);
    }

    // pick_next — the next activity of priority >= min for the processor owning `self`: the
    // ring (runnext first, bounded by kMaxRunnextStreak) in GlobalQueues::pick_around's order.
    [[gnu::always_inline]] Pick pick_next(Local& self, Priority min) {
        return global_.pick_around(
            self, min,
            [&]() __attribute__((always_inline)) -> Pick {  // inlined: the switch path
                auto [a, inherits] = self.ring.pick();
                if (a != nullptr) ++(inherits ? self.counters.runnext_hits : self.counters.local_picks);
                return {a, inherits};
            },
            [&] { return refill(self); });
    }

    // find_work — an idle processor steals half a victim's ring (runnext on the last pass
    // only, after the grace); the runtime decided beforehand that it may look (its spinning
    // rule, SchedulerCore::start_spinning). Executed only by the owner of `self`.
    Pick find_work(Local& self, Priority min) {
        return steal_passes(
            self, locals_.get(), processors_, min,
            [&](Local& victim, bool runnext_too) {
                return victim.ring.stealer().steal_into(self.ring, runnext_too, [] { spin_for_ns(kRunnextGraceNs); });
            },
            [](Local& l) -> std::size_t { return l.ring.size_hint(); });
    }

    // has_ready — any ready activity anywhere (a hint: what a parker re-checks, O(P)).
    bool has_ready() const noexcept {
        if (global_.any()) return true;
        for (unsigned i = 0; i < processors_; ++i)
            if (!locals_[i].ring.empty_hint()) return true;
        return false;
    }

    // global — the global queue of a priority (external submissions and overflow go here;
    // tests: to look at it or dequeue). Enqueue through push_global, never through
    // global(p).enqueue: that would leave the summary word's bit clear over the queued
    // activity, and no pick would find it.
    Queue<Activity>& global(Priority p) noexcept { return global_[p]; }
    // push_global — `a` into the global queue of priority p, as the algorithm enqueues there
    // (with the summary word's bit: local_algorithm.hpp GlobalQueues). Tests place
    // activities with it. Any bound processor.
    void push_global(Priority p, Activity* a) { global_.push(p, a); }

    // kGlobalBatch — how many more activities a processor whose ring (and runnext) ran empty
    // moves from the global Default queue into its ring after taking one to run (Go's
    // globrunqget: at most half its ring). Without it, work that overflowed into the global
    // queue came back one activity per pick, and any activity woken meanwhile (into
    // runnext, or behind the ready ones: a joiner) ran between every two of them: a
    // spawn-all-then-join-all loop of N > the ring's capacity paid two extra switches per
    // child (callgrind: create at N = 4*10^4 821 instructions per child, 468 below the
    // capacity; docs/scaling-model.md).
    static constexpr std::uint32_t kGlobalBatch = RingCapacity / 2 < 128 ? RingCapacity / 2 : 128;

  private:
    // yielded_slow — yielded() for a priority other than Default or a full ring. Executed
    // only by the owner of `self`.
    [[gnu::noinline]] void yielded_slow(Local& self, Activity* a) {
        if (a->priority != Priority::Default) {
            global_.push(a->priority, a);
            return;
        }
        Queue<Activity>::Chain spill;
        if (std::uint32_t moved = self.ring.push(a, overflow_into(spill))) overflow(self, spill, moved);
    }

    // refill — owner, after pick_around took one activity from the global Default queue
    // because the ring and runnext were empty: moves up to kGlobalBatch more, oldest first,
    // to the ring's tail, so the global queue's FIFO order is kept, and returns how many.
    // The ring is empty here (only its owner — this thread — adds to it; thieves only
    // remove), so try_push cannot fail; if it did, the activity goes back to the global
    // queue (never lost). The ring's release store of tail_ publishes each to thieves.
    // The window: an activity taken from the global queue and not yet pushed is in no
    // queue; a parker whose has_ready() scans then (the global queue already empty, the
    // ring not yet filled: a batch of one) finds nothing and sleeps, and our caller may be
    // finish()/yield/a block, which go on to run the activity taken first, not the idle
    // loop's chained notify. So the caller notifies when the result is non-zero (Pick::
    // refilled; Scheduler<A>::pick_next): park.hpp's waker half after the pushes.
    std::uint32_t refill(Local& self) {
        std::uint32_t moved = 0;
        while (moved < kGlobalBatch) {
            Activity* a = global_.take(Priority::Default);
            if (a == nullptr) break;
            COOP_HOOK(refill_after_take, moved, global_[Priority::Default].empty());
            if (!self.ring.try_push(a)) {
                global_.push(Priority::Default, a);
                break;
            }
            ++moved;
        }
        self.counters.refilled += moved;
        return moved;
    }

    // overflow_into — the ring's overflow callable (push_slow hands it half the ring, oldest
    // first, then the pushed item): links them into `spill`, a private chain of the global
    // Default queue, which overflow() appends in one step (queue.hpp enqueue(Chain&): 3
    // locked instructions per batch of RingCapacity/2 + 1, not per activity as Go's
    // runqputslow under its lock is one lock per batch).
    auto overflow_into(Queue<Activity>::Chain& spill) {
        return [this, &spill](Activity* a) { global_[Priority::Default].link(spill, a); };
    }
    // overflow — appends `spill` (the activities push_slow moved) to the global Default
    // queue. The ring gave them up by its head CAS before we link them, so from that CAS
    // until this append they are in no queue: held by this processor, which is running (a
    // parker's has_ready may miss them meanwhile; the caller's notify after the push — the
    // waker's half of park.hpp's pair — comes after this append, as for one enqueue).
    void overflow(Local& self, Queue<Activity>::Chain& spill, std::uint32_t moved) {
        global_.push(Priority::Default, spill);
        self.counters.overflowed += moved;
    }

    GlobalQueues global_;
};

using WsRingAlgorithm = WsRingAlgorithmT<>;
static_assert(coop::internal::Algorithm<WsRingAlgorithm>);

}  // namespace coop::ws
