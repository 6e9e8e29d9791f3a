// condition.hpp — coop::BasicCondVar<Entry> (coop::CondVar): a condition variable for
// coop::BasicMutex<Entry>, built on finalizers. Entry: the parking entry points (as
// mutex.hpp's); slow paths compiled once per entry in sync.cpp (extern templates below).
//
// Citation: Negele et al. 2017, Sect. 3.2 (task-switch finalizers for synchronization
// primitives); the paper's monitors (A2's ExclusiveBlocks) play this role in Oberon.
//
// Design summary
// - wait(m): suspend with the finalizer park(previous): it enqueues `previous` in the wait
//   queue and only then unlocks `m`. A notifier that locks `m` after that unlock therefore
//   finds the waiter in the queue: "release the mutex and wait" is atomic with respect to
//   notifiers that hold the mutex (and to notifiers that test a predicate protected by it).
// - notify_one(): dequeue one waiter, make it ready; notify_all(): dequeue until empty.
//   With no waiter queued (Queue::empty(), two plain loads) both return at once: a waiter
//   whose park finished before the notifier's lock of the mutex is always seen; one still
//   enqueuing holds the mutex, so only a notify without the mutex can miss it, as allowed.
//   A woken waiter re-locks `m` before wait() returns. No spurious wake-ups are generated,
//   but callers should loop on their predicate as with any condition variable.
//
// Ownership rules
// - The wait queue owns the waiting activities; the notifier that dequeues one owns it
//   until make_ready(). Destroying a CondVar with waiters is an error; destroying it right
//   after a broadcast is allowed (as POSIX allows): park and notify register in the wait
//   queue's guard (wait_queue.hpp), whose destructor waits for them.
#pragma once

#include "activity.hpp"
#include "mutex.hpp"
#include "wait_queue.hpp"

namespace coop {

// BasicCondVar — a condition variable for activities, parking through Entry.
template <class Entry>
class BasicCondVar {
  public:
    using Mutex = BasicMutex<Entry>;

    BasicCondVar() = default;
    BasicCondVar(const BasicCondVar&) = delete;
    BasicCondVar& operator=(const BasicCondVar&) = delete;

    // wait — atomically unlocks `held` (locked by the caller) and blocks until notified;
    // re-locks `held` before returning.
    void wait(Mutex& held) noexcept;

    // wait — waits until `pred()` holds (loops around wait(held)).
    template <class Pred>
    void wait(Mutex& held, Pred pred) {
        while (!pred()) wait(held);
    }

    // notify_one — wakes one waiting activity, if any.
    void notify_one() noexcept;

    // notify_all — wakes every activity waiting when the call began (and possibly some that
    // started waiting during it).
    void notify_all() noexcept;

  private:
    static void park(internal::Activity* previous, void* args) noexcept;
    internal::WaitQueue waiters_;
};

// CondVar — the condition variable of the untyped API (for coop::Mutex).
using CondVar = BasicCondVar<internal::Untyped>;

// Instantiated in sync.cpp (only these entries are supported).
extern template class BasicCondVar<internal::Untyped>;
extern template class BasicCondVar<Algo<Scheduling::global>>;
extern template class BasicCondVar<Algo<Scheduling::work_stealing>>;
extern template class BasicCondVar<Algo<Scheduling::parasail>>;

}  // namespace coop
