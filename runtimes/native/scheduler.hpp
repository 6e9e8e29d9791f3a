// scheduler.hpp — coop's scheduling policy: which ready activity runs next, and how idle
// processors sleep and are woken.
//
// Citation: Negele et al. 2017, Sect. 3.2, Fig. 2 (SWITCH selects from one global ready
// queue per priority, highest first; ENQUEUESWITCH enqueues and, unless the priority is
// Idle, resumes an idle processor when INCREMENT(working) < Processors) and Sect. 4.4 (no
// per-processor run queues, round robin within a priority). The interface follows
// Boost.Fiber's algorithm (awakened / pick_next / has_ready_fibers / suspend_until / notify),
// so that a per-processor work-stealing policy can replace GlobalPriorityPolicy later: it is
// a compile-time choice (the SchedulingPolicy concept; `Policy` in processor.hpp), no
// virtual call sits on the switch path.
//
// Design summary (GlobalPriorityPolicy)
// - kPriorities lock-free queues (queue.hpp). pick_next(min) scans from Realtime down to
//   `min`, skipping queues that look empty (empty() is two plain loads; a dequeue that finds
//   nothing still costs one locked instruction, the xchg publishing hp1).
// - Parking and waking: park.hpp (Parking: one futex word per processor, a count of parked
//   processors and a wake-up token that the woken processor gives back; its header has the
//   protocol and why no wake-up is lost, models/park_notify.pml the Spin model).
//   awakened() wakes a parked processor (Fig. 2: when INCREMENT(working) < Processors, here
//   when parked > 0); yielded() does not: the yielding processor stays busy and will run the
//   queue itself, so no ready activity can be stranded (liveness needs only that *some*
//   processor that will look at the queue is awake).

// Ownership rules
// - The queues own the ready activities; pick_next's caller owns what it returns.
// - Every method may be called by any bound processor concurrently; notify_all() also by
//   non-worker threads (it does not touch the queues).
#pragma once

#include <concepts>
#include <cstdint>

#include "activity.hpp"
#include "park.hpp"
#include "queue.hpp"

namespace coop::internal {

// SchedulingPolicy — what the runtime needs from a policy.
template <class P>
concept SchedulingPolicy = requires(P& p, Activity* a, Priority min, unsigned self,
                                    std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) {
    p.awakened(a);                                  // a became ready: enqueue, wake if needed
    p.yielded(a);                                   // a yielded: enqueue, no wake-up
    { p.pick_next(min) } -> std::same_as<Activity*>;  // next ready of priority >= min
    { p.has_ready() } -> std::same_as<bool>;
    p.suspend(self, timeout_ns, more_work, arg);    // park idle processor `self`
    p.notify();                                     // wake one parked processor if any
    p.notify_all();                                 // wake every parked processor
};

// GlobalPriorityPolicy — the paper's policy: one global lock-free ready queue per priority.
class GlobalPriorityPolicy {
  public:
    explicit GlobalPriorityPolicy(unsigned processors)
        : processors_(processors), parking_(processors) {}

    // awakened — `a` (owned by the caller) is ready; wakes a parked processor unless `a` is
    // Idle-priority (Fig. 2 ENQUEUESWITCH).
    void awakened(Activity* a) noexcept {
        // Read before the enqueue: once queued, `a` may run, finish and be freed elsewhere.
        const Priority priority = a->priority;
        ready_[static_cast<unsigned>(priority)].q.enqueue(a);
        // One processor: the caller is it, and it is not parked (saves notify()'s fence).
        if (priority != Priority::Idle && processors_ > 1) notify();
    }

    // yielded — `a` yielded on a processor that stays busy: enqueue only (see above).
    void yielded(Activity* a) noexcept { ready_[static_cast<unsigned>(a->priority)].q.enqueue(a); }

    // pick_next — the next ready activity of priority >= `min` (highest first), or nullptr.
    Activity* pick_next(Priority min) noexcept {
        for (int p = static_cast<int>(kPriorities) - 1; p >= static_cast<int>(min); --p) {
            auto& q = ready_[p].q;
            if (q.empty()) continue;
            if (Activity* a = q.dequeue()) return a;
        }
        return nullptr;
    }

    // has_ready — whether any ready queue looks non-empty (a hint, like Queue::empty).
    bool has_ready() const noexcept {
        for (auto& r : ready_)
            if (!r.q.empty()) return true;
        return false;
    }

    // notify — ResumeAnyProcessor: wakes one parked processor if some processor is parked
    // and no wake-up is already in flight (park.hpp). Call after publishing work.
    void notify() noexcept { parking_.wake_one(); }

    // notify_all — wakes every parked processor (stop, external submissions, timers).
    void notify_all() noexcept { parking_.wake_all(); }

    // suspend — parks processor `self` (idle) until notify, the timeout (ns, < 0: none) or
    // a spurious wake-up; returns at once if a queue or more_work(arg) has work. true: a
    // notify() chose this processor (Parking::park; counted as a wake-up in statistics).
    bool suspend(unsigned self, std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept {
        struct Look {
            GlobalPriorityPolicy* policy;
            bool (*more_work)(void*);
            void* arg;
        } look{this, more_work, arg};
        return parking_.park(self, timeout_ns, [](void* l) {
            auto* x = static_cast<Look*>(l);
            return x->policy->has_ready() || x->more_work(x->arg);
        }, &look);
    }

    // working — processors not parked (tests and statistics).
    int working() const noexcept { return static_cast<int>(processors_ - parking_.parked()); }
    // parking — the park/wake protocol (tests).
    const Parking& parking() const noexcept { return parking_; }

  private:
    struct alignas(kCacheLine) Ready {
        Queue<Activity> q;
    };
    Ready ready_[kPriorities];
    const unsigned processors_;
    Parking parking_;
};

static_assert(SchedulingPolicy<GlobalPriorityPolicy>);

}  // namespace coop::internal
