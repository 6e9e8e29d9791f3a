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
//   `min`, skipping queues that look empty (empty() is two plain loads; a dequeue costs
//   three locked instructions even when it finds nothing).
// - `working_` counts processors that are not parked (the paper's `working`; we count
//   down on parking instead of up on every enqueue, so a yield costs no extra locked
//   instruction). awakened() resumes a parked processor when working_ < processors;
//   yielded() does not: the yielding processor stays busy and will run the queue itself,
//   so no ready activity can be stranded (liveness needs only that *some* processor that
//   will look at the queue is awake).
// - Parking (suspend) and waking (notify) use one futex word `epoch_`, Dekker-style:
//     parker: e = epoch; working--; fence; if nothing to do: futex_wait(epoch, e)
//     waker:  enqueue; fence; if working < P: epoch++; futex_wake(1)
//   With both fences seq_cst, either the parker's check sees the enqueued activity, or the
//   waker sees the decremented `working_`, bumps the epoch after the parker read it, and the
//   futex_wait returns at once or is woken. No wake-up is lost.
// - `waking_` keeps a burst of enqueues from issuing one futex syscall each: only one wake
//   is in flight; the woken processor clears it (then fences and re-checks the queues, so an
//   enqueue that saw waking_ == true is still seen) and, if it finds more work than it
//   takes, wakes the next one (chained wake-up, see Processor::idle_loop).
//
// Ownership rules
// - The queues own the ready activities; pick_next's caller owns what it returns.
// - Every method may be called by any bound processor concurrently; notify_all() also by
//   non-worker threads (it does not touch the queues).
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <concepts>
#include <cstdint>

#include "runtimes/native/activity.hpp"
#include "runtimes/native/queue.hpp"

namespace coop::internal {

// SchedulingPolicy — what the runtime needs from a policy.
template <class P>
concept SchedulingPolicy = requires(P& p, Activity* a, Priority min, std::int64_t timeout_ns,
                                    bool (*more_work)(void*), void* arg) {
    p.awakened(a);                                  // a became ready: enqueue, wake if needed
    p.yielded(a);                                   // a yielded: enqueue, no wake-up
    { p.pick_next(min) } -> std::same_as<Activity*>;  // next ready of priority >= min
    { p.has_ready() } -> std::same_as<bool>;
    p.suspend(timeout_ns, more_work, arg);          // park an idle processor
    p.notify();                                     // wake one parked processor if any
    p.notify_all();                                 // wake every parked processor
};

// futex_wait / futex_wake — the Linux futex on a 32-bit word (process-private).
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::int64_t timeout_ns) noexcept {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout_ns >= 0) {
        ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
        ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
        tsp = &ts;
    }
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tsp,
            nullptr, 0);
}
inline void futex_wake(std::atomic<std::uint32_t>* word, int n) noexcept {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, n, nullptr,
            nullptr, 0);
}

// GlobalPriorityPolicy — the paper's policy: one global lock-free ready queue per priority.
class GlobalPriorityPolicy {
  public:
    explicit GlobalPriorityPolicy(unsigned processors)
        : processors_(static_cast<int>(processors)), working_(static_cast<int>(processors)) {}

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
    // (or about to park) and no wake-up is already in flight. Call after publishing work.
    void notify() noexcept {
        // seq_cst fence: the waker's half of the Dekker pair (header): orders the enqueue
        // (or other published work) before the load of working_.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        // relaxed: ordered by the fence above; a stale larger value means the parker has not
        // passed its own fence yet and will see our work.
        if (working_.load(std::memory_order_relaxed) >= processors_) return;
        // relaxed load first: skip the RMW while a wake-up is in flight (the common case in
        // a burst). seq_cst exchange: in the order the woken processor's clear relies on.
        if (waking_.load(std::memory_order_relaxed) || waking_.exchange(true, std::memory_order_seq_cst))
            return;
        // seq_cst: the epoch bump must follow our check in the single order, so a parker
        // that read the old epoch cannot sleep through it.
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(&epoch_, 1);
    }

    // notify_all — wakes every parked processor (stop, external submissions, timers).
    void notify_all() noexcept {
        // seq_cst fence + RMW: as notify(), without the working_/waking_ shortcuts.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        epoch_.fetch_add(1, std::memory_order_seq_cst);
        futex_wake(&epoch_, INT_MAX);
    }

    // suspend — parks the calling (idle) processor until notify, the timeout (ns, < 0:
    // none) or a spurious wake-up; returns at once if a queue or more_work(arg) has work.
    void suspend(std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept {
        // seq_cst: read before announcing, so any later notify's bump changes it.
        const std::uint32_t e = epoch_.load(std::memory_order_seq_cst);
        // seq_cst RMW + fence: the parker's half of the Dekker pair (header).
        working_.fetch_sub(1, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!has_ready() && !more_work(arg)) futex_wait(&epoch_, e, timeout_ns);
        // seq_cst: back at work before we clear waking_ (waker reads them in this order).
        working_.fetch_add(1, std::memory_order_seq_cst);
        // seq_cst store + fence: a waker that saw waking_ == true (and therefore skipped
        // its wake-up) precedes this clear; our caller's next look at the queues follows
        // the fence, so it sees that waker's work.
        waking_.store(false, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
    }

    // working — processors not parked (tests and statistics).
    int working() const noexcept { return working_.load(std::memory_order_relaxed); }

  private:
    struct alignas(kCacheLine) Ready {
        Queue<Activity> q;
    };
    Ready ready_[kPriorities];
    const int processors_;
    alignas(kCacheLine) std::atomic<int> working_;
    alignas(kCacheLine) std::atomic<bool> waking_{false};
    alignas(kCacheLine) std::atomic<std::uint32_t> epoch_{0};
};

static_assert(SchedulingPolicy<GlobalPriorityPolicy>);

}  // namespace coop::internal
