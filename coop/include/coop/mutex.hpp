// mutex.hpp — coop::BasicMutex<Entry> (coop::Mutex): a lock-free blocking mutex built on
// task-switch finalizers. Entry: the parking entry points its slow paths call (Entry::suspend,
// Entry::make_ready, as coop::Channel's): internal::Untyped for coop::Mutex (branches once on
// the running runtime's algorithm), coop::Algo<K> for a runtime whose algorithm is K (no
// branch). The slow paths are compiled once per entry in sync.cpp (explicit instantiation for
// those four; the extern template declarations below keep them out of every other TU).
//
// Citation: Negele et al. 2017, Sect. 3.2 (finalizers "are very important for implementing
// synchronization primitives like mutexes": the waiter is enqueued by the activity that
// runs next, and the condition is re-evaluated after enqueueing so no wake-up is lost).
// The lock word follows U. Drepper, "Futexes Are Tricky" (2011), mutex 2: 0 unlocked,
// 1 locked, 2 locked and maybe waiters.
//
// Design summary
// - lock(): CAS 0->1 (the uncontended path: one locked instruction). Otherwise loop {
//   with more than one processor, poll the word with exponential backoff (the holder runs
//   on another processor and critical sections are short; kLockSpins in config.hpp), CAS
//   0->1 (0->2 once we have slept, Drepper); if exchange(2) == 0: acquired; suspend with
//   the finalizer park() }. The woken activity competes again (barging: throughput over
//   FIFO).
// - park(previous) runs on the resumed side: enqueue `previous` in the wait queue, fence,
//   then re-check the word: 0 (released meanwhile, perhaps before our enqueue was visible to
//   the unlocker) -> wake one waiter ourselves; 1 (a new holder that does not know of us) ->
//   CAS it to 2 so that its unlock wakes a waiter; 2 -> its unlock will wake one.
// - unlock(): CAS 1->0; if the word was 2: register as a user, exchange(0), dequeue one
//   waiter and make it ready.
//   Dekker pair: unlocker {exchange(0); fence; dequeue}, parker {enqueue; fence; load word}:
//   either the dequeue sees the parker's item, or the parker sees 0 and wakes one itself.
//
// Ownership rules
// - The wait queue owns the parked activities; the unlocker that dequeues one owns it
//   until make_ready().
// - Like pthread_mutex_t, the holder must unlock; destroying a Mutex with waiters is an
//   error. Destroying it right after the last unlock (by another activity) is allowed: the
//   slow paths that may still touch it after a waiter returned from lock() (unlock with
//   waiters, park) register in the wait queue's guard (wait_queue.hpp) before that waiter
//   can be woken, and the wait queue's destructor waits for them.
#pragma once

#include <atomic>
#include <cstdint>

#include "activity.hpp"
#include "queue.hpp"
#include "wait_queue.hpp"

namespace coop {

template <Scheduling K>
struct Algo;

// BasicMutex — a non-recursive mutex for activities (satisfies Lockable), parking through
// Entry (see the file comment).
template <class Entry>
class BasicMutex {
  public:
    BasicMutex() = default;
    BasicMutex(const BasicMutex&) = delete;
    BasicMutex& operator=(const BasicMutex&) = delete;

    // lock — acquires the mutex, blocking the activity (not its processor) while it is held.
    void lock() noexcept {
        std::uint32_t expected = 0;
        // acquire: the critical section follows the previous holder's release.
        if (word_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
            return;
        lock_slow();
    }

    // try_lock — acquires the mutex if it is free; never blocks.
    bool try_lock() noexcept {
        std::uint32_t expected = 0;
        // acquire: as in lock().
        return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
    }

    // unlock — releases the mutex; wakes one waiter if there may be any.
    void unlock() noexcept {
        std::uint32_t expected = 1;
        // release: publishes the critical section. Only 1 -> 0 here: with waiters (2) the
        // slow path first registers as a user (see ~Mutex), while we still hold the lock.
        if (word_.compare_exchange_strong(expected, 0, std::memory_order_release, std::memory_order_relaxed))
            return;
        unlock_slow();
    }

    // ~Mutex — (the wait queue's) waits until no unlock or park that may still touch the
    // mutex is running. Precondition (as for any mutex): unlocked, no waiters.
    ~BasicMutex() = default;

  private:
    void lock_slow() noexcept;
    void unlock_slow() noexcept;
    void wake_one() noexcept;
    static void park(internal::Activity* previous, void* self) noexcept;
    static void park_enqueue(internal::Activity* previous, BasicMutex* m) noexcept;

    std::atomic<std::uint32_t> word_{0};
    internal::WaitQueue waiters_;  // with the guard of the slow paths (wait_queue.hpp)
};

// Mutex — the mutex of the untyped API (works under every algorithm).
using Mutex = BasicMutex<internal::Untyped>;

// Instantiated in sync.cpp (only these entries are supported).
extern template class BasicMutex<internal::Untyped>;
extern template class BasicMutex<Algo<Scheduling::global>>;
extern template class BasicMutex<Algo<Scheduling::work_stealing>>;
extern template class BasicMutex<Algo<Scheduling::parasail>>;

}  // namespace coop
