// semaphore.hpp — coop::BasicSemaphore<Entry> (coop::Semaphore): a counting semaphore built
// on finalizers, with hand-off. Entry: the parking entry points (as mutex.hpp's); slow paths
// compiled once per entry in sync.cpp (extern templates below).
//
// Citation: Negele et al. 2017, Sect. 3.2 (finalizers re-check the condition after the
// waiter is enqueued, so no wake-up is lost).
//
// Design summary
// - count_ = permits minus committed waiters. acquire(): fetch_sub(1) > 0 -> got a permit;
//   otherwise the caller is a committed waiter and suspends with the finalizer park(), which
//   enqueues it and then calls settle(). release(): fetch_add(1) >= 0 -> nobody waits;
//   otherwise one committed waiter is owed a wake-up: pending_++ and settle(). A woken
//   waiter owns the permit that woke it (hand-off; FIFO among waiters).
// - settle() matches wake-up tokens (pending_) with enqueued waiters: claim a token (CAS
//   pending_ p -> p-1), dequeue; on success wake it and repeat; on an empty queue give the
//   token back, fence and look again: the waiter whose enqueue we missed runs settle()
//   after its enqueue and fence, and then sees the token (Dekker pair), so a token and a
//   waiter never both stay unmatched.
//
// Ownership rules
// - The wait queue owns waiting activities; settle()'s caller owns the one it dequeues.
// - release_slow() and park() may touch the semaphore after a waiter it woke has returned;
//   they register in the wait queue's guard first (while a committed waiter still keeps it
//   alive) and its destructor waits for them (wait_queue.hpp).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "activity.hpp"
#include "queue.hpp"
#include "wait_queue.hpp"

namespace coop {

template <Scheduling K>
struct Algo;

// BasicSemaphore — a counting semaphore for activities, parking through Entry.
template <class Entry>
class BasicSemaphore {
  public:
    // BasicSemaphore — `initial` (>= 0) permits.
    explicit BasicSemaphore(std::ptrdiff_t initial = 0) noexcept : count_(initial) {}
    BasicSemaphore(const BasicSemaphore&) = delete;
    BasicSemaphore& operator=(const BasicSemaphore&) = delete;
    // ~BasicSemaphore — (the wait queue's) waits until no release or park that may still
    // touch it is running.
    ~BasicSemaphore() = default;

    // acquire — takes a permit, blocking the activity until one is released.
    void acquire() noexcept {
        // acq_rel: acquire pairs with the releaser of the permit we take; release keeps the
        // RMW chain (release sequence) intact for later acquirers.
        if (count_.fetch_sub(1, std::memory_order_acq_rel) > 0) return;
        acquire_slow();
    }

    // try_acquire — takes a permit if one is free; never blocks.
    bool try_acquire() noexcept {
        // relaxed: a first look; the CAS below carries the ordering.
        std::int64_t c = count_.load(std::memory_order_relaxed);
        while (c > 0)
            // acq_rel: as acquire().
            if (count_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel, std::memory_order_relaxed))
                return true;
        return false;
    }

    // release — returns a permit, waking one waiter if any is committed.
    void release() noexcept {
        // acq_rel: release publishes our writes to the acquirer of the permit.
        if (count_.fetch_add(1, std::memory_order_acq_rel) >= 0) return;
        release_slow();
    }

  private:
    void acquire_slow() noexcept;
    void release_slow() noexcept;
    void settle() noexcept;
    static void park(internal::Activity* previous, void* self) noexcept;

    alignas(kCacheLine) std::atomic<std::int64_t> count_;
    std::atomic<std::int64_t> pending_{0};
    internal::WaitQueue waiters_;  // with the guard of the slow paths (wait_queue.hpp)
};

// Semaphore — the semaphore of the untyped API (works under every algorithm).
using Semaphore = BasicSemaphore<internal::Untyped>;

// Instantiated in sync.cpp (only these entries are supported).
extern template class BasicSemaphore<internal::Untyped>;
extern template class BasicSemaphore<Algo<Scheduling::global>>;
extern template class BasicSemaphore<Algo<Scheduling::work_stealing>>;
extern template class BasicSemaphore<Algo<Scheduling::parasail>>;

}  // namespace coop
