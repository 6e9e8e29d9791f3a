// channel.hpp — the channel a backend without one of its own gets, built from the Backend
// concept's monitor primitives, and which channel a backend has: with the backends, so that a
// backend that builds on it (Boost.Fiber's, option channel=generic) includes no workload.
//
//   GenericChannel<B, T> — a Go-style channel (concept.hpp: capacity 0 is a rendezvous,
//     close, recv's "closed") from one B::Mutex and B::CondVars, for backends that bring no
//     channel of their own.
//   channel_t<B, T> — B's own channel (HasChannel) when it has one, else GenericChannel<B, T>:
//     what the workloads' channels are (workloads/apps/channel.hpp, via.hpp).
//   channel_kind<B>() — what channel_t<B, T> is, in words (recorded in context.json).
//
// Ownership and blocking as the workloads' buffers (workloads/apps/channel.hpp): a channel is
// owned by whoever constructed it and must outlive every thread that uses it; it does not
// allocate after construction and never spins: blocking goes through the backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "runtimes/concept.hpp"

namespace coopbench {

// GenericChannel — a Go-style channel built from B's monitor primitives (see the file
// comment). Buffered (capacity >= 1): a ring of `capacity` slots. Unbuffered (capacity 0):
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

// channel_kind — what channel_t<B, T> is, in words (recorded in context.json).
template <Backend B>
constexpr std::string_view channel_kind() {
    return channel_t<B, long>::kind;
}

}  // namespace coopbench
