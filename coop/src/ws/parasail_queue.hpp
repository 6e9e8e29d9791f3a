// parasail_queue.hpp — ParaSail's per-worker ready queue: the owner serves its own deque
// LIFO (newest first), non-owners steal FIFO (oldest first), and the deque is protected by
// the owner/non-owner protocol so that the owner pays no atomic read-modify-write in the
// common case.
//
// Citation: S. Tucker Taft, "Work stealing and mostly lock-free access", ParaSail blog,
// 24 Sep 2012: "each serving their own
// queue of picothreads (in a LIFO manner), and periodically stealing a picothread from some
// other worker process (using FIFO ...)"; the protocol is owner_guard.hpp, here its
// asymmetric-fence variant (OwnerGuardAsym: the owner's path is plain loads/stores and a
// compiler fence; every non-owner entry pays a membarrier syscall).
//
// Design summary
// - A plain (non-atomic) growable circular deque of T*, every access inside the guard:
//   owner_access for the owner's push_back / push_front / pop_back / pop_front, nonowner_access
//   (try-only: a thief never waits for the owner) for steal and steal_half_into (front).
//   The guard's flags order the deque's memory (owner_guard.hpp: release/
//   acquire on the flags plus the mutex), so the deque itself needs no atomics.
// - push_back: a woken/spawned item, served next (LIFO). push_front: a yielded item, served
//   after every other local item (round robin, Negele Sect. 4.4) and first to be stolen.
// - `size_` is an atomic copy of the count, written (relaxed store, no RMW: writers are
//   mutually excluded by the guard) after every change, so a would-be thief can skip an
//   empty victim without entering the guard (each entry costs a membarrier IPI).
// - Growth (doubling) happens inside the guard; an allocation failure throws std::bad_alloc
//   with the deque unchanged.
//
// Costs (x86-64, owner alone): owner_lock = one plain store + one plain load, owner_unlock
// = one plain store + one plain load: 0 locked instructions per push or pop, versus 6 per
// enqueue+dequeue of the global Queue. A steal: mutex (an atomic RMW) + membarrier syscall
// (~µs, IPIs to every CPU running this process) — stealing is meant to be rare.
//
// Ownership rules (as types, after Tokio's queue.rs Local/Steal): a ParasailQueue object is
// its owner's handle: one owner thread holds it and calls push_back / push_front / pop_back /
// pop_front (never concurrently with itself). Every other thread reaches the deque only
// through a Stealer (stealer()): steal, steal_half_into (into the thief's own deque, passed
// as its owner's handle), size_hint. The deque does not own the items.
//
// Example (compiled: docs/examples/queues_example.cpp):
//   struct Job { int id; };
//   Job a{1}, b{2};
//   coop::ws::ParasailQueue<Job> q;            // owned by one worker
//   q.push_back(&a); q.push_front(&b);         // owner
//   Job* mine = q.pop_back();                  // owner: &a (LIFO)
//   Job* theirs = q.stealer().steal();         // another worker: &b (FIFO end)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "coop/src/owner_guard.hpp"

namespace coop::ws {

// ParasailQueue — see file comment; the owner's handle (Stealer: every other thread's).
// Guard: coop::OwnerGuardAsym (or OwnerGuard, for tests on systems without membarrier: the
// same protocol with seq_cst flags).
template <class T, class Guard = coop::OwnerGuardAsym>
class ParasailQueue {
  public:
    // Stealer — the thieves' handle: only what any thread but the owner may call. A pointer
    // wrapper (copy it freely); the deque must outlive it.
    class Stealer {
      public:
        explicit Stealer(ParasailQueue& q) noexcept : q_(&q) {}
        // steal — the oldest item, or nullptr (ParasailQueue::steal). Any processor but the
        // owner.
        template <class Grace>
        T* steal(bool lone_too, Grace&& grace) const {
            return q_->steal(lone_too, grace);
        }
        T* steal() const { return q_->steal(true, [] {}); }
        // steal_half_into — half of the items into `thief`, the caller's own deque (its
        // owner's handle), returning the oldest (ParasailQueue::steal_half_into). Executed
        // only by the owner of `thief`, never on its own deque.
        template <class Grace>
        T* steal_half_into(ParasailQueue& thief, bool lone_too, Grace&& grace) const {
            return q_->steal_half_into(thief, lone_too, grace);
        }
        // size_hint — as ParasailQueue's. Any thread.
        std::size_t size_hint() const noexcept { return q_->size_hint(); }

      private:
        ParasailQueue* q_;
    };

    // stealer — a thieves' handle of this deque. Any thread.
    Stealer stealer() noexcept { return Stealer(*this); }

    explicit ParasailQueue(std::size_t initial_capacity = 64)
        : cap_(round_up(initial_capacity)), buf_(std::make_unique<T*[]>(cap_)) {}
    ParasailQueue(const ParasailQueue&) = delete;
    ParasailQueue& operator=(const ParasailQueue&) = delete;

    // push_back — `item` will be served next (LIFO end). Executed only by the owner.
    [[gnu::always_inline]] void push_back(T* item) {
        guard_.owner_access([&] {
            grow_if_full();
            buf_[(front_ + count_) & (cap_ - 1)] = item;
            set_count(count_ + 1);
        });
    }

    // push_front — `item` is served after every other local item (FIFO end). Executed only
    // by the owner.
    [[gnu::always_inline]] void push_front(T* item) {
        guard_.owner_access([&] {
            grow_if_full();
            front_ = (front_ + cap_ - 1) & (cap_ - 1);
            buf_[front_] = item;
            set_count(count_ + 1);
        });
    }

    // pop_back — the newest item, or nullptr. Always inlined: it is on every switch of
    // native-parasail (pick_next), and GCC's budget otherwise left it out of line there.
    // Executed only by the owner.
    [[gnu::always_inline]] T* pop_back() noexcept {
        // relaxed: a hint to skip the guard when empty. Only the owner adds items, so an
        // empty deque seen by the owner stays empty until the owner pushes.
        if (size_.load(std::memory_order_relaxed) == 0) return nullptr;
        return guard_.owner_access([&]() __attribute__((always_inline)) -> T* {
            if (count_ == 0) return nullptr;  // a thief emptied it meanwhile
            set_count(count_ - 1);
            return buf_[(front_ + count_) & (cap_ - 1)];
        });
    }

    // pop_front — the oldest item, or nullptr (the fairness path of an algorithm). Executed
    // only by the owner.
    T* pop_front() noexcept {
        if (size_.load(std::memory_order_relaxed) == 0) return nullptr;  // as in pop_back
        return guard_.owner_access([&]() -> T* { return take_front(); });
    }

    // kMaxBatch — the most items one steal_half_into takes: as Go (half of its 256 ring);
    // 1 KiB of stack.
    static constexpr std::size_t kMaxBatch = 128;

    // size_hint — the number of items as last published (stale at once). Any thread.
    std::size_t size_hint() const noexcept { return size_.load(std::memory_order_relaxed); }

    // using_membarrier — whether the guard runs the asymmetric fence (see owner_guard.hpp).
    // Any thread.
    bool using_membarrier() const { return guard_.using_membarrier(); }

  private:
    // steal — a non-owner: the oldest item, or nullptr. Skips the guard (and its
    // membarrier) when the deque looks empty. A lone item — the one the owner serves
    // next — is taken only if `lone_too`, and only if the owner has not touched the deque
    // during grace() (its version did not move): a busy owner keeps its hand-off, a stuck
    // one loses it (Go's runnext grace in runqgrab; ws/local_queue.hpp does the same).
    // Without that rule an idle thief entered the guard for every wake-up of a hand-off
    // chain (TokenRing: 2.6 million attempts for 10^6 hand-offs), and each entry costs
    // the owner its fast path. Any processor but the owner, through a Stealer.
    template <class Grace>
    T* steal(bool lone_too, Grace&& grace) {
        // relaxed: a hint; the guard orders the real check inside.
        const std::size_t n = size_.load(std::memory_order_relaxed);
        if (n == 0) return nullptr;
        if (n == 1) {
            if (!lone_too) return nullptr;
            // relaxed: hints only (the guard decides); a version that moved means the
            // owner pushed or popped meanwhile, i.e. it is running, not stuck.
            const std::uint64_t v = version_.load(std::memory_order_relaxed);
            grace();
            if (version_.load(std::memory_order_relaxed) != v) return nullptr;
        }
        // try, never wait: a thief that finds the owner inside gives up (nullptr) instead
        // of sleeping in the guard's queue until the owner leaves (owner_guard.hpp,
        // nonowner_try_lock).
        T* item = nullptr;
        guard_.nonowner_try_access([&] { item = take_front(); });
        return item;
    }

    // steal_half_into — as steal, but takes half of the victim's items (rounded up, at
    // most kMaxBatch) in one guarded entry, returns the oldest and pushes the others onto
    // `thief` (the caller's own deque: it is their owner). One heavy fence per batch,
    // not per item: on a KVM guest a membarrier costs the victim's CPU an IPI of several
    // µs, so a one-by-one thief (ParaSail steals one picothread) paid it ~30,000 times in
    // Eratosthenes at P=2. Executed only by the owner of `thief`, through a Stealer of this
    // deque.
    template <class Grace>
    T* steal_half_into(ParasailQueue& thief, bool lone_too, Grace&& grace) {
        const std::size_t n = size_.load(std::memory_order_relaxed);  // relaxed: as in steal
        if (n == 0) return nullptr;
        if (n == 1) {
            if (!lone_too) return nullptr;
            const std::uint64_t v = version_.load(std::memory_order_relaxed);  // as in steal
            grace();
            if (version_.load(std::memory_order_relaxed) != v) return nullptr;
        }
        T* batch[kMaxBatch];
        std::size_t got = 0;
        guard_.nonowner_try_access([&] {
            std::size_t want = count_ - count_ / 2;
            if (want > kMaxBatch) want = kMaxBatch;
            while (got < want) batch[got++] = take_front();
        });
        if (got == 0) return nullptr;
        for (std::size_t i = 1; i < got; ++i) thief.push_back(batch[i]);
        return batch[0];
    }

    static std::size_t round_up(std::size_t n) {
        std::size_t c = 2;
        while (c < n) c *= 2;
        return c;
    }

    // Inside the guard only.
    T* take_front() noexcept {
        if (count_ == 0) return nullptr;
        T* item = buf_[front_];
        front_ = (front_ + 1) & (cap_ - 1);
        set_count(count_ - 1);
        return item;
    }
    void set_count(std::size_t n) noexcept {
        count_ = n;
        // relaxed: hints for size_hint/steal; the deque's contents are ordered by the guard.
        // No RMW: writers are mutually excluded by the guard (same line: one miss).
        size_.store(n, std::memory_order_relaxed);
        version_.store(version_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    void grow_if_full() {
        if (count_ < cap_) return;
        auto bigger = std::make_unique<T*[]>(cap_ * 2);
        for (std::size_t i = 0; i < count_; ++i) bigger[i] = buf_[(front_ + i) & (cap_ - 1)];
        buf_ = std::move(bigger);
        cap_ *= 2;
        front_ = 0;
    }

    Guard guard_;
    // The deque (inside the guard only).
    std::size_t cap_;
    std::unique_ptr<T*[]> buf_;
    std::size_t front_ = 0;
    std::size_t count_ = 0;
    alignas(64) std::atomic<std::size_t> size_{0};
    std::atomic<std::uint64_t> version_{0};  // +1 per change (steal's grace rule)
};

}  // namespace coop::ws
