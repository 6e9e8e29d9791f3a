// channel.hpp — coop::Channel<T>: a Go-style channel with direct hand-off to a parked peer.
//
// Semantics (those of runtimes/concept.hpp's Channel, i.e. Go's): capacity C >= 1 is a FIFO
// buffer of C values, C = 0 a rendezvous (send returns once a receiver has the value);
// send blocks while there is no room, recv while there is nothing; close() wakes every
// waiter: parked senders throw `Closed`, receivers get std::nullopt once the buffer is
// drained; send after close and a second close throw `Closed`.
//
// Design (after Go's runtime/chan.go: chansend / chanrecv / closechan, and gopark's
// "unlock after the switch"):
//   - One small lock (a test-and-test-and-set spin lock, ChannelLock) guards the buffer, the
//     two FIFO lists of parked waiters (senders_, receivers_) and `closed_`. It is held for
//     a handful of instructions: a list pop or a ring slot move. It is never held while a
//     value is copied into a parked peer, nor while a peer is made ready.
//   - Invariants under the lock: receivers_ non-empty => buffer empty and senders_ empty;
//     senders_ non-empty => buffer full (C = 0: always "full") and receivers_ empty.
//   - Direct hand-off: send() that finds a parked receiver dequeues it under the lock,
//     releases the lock, moves the value straight into the receiver's result (a
//     std::optional on the receiver's stack), publishes the outcome in the waiter's `state`
//     and make_ready()s it: the receiver becomes runnable next on this processor as the
//     scheduling policy places woken activities (native: the paper's ready queue, native-ws:
//     runnext, native-parasail: the deque's top). recv() that finds a parked sender takes
//     its value (C = 0) or the buffer's head and refills the tail from the sender (C >= 1,
//     which keeps FIFO order), then wakes the sender the same way.
//   - Parking: the waiter puts a Waiter record (on its own stack) at the tail of its list
//     under the lock, releases the lock and suspends; the suspend's finalizer (run after
//     the switch, internal::suspend) CASes the record's `state` kWaiting -> kParked. A
//     waker exchanges the outcome into `state`: if it reads kParked it makes the waiter
//     ready; if it reads kWaiting (the waiter is still switching out) it leaves that to the
//     finalizer, whose CAS then fails and which makes the waiter ready itself. So no wake-up
//     is lost and none comes before the switch, and the lock is never held across a switch
//     (a lock held from the park through pick_next and the switch to the finalizer kept
//     every other processor spinning for that whole time, and for a whole OS time slice
//     when the OS preempted the parking processor's thread in the window).
//   - A waker owns a dequeued Waiter exclusively (nobody else can reach it); the waiter's
//     record and its result stay valid until the waker's exchange of `state`, and the waker
//     touches neither after it (it reads `activity` first).
//   - A caller that is not an activity (main() outside a run) parks by polling its
//     record's `state` with OS yields (activity == nullptr: the waker only exchanges state).
//
// Lock choice (the hand-off's cost against a switch is measured in docs/backends.md,
// "Channels"; no lock-free variant was built to compare): coop has no preemption between two
// instructions of an activity, so the lock is held only while a processor's OS thread runs
// these few instructions (a list pop or push, a slot move); the holder is preempted only by
// the OS. Spinners back off exponentially with `pause` and then yield the OS thread
// (ChannelLock). The lock and the state it guards share one cache line, so that with many
// senders and receivers on several processors a critical section misses on one line only
// (docs/native-runtime.md, coop::Channel under "Blocking primitives": what that costs at P = 2).
//
// T: its move constructor and move assignment must be noexcept (a static_assert in the class
// says why).
//
// Ownership: the channel must outlive every call on it (the owner joins its users first).
// A parked activity references only its own stack; once woken it does not touch the
// channel again, so the last user may destroy the channel right after its call returns.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>

#include "activity.hpp"
#include "config.hpp"
#include "cpu_relax.hpp"
#include "cpus.hpp"

#if defined(COOP_TEST_HOOKS)
namespace coop::test_hooks {
// Channel: a parking waiter is in its list and switched out; kParked not yet published.
inline void (*channel_park_switched)() = nullptr;
// Channel: a parked peer dequeued and the lock released; its value not yet moved.
inline void (*channel_handoff_dequeued)() = nullptr;
// Channel::close: closed_ set and the waiters detached, the lock released; none woken yet.
inline void (*channel_close_detached)() = nullptr;
// ChannelLock: a caller found the lock held and is about to spin for it.
inline void (*channel_lock_contended)() = nullptr;
}  // namespace coop::test_hooks
#endif

namespace coop {

// ChannelClosed — what coop::Channel throws by default on send after close and on a second
// close (the harness's backend adapter substitutes coopbench::ChannelClosed).
class ChannelClosed : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

namespace internal {

// ChannelLock — a test-and-test-and-set spin lock for critical sections of a few
// instructions (see channel.hpp's file comment). A contended caller backs off exponentially
// (1, 2, 4, ... up to kLockBackoffMax pauses between two looks at the word, as coop::Mutex
// does, config.hpp): every look pulls the word's cache line, which also holds the channel's
// buffer indices and waiter lists, away from the holder, so a tight poll made every critical
// section of the holder miss on it. With many senders and receivers on two processors
// (Producer N=64 via=channel at P=2, docs/native-runtime.md) the poll of one pause per look
// kept ~28 % of the samples in lock_slow and each message cost ~110 ns; the backoff lets the
// holder's processor run several critical sections in a row on a line it keeps.
class ChannelLock {
  public:
    void lock() noexcept {
        // acquire: the critical section sees every write made under the lock before the
        // previous unlock (release below).
        if (!held_.exchange(true, std::memory_order_acquire)) return;
        lock_slow();
    }
    // unlock — release: the critical section's writes happen-before the next holder's.
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

    // kYieldDelay — a wait of this many pauses or more (after 1 + 2 + ... + 32 = 63 pauses,
    // far longer than a critical section of a running holder) gives the core back instead
    // when processors outnumber the CPUs (the holder's OS thread may be preempted, perhaps on
    // this core), and after kYieldLooks looks always (the holder was preempted anyway).
    static constexpr unsigned kYieldDelay = 64;
    static constexpr unsigned kYieldLooks = kLockSpinsIdle;

  private:
    [[gnu::noinline]] void lock_slow() noexcept {
        COOP_HOOK(channel_lock_contended);
        // Processors outnumber the CPUs this OS thread may use (per thread, as Mutex does:
        // a runtime's workers inherit the mask they were started with).
        thread_local const unsigned cpus = static_cast<unsigned>(internal::allowed_cpus().size());
        const bool oversubscribed = internal::processors_in_use() > cpus;
        for (unsigned looks = 0, delay = 1;;) {
            // relaxed: a hint only; the exchange below acquires.
            while (held_.load(std::memory_order_relaxed)) {
                if (looks >= kYieldLooks || (oversubscribed && delay >= kYieldDelay)) {
                    std::this_thread::yield();
                } else {
                    for (unsigned d = 0; d < delay; ++d) coop::cpu_relax();
                    ++looks;
                }
                if (delay < kLockBackoffMax) delay *= 2;
            }
            // acquire: as in lock().
            if (!held_.exchange(true, std::memory_order_acquire)) return;
        }
    }
    std::atomic<bool> held_{false};
};

}  // namespace internal

// Channel — see the file comment. `Closed` is the exception type thrown on misuse. `Entry`:
// where park and wake-up suspend / make_ready (internal::Untyped: the untyped calls;
// coop::Algo<K>: algorithm K's, with no run-time branch on the algorithm).
template <class T, class Closed = ChannelClosed, class Entry = internal::Untyped>
class alignas(64) Channel {
    // T's moves must not throw. The channel moves a value at two kinds of places where an
    // exception could not be undone: under its spin lock (a ring slot's move-assignment in
    // send; recv's move out of the head slot and refill from a parked sender), where it would
    // leave the lock held (every later call on the channel spins for ever); and into or out
    // of a peer that it has already taken off its waiter list (send's hand-off into a parked
    // receiver's result, recv's move out of a parked sender's value), where that peer could
    // no longer be reached by anyone, close() included: it would never be woken. Putting the
    // peer back would break the lists' FIFO order and the invariants above (another waiter
    // may have come meanwhile), and recv's refill moves twice, so half of it could not be
    // taken back. Go's channel values are plain copies that cannot fail, and the harness
    // sends integers, pointers and standard containers (whose moves are noexcept); a type
    // with a throwing move can be sent as a std::unique_ptr<T>.
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                  "coop::Channel<T>: T's move constructor and move assignment must be noexcept (a throwing move "
                  "would leave the channel's lock held or a dequeued waiter never woken; see channel.hpp)");

  public:
    static constexpr std::string_view kind =
        "coop::Channel (direct hand-off to a parked peer, ring buffer, short spin lock)";

    // Channel — capacity 0: unbuffered (a rendezvous); otherwise a FIFO of `capacity` values.
    // Throws std::length_error above 2^32 - 1 (the indices are 32-bit: see the members).
    explicit Channel(std::size_t capacity)
        : capacity_(checked_capacity(capacity)), slots_(capacity > 0 ? new T[capacity]() : nullptr) {}
    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;

    // send — deliver v; blocks while there is no room (C = 0: until a receiver has it).
    // Throws Closed if the channel is closed, or is closed while this send waits.
    void send(T v) {
        lock_.lock();
        if (closed_) {
            lock_.unlock();
            throw Closed("send on closed channel");
        }
        if (Waiter* r = receivers_.pop()) {  // the buffer is empty (invariant): hand off
            lock_.unlock();
            COOP_HOOK(channel_handoff_dequeued);
            r->out->emplace(std::move(v));
            wake(r, kDone);
            return;
        }
        if (count_ < capacity_) {
            slots_[wrap(std::uint64_t{head_} + count_)] = std::move(v);
            ++count_;
            lock_.unlock();
            return;
        }
        Waiter w(internal::current(), &v, nullptr);
        senders_.push(&w);
        lock_.unlock();
        park(w);
        // acquire: pairs with wake()'s exchange (its release) (the receiver is done with v).
        if (w.state.load(std::memory_order_acquire) == kClosed) throw Closed("send on closed channel");
    }

    // recv — the oldest value; blocks while there is none; std::nullopt once the channel is
    // closed and drained.
    std::optional<T> recv() {
        std::optional<T> out;
        lock_.lock();
        if (Waiter* s = senders_.pop()) {  // the buffer is full (C = 0: no buffer)
            if (capacity_ == 0) {
                lock_.unlock();
                COOP_HOOK(channel_handoff_dequeued);
                out.emplace(std::move(*s->value));
            } else {
                // Take the head, put the sender's value at the tail (the head's slot): FIFO.
                out.emplace(std::move(slots_[head_]));
                slots_[head_] = std::move(*s->value);
                head_ = wrap(std::uint64_t{head_} + 1);
                lock_.unlock();
                COOP_HOOK(channel_handoff_dequeued);
            }
            wake(s, kDone);
            return out;
        }
        if (count_ > 0) {
            out.emplace(std::move(slots_[head_]));
            head_ = wrap(std::uint64_t{head_} + 1);
            --count_;
            lock_.unlock();
            return out;
        }
        if (closed_) {
            lock_.unlock();
            return out;
        }
        Waiter w(internal::current(), nullptr, &out);
        receivers_.push(&w);
        lock_.unlock();
        park(w);
        // acquire: pairs with wake()'s exchange (its release), so the sender's write of `out`
        // (before it) is visible here. kClosed leaves `out` empty.
        (void)w.state.load(std::memory_order_acquire);
        return out;
    }

    // close — no more sends; wakes every parked sender (they throw) and receiver (nullopt).
    // Throws Closed on a second close.
    void close() {
        lock_.lock();
        if (closed_) {
            lock_.unlock();
            throw Closed("close of closed channel");
        }
        closed_ = true;
        Waiter* r = receivers_.take_all();
        Waiter* s = senders_.take_all();
        lock_.unlock();
        COOP_HOOK(channel_close_detached);
        wake_all(r);
        wake_all(s);
    }

    // capacity — the capacity the channel was made with (0: unbuffered).
    std::size_t capacity() const { return capacity_; }

  private:
    // wrap — a slot index from head_ + k, k <= capacity_ (a compare, not a division).
    std::uint32_t wrap(std::uint64_t i) const noexcept {
        return static_cast<std::uint32_t>(i >= capacity_ ? i - capacity_ : i);
    }
    static std::uint32_t checked_capacity(std::size_t capacity) {
        if (capacity > UINT32_MAX) throw std::length_error("coop::Channel: capacity above 2^32 - 1");
        return static_cast<std::uint32_t>(capacity);
    }

    // A Waiter's state: kWaiting (in its list, or dequeued by a waker that has not finished),
    // kParked (switched out: its parking finalizer ran first), kDone / kClosed (the outcome,
    // stored by its waker).
    static constexpr std::uint32_t kWaiting = 0, kDone = 1, kClosed = 2, kParked = 3;

    // Waiter — a parked sender or receiver, on its own stack while it waits.
    struct Waiter {
        Waiter(internal::Activity* a, T* v, std::optional<T>* o) : activity(a), value(v), out(o) {}
        internal::Activity* activity;     // nullptr: a caller outside coop, polling `state`
        T* value;                         // a sender's value
        std::optional<T>* out;            // a receiver's result
        Waiter* next = nullptr;           // in its list; guarded by the lock
        std::atomic<std::uint32_t> state{kWaiting};  // see kWaiting above
    };

    // WaiterList — an intrusive FIFO of Waiters; guarded by the channel's lock.
    struct WaiterList {
        Waiter* head = nullptr;
        Waiter* tail = nullptr;
        void push(Waiter* w) noexcept {
            if (tail != nullptr) tail->next = w;
            else head = w;
            tail = w;
        }
        Waiter* pop() noexcept {
            Waiter* w = head;
            if (w != nullptr) {
                head = w->next;
                if (head == nullptr) tail = nullptr;
            }
            return w;
        }
        Waiter* take_all() noexcept {
            Waiter* w = head;
            head = tail = nullptr;
            return w;
        }
    };

    // wake — publish `how` to the dequeued waiter w and make it runnable, unless it has not
    // finished switching out: then its parking finalizer makes it runnable (park()). The
    // waker owns w until its exchange; after it, w (on the waiter's stack) may be gone.
    static void wake(Waiter* w, std::uint32_t how) noexcept {
        internal::Activity* a = w->activity;  // read before the exchange (see above)
        // acq_rel. Release: the value moved into w->out (or out of w->value) happens-before
        // the waiter's acquire load of state (and, through the finalizer's acquire CAS, its
        // resumption there). Acquire: reading kParked, the waiter's switch-out (its saved
        // context, stored before its finalizer's release CAS) happens-before make_ready, so
        // the activity is never resumed from a stale context. One RMW on the word decides
        // who makes the waiter ready: exactly one of the two sees the other's write.
        if (w->state.exchange(how, std::memory_order_acq_rel) == kParked && a != nullptr)
            Entry::make_ready(a);
    }

    static void wake_all(Waiter* w) noexcept {
        while (w != nullptr) {
            Waiter* next = w->next;  // before the wake-up: w dies with its waiter's frame
            wake(w, kClosed);
            w = next;
        }
    }

    // park — called after w was put in its list and the lock released; returns once w was
    // woken. The lock is not held across the switch: a waker may dequeue w before w's
    // activity is switched out, so the state word (not the lock) decides who makes it
    // ready: the finalizer publishes kParked once the switch is complete, and a waker that
    // finds kWaiting only stores the outcome; the finalizer then sees it and makes the
    // activity ready itself. The same protocol as Go's network poller (runtime/netpoll.go:
    // netpollblock parks with the commit function netpollblockcommit, which CASes the
    // descriptor's state word from pdWait to the goroutine after the switch; netpollunblock
    // swaps pdReady in and readies the goroutine only if it read one), here with the
    // suspend's finalizer as the commit after the switch.
    static void park(Waiter& w) noexcept {
        if (w.activity != nullptr) {
            Entry::suspend(&Channel::publish_parked, &w);
            return;
        }
        // acquire: pairs with wake()'s release (the value, see recv/send).
        while (w.state.load(std::memory_order_acquire) == kWaiting) std::this_thread::yield();
    }

    // publish_parked — the parking finalizer: `previous` (w's activity) is switched out.
    static void publish_parked(internal::Activity* previous, void* wv) noexcept {
        auto* w = static_cast<Waiter*>(wv);
        COOP_HOOK(channel_park_switched);
        std::uint32_t expected = kWaiting;
        // Success, release: the switch-out (previous's saved context) happens-before a
        // waker's acquire exchange that reads kParked; after it, w may be resumed and gone:
        // not touched again. Failure, acquire: a waker came first and left the wake-up to
        // us: its outcome is stored, and previous is switched out, so it may run now.
        if (!w->state.compare_exchange_strong(expected, kParked, std::memory_order_release,
                                              std::memory_order_acquire))
            Entry::make_ready(previous);
    }

    // The lock and everything it guards share one cache line (the class is aligned to it):
    // a critical section then misses on one line, not on the lock's and the indices' lines,
    // when the previous holder ran on another processor; and no neighbour of the channel
    // (another object of its owner) shares it. The slots are apart (their own allocation).
    internal::ChannelLock lock_;
    bool closed_ = false;      // guarded by lock_
    std::uint32_t head_ = 0;   // the oldest buffered value's slot; guarded by lock_
    std::uint32_t count_ = 0;  // buffered values; guarded by lock_
    std::uint32_t capacity_;
    std::unique_ptr<T[]> slots_;
    WaiterList senders_;    // parked senders, oldest first
    WaiterList receivers_;  // parked receivers, oldest first
};

// The lock and the state it guards fill one cache line (see the members).
static_assert(sizeof(Channel<long>) == 64);

}  // namespace coop
