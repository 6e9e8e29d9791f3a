// channel.hpp — the blocking buffers the application workloads communicate through, built
// once from the Backend concept's primitives so every app is the same program on every
// backend (Negele et al. 2017, section 5: the apps of Table 1 exchange data through
// monitors, bounded buffers and one-slot mailboxes).
//
// Design:
//   BoundedBuffer<B, T> — a FIFO ring of fixed capacity guarded by one B::Mutex, with two
//     B::CondVars (not_full, not_empty). put() blocks while full, take() while empty.
//     Every wait sits in a loop that re-checks its predicate (spurious and stolen wake-ups),
//     and each put/take notifies the other side after changing the count, while holding
//     the mutex, so a waiter cannot miss the change (no lost wake-up).
//   Mailbox<B, T> — a one-slot buffer built from two B::Semaphores (empty = 1, full = 0):
//     put() takes the empty permit, writes the slot, releases full; take() the reverse.
//     The semaphores carry the slot's value from writer to reader (a release/acquire pair
//     in every backend), and the single empty permit gives one writer at a time exclusive
//     use of the slot, so several writers and readers are safe.
//   channel_t<B, T> — B's own channel when it has one, else GenericChannel<B, T> (one
//     B::Mutex and B::CondVars): both with the backends, in runtimes/channel.hpp, since a
//     backend (Boost.Fiber's, option channel=generic) builds on the generic one too; a
//     workload's `channel` variant is each backend's best.
//
// Ownership: a buffer is owned by whoever constructed it (a workload's run(), a stage of a
// pipeline); it must outlive every thread that uses it, which the owners guarantee by
// joining those threads before the buffer goes out of scope. Neither type allocates after
// construction, and neither spins: blocking goes through the backend, so cooperative
// backends (which never preempt) switch to other threads while one waits.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <stdexcept>
#include <utility>

#include "runtimes/channel.hpp"
#include "runtimes/concept.hpp"

namespace coopbench::apps {

// BoundedBuffer — a blocking FIFO of at most `capacity` values of T (capacity >= 1).
// Any number of threads may put and take concurrently.
template <Backend B, class T>
class BoundedBuffer {
  public:
    // BoundedBuffer — an empty buffer holding at most `capacity` (>= 1) values.
    explicit BoundedBuffer(std::size_t capacity) : slots_(new T[capacity]()), capacity_(capacity) {
        if (capacity == 0) throw std::invalid_argument("BoundedBuffer: capacity must be >= 1");
    }
    BoundedBuffer(const BoundedBuffer&) = delete;
    BoundedBuffer& operator=(const BoundedBuffer&) = delete;

    // put — append `v`, blocking while the buffer is full.
    void put(T v) {
        mutex_.lock();
        while (count_ == capacity_) not_full_.wait(mutex_);
        slots_[(head_ + count_) % capacity_] = std::move(v);
        ++count_;
        not_empty_.notify_one();
        mutex_.unlock();
    }

    // take — remove and return the oldest value, blocking while the buffer is empty.
    T take() {
        mutex_.lock();
        while (count_ == 0) not_empty_.wait(mutex_);
        T v = std::move(slots_[head_]);
        head_ = (head_ + 1) % capacity_;
        --count_;
        not_full_.notify_one();
        mutex_.unlock();
        return v;
    }

    // capacity — the most values the buffer holds at once.
    std::size_t capacity() const { return capacity_; }

  private:
    typename B::Mutex mutex_;
    typename B::CondVar not_full_;   // signalled after a take
    typename B::CondVar not_empty_;  // signalled after a put
    std::unique_ptr<T[]> slots_;
    std::size_t capacity_;
    std::size_t head_ = 0;   // index of the oldest value; guarded by mutex_
    std::size_t count_ = 0;  // values held; guarded by mutex_
};

// Mailbox — a blocking one-slot buffer on two semaphores (see the file comment).
template <Backend B, class T>
class Mailbox {
  public:
    Mailbox() = default;
    Mailbox(const Mailbox&) = delete;
    Mailbox& operator=(const Mailbox&) = delete;

    // put — store `v`, blocking while the slot is occupied.
    void put(T v) {
        empty_.acquire();
        slot_ = std::move(v);
        full_.release();
    }

    // take — remove and return the slot's value, blocking while the slot is empty.
    T take() {
        full_.acquire();
        T v = std::move(slot_);
        empty_.release();
        return v;
    }

  private:
    typename B::Semaphore empty_{1};  // permits to write the slot
    typename B::Semaphore full_{0};   // permits to read the slot
    T slot_{};
};

// GenericChannel, channel_t, channel_kind — the backends' side (runtimes/channel.hpp), under
// the names the workloads use.
using coopbench::channel_kind;
using coopbench::channel_t;
using coopbench::GenericChannel;

// never_closed_channel — a channel C of `capacity` that its program never closes: made with
// C's (capacity, NeverClosed) constructor when it has one (runtimes/concept.hpp: a backend
// may then use its fastest channel, e.g. Boost.Fiber's unbuffered_channel, whose close is
// unsafe), else C(capacity). A prvalue, so C need not be movable.
template <class C>
C never_closed_channel(std::size_t capacity) {
    if constexpr (std::constructible_from<C, std::size_t, NeverClosed>) return C(capacity, NeverClosed{});
    else return C(capacity);
}

}  // namespace coopbench::apps
