// global_queue.hpp — GlobalQueueAlgorithm, the paper's scheduling algorithm (backend
// `native`): which ready activity runs next, from one global lock-free ready queue per
// priority.
//
// Citation: Negele et al. 2017, Sect. 3.2, Fig. 2 (SWITCH selects from one global ready
// queue per priority, highest first; ENQUEUESWITCH enqueues and, unless the priority is
// Idle, resumes an idle processor when INCREMENT(working) < Processors) and Sect. 4.4 (no
// per-processor run queues, round robin within a priority). It meets the Algorithm concept
// (algorithm.hpp) as the two processor-local algorithms do; the Scheduler
// (Scheduler<A>, scheduler.hpp) owns what all three share: parking (park.hpp), the spinning
// rule, the park/wake-up counters, and the wake-up of Fig. 2 (after awakened(), unless the
// activity is Idle-priority: Scheduler<A>::awakened).
//
// Design summary (GlobalQueueAlgorithm)
// - kPriorities lock-free queues (queue.hpp). pick_next(min) scans from Realtime down to
//   `min`, skipping queues that look empty (empty() is two plain loads; a dequeue that finds
//   nothing still costs one locked instruction, the xchg publishing hp1).
// - No per-processor state: `Local` is empty, and find_work has nothing to steal (every
//   processor serves the global queues).
//
// Ownership rules
// - The queues own the ready activities; pick_next's caller owns what it returns.
// - Every method may be called by any bound processor concurrently (hazard pointers,
//   queue.hpp).
#pragma once

#include "activity.hpp"
#include "algorithm.hpp"
#include "queue.hpp"

namespace coop::internal {

// GlobalQueueAlgorithm — the paper's algorithm: one global lock-free ready queue per priority.
class GlobalQueueAlgorithm {
  public:
    // Local — no per-processor state (every processor serves the global queues).
    struct Local {};
    // kProcessorLocal — no ready activity sits in a per-processor queue: nothing to steal,
    // and a yield needs no wake-up (Fig. 2: this processor runs the queue itself).
    static constexpr bool kProcessorLocal = false;

    explicit GlobalQueueAlgorithm(unsigned /*processors*/) noexcept {}

    // local — processor i's state (the same empty one for all). Any processor.
    Local& local(unsigned /*i*/) noexcept { return local_; }

    // awakened — `a` (owned by the caller) is ready: enqueued at its priority's tail (the
    // Scheduler then wakes a parked processor, Fig. 2 ENQUEUESWITCH). Any bound processor.
    [[gnu::always_inline]] void awakened(Local&, Activity* a) noexcept {
        ready_[static_cast<unsigned>(a->priority)].q.enqueue(a);
    }

    // yielded — `a` yielded: enqueued at its priority's tail (round robin). Any bound processor.
    [[gnu::always_inline]] void yielded(Local&, Activity* a) noexcept {
        ready_[static_cast<unsigned>(a->priority)].q.enqueue(a);
    }

    // pick_next — the next ready activity of priority >= `min` (highest first), or none. Any
    // bound processor.
    [[gnu::always_inline]] Pick pick_next(Local&, Priority min) noexcept {
        for (int p = static_cast<int>(kPriorities) - 1; p >= static_cast<int>(min); --p) {
            auto& q = ready_[p].q;
            if (q.empty()) continue;
            if (Activity* a = q.dequeue()) return {a};
        }
        return {};
    }

    // find_work — nothing to steal: pick_next already looked at every queue. Any processor.
    Pick find_work(Local&, Priority) noexcept { return {}; }

    // has_ready — whether any ready queue looks non-empty (a hint, like Queue::empty). Any
    // thread.
    bool has_ready() const noexcept {
        for (auto& r : ready_)
            if (!r.q.empty()) return true;
        return false;
    }

  private:
    struct alignas(kCacheLine) Ready {
        Queue<Activity> q;
    };
    Ready ready_[kPriorities];
    Local local_;
};

static_assert(Algorithm<GlobalQueueAlgorithm>);

}  // namespace coop::internal
