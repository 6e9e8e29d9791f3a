// wait_queue.hpp — coop::internal::WaitQueue: the wait queue of Mutex, CondVar and Semaphore,
// with the one guard that lets a primitive be destroyed as soon as its last waiter returned.
//
// Why a guard: Queue::enqueue touches the queue after its linearisation point (the link CAS,
// then the tail swing and, in the primitives, the re-check after the enqueue), and a
// notifier touches it after it made a waiter ready (notify_all dequeues again). A waiter
// woken in that window may return and destroy the primitive (allowed: a mutex right after
// the last unlock, a condition variable after a broadcast, as POSIX allows). So every slow
// path that may still touch the primitive after a waiter could be woken registers in
// `users_` first, at a time when the primitive is certainly alive (the registering thread
// holds the lock, is a committed waiter, or is the caller of notify), and the destructor
// waits until `users_` is 0. One guard for all three primitives (a CondVar without one, destroyed right
// after a broadcast as POSIX allows, had its queue's tail_ written after the free).
//
// Ownership rules
// - The queue owns the waiting activities; whoever dequeues one owns it until make_ready().
// - Destroying a WaitQueue with waiters is an error; with users it waits for them.
#pragma once

#include <atomic>
#include <cstdint>

#include "activity.hpp"
#include "cpu_relax.hpp"
#include "queue.hpp"

namespace coop::internal {

class WaitQueue {
  public:
    WaitQueue() = default;
    WaitQueue(const WaitQueue&) = delete;
    WaitQueue& operator=(const WaitQueue&) = delete;
    // ~WaitQueue — waits until no slow path that registered (Use) is still running.
    ~WaitQueue() {
        // acquire: pairs with Use's release decrement: their last accesses happen before
        // the queue is destroyed.
        while (users_.load(std::memory_order_acquire) != 0) cpu_relax();
    }

    // Use — RAII registration of a slow path that may touch the primitive after a waiter it
    // (or a concurrent caller) woke could have returned.
    class Use {
      public:
        explicit Use(WaitQueue& w) noexcept : c_(w.users_) {
            // relaxed: the registration is sequenced before everything that could let a waiter
            // return (an enqueue, a word or token change: later RMWs and fences on this
            // thread), and that waiter's destructor call happens after it, so its load sees
            // the increment (coherence).
            c_.fetch_add(1, std::memory_order_relaxed);
        }
        ~Use() {
            // release: our last accesses to the primitive happen before the destructor's
            // acquire load that sees the count drop.
            c_.fetch_sub(1, std::memory_order_release);
        }
        Use(const Use&) = delete;
        Use& operator=(const Use&) = delete;

      private:
        std::atomic<std::uint32_t>& c_;
    };

    // enqueue / dequeue / empty — the queue's operations (dequeue from any thread, see
    // dequeue_waiter). Callers hold a Use around them (see above).
    void enqueue(Activity* a) noexcept { q_.enqueue(a); }
    Activity* dequeue() noexcept { return dequeue_waiter(q_); }
    bool empty() const noexcept { return q_.empty(); }

  private:
    Queue<Activity> q_;
    std::atomic<std::uint32_t> users_{0};
};

}  // namespace coop::internal
