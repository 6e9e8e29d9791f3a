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
//   GenericChannel<B, T> — a Go-style channel (runtimes/concept.hpp: capacity 0 is a
//     rendezvous, close, recv's "closed") from one B::Mutex and B::CondVars, for backends
//     that bring no channel of their own; channel_t<B, T> names B's own channel when it has
//     one and this one otherwise, so a workload's `channel` variant is each backend's best.
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

// GenericChannel — a Go-style channel built from B's monitor primitives (see the file
// comment). Buffered (capacity >= 1): a ring as in BoundedBuffer. Unbuffered (capacity 0):
// one offer slot; a sender places its value, then waits until a receiver has taken it (its
// ticket is counted in taken_), so send returns only after the hand-off, as in Go.
// close() wakes every waiter: blocked senders throw ChannelClosed (an unbuffered sender
// whose offer was not taken withdraws it first), receivers drain what is buffered and then
// get std::nullopt. Every wait re-checks its predicate in a loop; every state change
// notifies while holding the mutex, so no wake-up is lost.
template <Backend B, class T>
class GenericChannel {
  public:
    static constexpr std::string_view kind = "generic (one mutex, condition variables)";

    explicit GenericChannel(std::size_t capacity)
        : slots_(new T[capacity == 0 ? 1 : capacity]()), capacity_(capacity) {}
    GenericChannel(const GenericChannel&) = delete;
    GenericChannel& operator=(const GenericChannel&) = delete;

    // send — deliver `v` (see the class comment); throws ChannelClosed when closed.
    void send(T v) {
        mutex_.lock();
        const std::size_t room = capacity_ == 0 ? 1 : capacity_;
        while (count_ == room && !closed_) not_full_.wait(mutex_);
        if (closed_) {
            mutex_.unlock();
            throw ChannelClosed("send on closed channel");
        }
        slots_[(head_ + count_) % room] = std::move(v);
        ++count_;
        not_empty_.notify_one();
        if (capacity_ == 0) {
            const std::uint64_t ticket = ++offered_;
            while (taken_ < ticket && !closed_) taken_cv_.wait(mutex_);
            if (taken_ < ticket) {  // closed before a receiver took the offer: withdraw it
                count_ = 0;
                not_full_.notify_one();
                mutex_.unlock();
                throw ChannelClosed("send on closed channel");
            }
        }
        mutex_.unlock();
    }

    // recv — the oldest value, blocking while empty; std::nullopt once closed and drained.
    std::optional<T> recv() {
        mutex_.lock();
        while (count_ == 0 && !closed_) not_empty_.wait(mutex_);
        if (count_ == 0) {
            mutex_.unlock();
            return std::nullopt;
        }
        const std::size_t room = capacity_ == 0 ? 1 : capacity_;
        std::optional<T> v(std::move(slots_[head_]));
        head_ = (head_ + 1) % room;
        --count_;
        if (capacity_ == 0) {
            ++taken_;
            taken_cv_.notify_all();  // the offering sender waits for its ticket here
        }
        not_full_.notify_one();
        mutex_.unlock();
        return v;
    }

    // close — no more sends; wakes every waiter. A second close throws ChannelClosed.
    void close() {
        mutex_.lock();
        if (closed_) {
            mutex_.unlock();
            throw ChannelClosed("close of closed channel");
        }
        closed_ = true;
        not_full_.notify_all();
        not_empty_.notify_all();
        taken_cv_.notify_all();
        mutex_.unlock();
    }

    // capacity — the capacity the channel was made with (0: unbuffered).
    std::size_t capacity() const { return capacity_; }

  private:
    typename B::Mutex mutex_;
    typename B::CondVar not_full_;   // a slot was freed, or closed
    typename B::CondVar not_empty_;  // a value was placed, or closed
    typename B::CondVar taken_cv_;   // unbuffered: an offer was taken, or closed
    std::unique_ptr<T[]> slots_;
    std::size_t capacity_;
    std::size_t head_ = 0;         // index of the oldest value; guarded by mutex_
    std::size_t count_ = 0;        // values held; guarded by mutex_
    std::uint64_t offered_ = 0;    // unbuffered: offers placed so far; guarded by mutex_
    std::uint64_t taken_ = 0;      // unbuffered: offers taken so far; guarded by mutex_
    bool closed_ = false;          // guarded by mutex_
};

namespace detail {
template <class B, class T, bool own>
struct ChannelOf {
    using type = GenericChannel<B, T>;
};
template <class B, class T>
struct ChannelOf<B, T, true> {
    using type = typename B::template Channel<T>;
};
}  // namespace detail

// channel_t — B's own channel of T when it has one (HasChannel), else GenericChannel.
template <Backend B, class T>
using channel_t = typename detail::ChannelOf<B, T, HasChannel<B>>::type;

// never_closed_channel — a channel C of `capacity` that its program never closes: made with
// C's (capacity, NeverClosed) constructor when it has one (runtimes/concept.hpp: a backend
// may then use its fastest channel, e.g. Boost.Fiber's unbuffered_channel, whose close is
// unsafe), else C(capacity). A prvalue, so C need not be movable.
template <class C>
C never_closed_channel(std::size_t capacity) {
    if constexpr (std::constructible_from<C, std::size_t, NeverClosed>) return C(capacity, NeverClosed{});
    else return C(capacity);
}

// channel_kind — what channel_t<B, T> is, in words (recorded in context.json).
template <Backend B>
constexpr std::string_view channel_kind() {
    return channel_t<B, long>::kind;
}

}  // namespace coopbench::apps
