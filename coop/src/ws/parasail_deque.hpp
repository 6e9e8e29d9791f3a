// parasail_deque.hpp — ParasailDequeAlgorithm, the algorithm of `native-parasail`: each processor
// serves its own deque LIFO, idle processors steal FIFO, the deque guarded by the owner
// guard (parasail_queue.hpp) so the owner pays no atomic RMW in the common case.
//
// Run by Scheduler<A> (scheduler.hpp; see local_algorithm.hpp; parking is the
// runtime's park.hpp protocol — no second park protocol here).
//
// Citation: S. Tucker Taft, "Work stealing and mostly lock-free access", ParaSail blog,
// 24 Sep 2012; Go's global-queue
// fairness check and spinning rule as in ws_ring.hpp.
//
// Design summary
// - Default-priority activities live in the processor's ParasailQueue: a woken/spawned
//   activity is pushed at the back (served next: LIFO), a yielded one at the front (served
//   after all others: round robin, Negele Sect. 4.4, and the first to be stolen).
// - Pure LIFO would let a ping-pong pair (each wakes the other, then blocks) starve a
//   yielded activity forever. As for runnext (local_queue.hpp), after kMaxRunnextStreak
//   consecutive LIFO picks with no yield in between, the newest activity is demoted to the
//   FIFO end (treated as if it yielded) before the next pick. Popping the front instead
//   would be wrong: the front holds the *latest* yield, so with two yielders one would
//   starve. (A deviation from ParaSail, which has no yield; found by the policy tests.)
// - Steal: half of a random victim's items (at most ParasailQueue::kMaxBatch) from its
//   front in one guarded entry, never waiting for the owner; a victim's lone item only on
//   the last pass and after kRunnextGraceNs in which its owner did not touch the deque.
//   ParaSail steals one picothread and its non-owner waits in the guard's queue; on this
//   runtime that made every contended steal a futex sleep + cross-core wake-up and every
//   steal a membarrier IPI (TokenRing at P=2: 22.8 s, 0.16 s now). docs/native-runtime.md.
// - Other priorities, the fairness check every kGlobalCheckInterval picks, the spinning
//   rule: as WsRingAlgorithm.
#pragma once

#include <cstdint>
#include <memory>

#include "coop/activity.hpp"
#include "coop/queue.hpp"
#include "coop/src/ws/local_algorithm.hpp"
#include "coop/src/ws/local_queue.hpp"
#include "coop/src/ws/parasail_queue.hpp"

namespace coop::ws {

// ParasailLocal — one processor's state under ParasailDequeAlgorithmT: its deque, the
// fairness countdown, the LIFO streak, the victim chooser, its counters and near victims.
// Owner-only, but thieves reach `deque` through its Stealer.
template <class Guard>
struct alignas(kRingLine) ParasailLocal {
    ParasailQueue<Activity, Guard> deque;
    unsigned index = 0;
    std::uint32_t until_fairness = kGlobalCheckInterval;  // picks until the fairness check
    unsigned lifo_streak = 0;  // consecutive LIFO picks
    XorShift rng{1};
    Counters counters;
    Proximity proximity;  // victims of the own cache group (set_groups)
};

template <class Guard = coop::OwnerGuardAsym>
class ParasailDequeAlgorithmT : public PerProcessorLocals<ParasailLocal<Guard>> {
    using Base = PerProcessorLocals<ParasailLocal<Guard>>;
    using Base::locals_;
    using Base::processors_;

  public:
    // kProcessorLocal — Default-priority activities sit in per-processor queues: an idle
    // processor steals (find_work), and a yield notifies a parked processor (Scheduler).
    static constexpr bool kProcessorLocal = true;

    using Local = ParasailLocal<Guard>;

    explicit ParasailDequeAlgorithmT(unsigned processors) : Base(processors) {}

    // awakened — served next on this processor (LIFO); the Scheduler notifies (scheduler.hpp).
    [[gnu::always_inline]] void awakened(Local& self, Activity* a) {
        if (a->priority != Priority::Default) global_.push(a->priority, a);
        else self.deque.push_back(a);
    }

    // yielded — behind every other ready activity of this processor. A yield ends a LIFO
    // streak (the streak bounds uninterrupted wake-up chains, see pick_next).
    [[gnu::always_inline]] void yielded(Local& self, Activity* a) {
        if (a->priority != Priority::Default) {
            global_.push(a->priority, a);
            return;
        }
        self.lifo_streak = 0;
        self.deque.push_front(a);
    }

    // pick_next — own deque LIFO (with the streak bound below), in GlobalQueues::
    // pick_around's order.
    [[gnu::always_inline]] Pick pick_next(Local& self, Priority min) {
        return global_.pick_around(self, min, [&]() __attribute__((always_inline)) -> Pick {  // inlined: the switch path
            if (self.lifo_streak >= kMaxRunnextStreak) {
                // Demote the newest woken activity to the FIFO end (as if it yielded), so
                // the next LIFO pick is an older one: a ping-pong pair cannot starve it.
                self.lifo_streak = 0;
                if (self.deque.size_hint() > 1)
                    if (Activity* x = self.deque.pop_back()) self.deque.push_front(x);
            }
            Activity* a = self.deque.pop_back();
            if (a != nullptr) {
                ++self.lifo_streak;
                ++self.counters.local_picks;
                return {a, false};
            }
            self.lifo_streak = 0;
            return {};
        });
    }

    // find_work — an idle processor steals half a victim's deque from its front, in one
    // guarded entry that never waits for the owner (parasail_queue.hpp, steal_half_into); a
    // victim's lone item only on the last pass, after kRunnextGraceNs without the owner
    // touching its deque — as native-ws treats runnext. The runtime decided beforehand that
    // it may look (SchedulerCore::start_spinning). Executed only by the owner of `self`.
    Pick find_work(Local& self, Priority min) {
        return steal_passes(
            self, locals_.get(), processors_, min,
            [&](Local& victim, bool lone_too) {
                return victim.deque.stealer().steal_half_into(self.deque, lone_too, [] { spin_for_ns(kRunnextGraceNs); });
            },
            [](Local& l) -> std::size_t { return l.deque.size_hint(); });
    }

    bool has_ready() const noexcept {
        if (global_.any()) return true;
        for (unsigned i = 0; i < processors_; ++i)
            if (locals_[i].deque.size_hint() != 0) return true;
        return false;
    }

    // global — the global queue of a priority (tests: to look at it or dequeue). Enqueue
    // through push_global, never through global(p).enqueue: that would leave the summary
    // word's bit clear over the queued activity, and no pick would find it.
    Queue<Activity>& global(Priority p) noexcept { return global_[p]; }
    // push_global — `a` into the global queue of priority p, as the algorithm enqueues there
    // (with the summary word's bit: local_algorithm.hpp GlobalQueues). Tests place
    // activities with it. Any bound processor.
    void push_global(Priority p, Activity* a) { global_.push(p, a); }

  private:
    GlobalQueues global_;
};

using ParasailDequeAlgorithm = ParasailDequeAlgorithmT<>;
static_assert(coop::internal::Algorithm<ParasailDequeAlgorithm>);

}  // namespace coop::ws
