// local_queue.hpp — a processor-local bounded ready ring for work stealing: one producer
// (the owning processor), lock-free consumers (the owner and thieves) by CAS on the head,
// "steal half" into the thief's own ring, overflow of half the ring into a caller-supplied
// global queue, and a `runnext` slot for the item just woken or spawned.
//
// Citation: the future work of Negele et al. 2017, Sect. 7 ("processor-local ready queues
// ... lock-free load balancing between cores only now and then"). The ring follows the
// design of Go's runtime/proc.go (runqput / runqputslow / runqget / runqgrab / runqsteal,
// the `runnext` slot inheriting the time slice); the bound on consecutive runnext picks
// follows Tokio's LIFO slot (MAX_LIFO_POLLS_PER_TICK = 3); the runnext slot is stealable
// after a grace (Go's runqgrab sleeps ~3 us before taking a running victim's runnext)
// because Tokio's unstealable LIFO slot can stall a worker (a task parked in the
// LIFO slot of a worker that then runs a long task is reachable by nobody else). Written
// here from those designs, not copied.
//
// Design summary
// - `slots_[Capacity]` (a power of two) indexed by free-running 32-bit counters `head_`
//   and `tail_` (wrap-around is harmless: only differences are used). Items in the ring are
//   the positions [head_, tail_). Only the owner writes `tail_` and the slots at positions
//   >= tail_; anyone takes items by a CAS of `head_` from h to h+n after reading the slots
//   [h, h+n). A CAS that succeeds proves that no one else took those positions, and that
//   the owner did not overwrite their slots (it overwrites slot p+Capacity only after it
//   has seen head_ > p) — so each item is taken exactly once, by exactly one CAS.
// - Slots are std::atomic<T*> read and written relaxed: a thief may read a slot that the
//   owner is overwriting (its head_ was stale); its CAS then fails and the value is dropped.
//   Go can use plain words there; in C++ that read would be a data race (UB, a TSan error).
// - push (owner): write the slot, release-store tail_. When full: take half the ring by
//   one CAS on head_ and hand those items, oldest first, and then the new item to the
//   overflow callable (for coop: the global Queue<Activity> of queue.hpp), Go's
//   runqputslow. Order among the moved items is kept; FIFO across the two queues is not
//   (nor is it in Go).
// - pop (owner): FIFO from the head by CAS (thieves race for the same head).
// - steal_into (a thief, on the victim): takes ceil(n/2) of the victim's n items by one CAS,
//   copies all but the newest of them into the thief's own ring (slots beyond the thief's
//   tail: invisible to the thief's own thieves until its tail moves) and returns the newest
//   one to run at once.
// - runnext (Go's runnext, Tokio's LIFO slot): push_next puts the woken/spawned item there;
//   an item it displaces goes to the ring's tail. pick() takes runnext first, at most
//   kMaxRunnextStreak times in a row while the ring holds other items, so a ping-pong pair
//   waking each other cannot starve the ring (the bound is Tokio's 3). The item picked from
//   runnext "inherits the quantum" (Pick::inherits); the runtime decides what that means.
//   A thief whose victim's ring is empty may take runnext, but only after `grace()` and
//   only if the same item is still there (a CAS), so a busy owner keeps its cache-hot hand-
//   off most of the time but a stuck owner cannot stall the item (tokio #4941).
//
// Locked instructions on x86-64 (uncontended): push 0 (plain stores, the release store of
// tail_ is a mov); pop 1 (CAS head_); push_next 0 when runnext was empty (a plain release
// store: only the owner ever fills the slot), 1 (XCHG) when it displaces an item; a runnext
// pick 1 (XCHG: a thief may race for it); steal 1 CAS on the victim plus nothing on the
// thief's ring. Compare: coop's global Queue costs 6 per enqueue+dequeue (queue.hpp).
// Shared lines touched by an owner push+pop with no thief around: its own head_/tail_ lines
// (which stay in its cache in M state) — no line moves between cores.
//
// Ownership rules (as types, after Tokio's queue.rs Local/Steal)
// - A LocalQueue object is its owner's handle: exactly one thread at a time holds it and
//   calls its owner-only operations (try_push, push, push_next, pop, pick). Every other
//   thread reaches the ring only through a Stealer (stealer()): steal_into,
//   take_runnext_after_grace and the hints; a thief's steal_into writes into the thief's
//   OWN ring, passed as its owner's handle.
// - The ring does not own items: T* stays owned by whoever pushed it until a take returns it.
// - A thread that is a thief only ever steals into the ring it owns, and only while that
//   ring is empty (the policy steals when it has nothing): steal_into checks the room anyway.
//
// Example (compiled: docs/examples/queues_example.cpp):
//   struct Job { int id; };
//   coop::ws::LocalQueue<Job, 256> mine, theirs;         // one per processor
//   std::vector<Job*> global;
//   Job job{1};
//   mine.push(&job, [&](Job* j) { global.push_back(j); });  // owner
//   auto [next, inherits] = mine.pick();                    // owner
//   Job* stolen = theirs.stealer().steal_into(mine, true, [] {});  // the thief (owner of `mine`)
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "coop/config.hpp"

namespace coop::ws {

// NoRingHooks — the default: no test hooks (every call compiles away).
struct NoRingHooks {
    static void before_pop_cas() noexcept {}
    static void before_steal_cas() noexcept {}
};

// RingTestHooks — test-only: function pointers called inside the race windows, between the
// read of head_/the slots and the CAS that takes them (tests stop a thread there).
struct RingTestHooks {
    static inline void (*pop_hook)() = nullptr;
    static inline void (*steal_hook)() = nullptr;
    static void before_pop_cas() {
        if (pop_hook) pop_hook();
    }
    static void before_steal_cas() {
        if (steal_hook) steal_hook();
    }
};

// kMaxRunnextStreak — consecutive runnext picks allowed while the ring holds other items
// (Tokio's MAX_LIFO_POLLS_PER_TICK).
inline constexpr unsigned kMaxRunnextStreak = 3;

inline constexpr std::size_t kRingLine = 64;

// LocalQueue — the ring of T* (see file comment), as its owner's handle; Stealer is every
// other thread's. Capacity: a power of two >= 2 (Go: 256).
template <class T, std::uint32_t Capacity = 256, class Hooks = NoRingHooks>
class LocalQueue {
    static_assert(Capacity >= 2 && (Capacity & (Capacity - 1)) == 0,
                  "LocalQueue: Capacity must be a power of two >= 2");
    static constexpr std::uint32_t kMask = Capacity - 1;

  public:
    static constexpr std::uint32_t capacity = Capacity;

    // Pick — what pick() returns: the item (nullptr: nothing local) and whether it came from
    // runnext (it inherits the current time slice, Go's inheritTime).
    struct Pick {
        T* item;
        bool inherits;
    };

    // Stealer — the thieves' handle: only the operations any thread may call. A pointer
    // wrapper (copy it freely); the ring must outlive it.
    class Stealer {
      public:
        explicit Stealer(LocalQueue& q) noexcept : q_(&q) {}
        // steal_into — takes half (rounded up) of the ring's items in one CAS into `thief`
        // (the caller's own ring: its owner's handle) and returns one of them to run, or
        // nullptr; on an empty ring with `runnext_too`, runnext after grace()
        // (LocalQueue::steal_into). Executed only by the owner of `thief`, never on its own
        // ring.
        template <class Grace>
        T* steal_into(LocalQueue& thief, bool runnext_too, Grace&& grace) const {
            COOP_ASSERT(!q_->alone_, "LocalQueue: a thief on a ring whose owner takes without RMWs (set_alone)");
            return q_->steal_into(thief, runnext_too, grace);
        }
        // take_runnext_after_grace — runnext, if the same item is still there after
        // grace(). Any processor but the owner.
        template <class Grace>
        T* take_runnext_after_grace(Grace&& grace) const {
            COOP_ASSERT(!q_->alone_, "LocalQueue: a thief on a ring whose owner takes without RMWs (set_alone)");
            return q_->take_runnext_after_grace(grace);
        }
        // size_hint / empty_hint / has_runnext — as LocalQueue's. Any thread.
        std::uint32_t size_hint() const noexcept { return q_->size_hint(); }
        bool empty_hint() const noexcept { return q_->empty_hint(); }
        bool has_runnext() const noexcept { return q_->has_runnext(); }

      private:
        LocalQueue* q_;
    };

    LocalQueue() = default;
    LocalQueue(const LocalQueue&) = delete;
    LocalQueue& operator=(const LocalQueue&) = delete;

    // stealer — a thieves' handle of this ring. Any thread.
    Stealer stealer() noexcept { return Stealer(*this); }

    // set_alone — no thief will ever take from this ring (a runtime of one processor: there
    // is no other processor to steal, and other threads reach a runtime through its global
    // queues and inbox, never a ring). Its owner's pop, runnext take and runnext exchange then
    // use a load and a store instead of a locked RMW (a CAS or XCHG costs ~11 ns here, the
    // whole switch ~40). Set before the owner's first operation (by the thread that starts
    // the workers: their creation publishes it); a Stealer's take asserts it is not set.
    void set_alone(bool alone) noexcept { alone_ = alone; }

    // try_push — appends `item` if the ring has room; false when full. Executed only by the
    // owner.
    [[gnu::always_inline]] bool try_push(T* item) noexcept {
        // relaxed: only the owner (this thread) writes tail_.
        const std::uint32_t t = tail_.load(std::memory_order_relaxed);
        // acquire: pairs with the release CAS of whoever took position h-1; their relaxed
        // read of that slot happens-before our overwrite of it below (so they cannot read
        // the new value and then take it: their CAS would have to succeed from a head_ we
        // have seen pass). Correctness rests on the CAS; this gives the happens-before.
        const std::uint32_t h = head_.load(std::memory_order_acquire);
        if (t - h >= Capacity) return false;
        // relaxed: published by the release store of tail_ below.
        slots_[t & kMask].store(item, std::memory_order_relaxed);
        // release: a consumer that reads tail_ > t with acquire sees the slot and *item's
        // fields as the pusher left them (Go: StoreRel(&runqtail)).
        tail_.store(t + 1, std::memory_order_release);
        return true;
    }

    // push — appends `item`; when the ring is full, moves half of it, then `item`, to
    // `overflow` (called once per item, oldest first; e.g. the global Queue's enqueue).
    // Returns the number of items handed to overflow (0 in the common case). Executed only
    // by the owner.
    template <class Overflow>
    std::uint32_t push(T* item, Overflow&& overflow) {
        for (;;) {
            if (try_push(item)) return 0;
            if (std::uint32_t moved = push_slow(item, overflow)) return moved;
            // The CAS lost to a consumer: the ring has room now; retry the fast path.
        }
    }

    // push_next — `item` goes to runnext (runs next, inherits the time slice); an item it
    // displaces goes to the ring's tail (possibly overflowing). Returns the overflow count.
    // Executed only by the owner.
    template <class Overflow>
    std::uint32_t push_next(T* item, Overflow&& overflow) {
        T* old = exchange_next(item);
        if (old == nullptr) return 0;
        return push(old, overflow);
    }

    // exchange_next — push_next's first half: `item` goes to runnext; returns the item it
    // displaced (nullptr: none), which is the caller's to put in the ring (try_push, or
    // push with an overflow target only when that fails: no overflow state built on the
    // fast path). Executed only by the owner.
    [[gnu::always_inline]] T* exchange_next(T* item) noexcept {
        // relaxed: only the owner fills the slot, so a null seen here stays null until we
        // store (a thief can only empty it).
        if (runnext_.load(std::memory_order_relaxed) == nullptr) {
            // release: a thief that takes it (acquire) sees *item as we left it.
            runnext_.store(item, std::memory_order_release);
            return nullptr;
        }
        if (alone_) {
            // No thief (set_alone): nobody else writes the slot; the store alone replaces it.
            // relaxed / release: as the empty case above.
            T* old = runnext_.load(std::memory_order_relaxed);
            runnext_.store(item, std::memory_order_release);
            return old;
        }
        // acq_rel: release publishes `item` (as above); acquire is needed only for symmetry
        // with a thief's take — the displaced item was stored by us. An RMW because a thief
        // may be taking the old one at this moment: exactly one of us gets it.
        return runnext_.exchange(item, std::memory_order_acq_rel);
    }

    // pop — the oldest ring item, or nullptr (runnext is not looked at). Executed only by
    // the owner.
    [[gnu::always_inline]] T* pop() noexcept {
        for (;;) {
            // acquire: pairs with the release CAS of a thief (our later slot writes follow
            // its reads, as in try_push) — for pop itself the CAS below is what matters.
            std::uint32_t h = head_.load(std::memory_order_acquire);
            // relaxed: only we write tail_.
            const std::uint32_t t = tail_.load(std::memory_order_relaxed);
            if (t == h) return nullptr;
            // relaxed: we wrote the slot ourselves (or, as a thief, copied it into our own
            // ring, also this thread); a stale value is impossible for our own writes.
            T* item = slots_[h & kMask].load(std::memory_order_relaxed);
            // Before the alone test too, so that a test can stop an owner whose ring was
            // wrongly marked alone here and let a thief take the item (test_local_queue.cpp,
            // TwoProcessorRingsAreNotAlone).
            Hooks::before_pop_cas();
            if (alone_) {
                // No thief (set_alone): only we move head_, so a store takes position h.
                // release: as the CAS below (free on x86, a plain mov).
                head_.store(h + 1, std::memory_order_release);
                return item;
            }
            // release: our read of the slot happens-before the owner's (our own) later
            // overwrite — trivially, same thread; release keeps the order uniform with the
            // thieves' CAS. The CAS is needed even for the owner: a thief may be taking
            // position h right now (the last-item race; models/local_queue.pml).
            if (head_.compare_exchange_strong(h, h + 1, std::memory_order_release,
                                              std::memory_order_relaxed))
                return item;
        }
    }

    // pick — the next item to run: runnext (at most kMaxRunnextStreak times in a row while
    // the ring is non-empty), else the ring's oldest, else runnext regardless of the streak
    // (no local item would be starved by it). {nullptr, false}: nothing local. Executed only
    // by the owner.
    [[gnu::always_inline]] Pick pick() noexcept {
        if (streak_ < kMaxRunnextStreak) {
            if (T* r = take_runnext()) {
                ++streak_;
                return {r, true};
            }
        }
        if (T* item = pop()) {
            streak_ = 0;
            return {item, false};
        }
        if (T* r = take_runnext()) {
            streak_ = 1;
            return {r, true};
        }
        streak_ = 0;
        return {nullptr, false};
    }

    // size_hint — items in the ring plus runnext, as seen now (stale at once). Any thread.
    std::uint32_t size_hint() const noexcept {
        // acquire: as in steal_into; a hint only.
        const std::uint32_t h = head_.load(std::memory_order_acquire);
        const std::uint32_t t = tail_.load(std::memory_order_acquire);
        const std::uint32_t n = t - h;
        return (n > Capacity ? 0 : n) + (runnext_.load(std::memory_order_acquire) != nullptr ? 1 : 0);
    }
    // empty_hint — size_hint() == 0. Any thread.
    bool empty_hint() const noexcept { return size_hint() == 0; }

    // has_runnext — whether runnext holds an item (a hint). Any thread.
    bool has_runnext() const noexcept { return runnext_.load(std::memory_order_acquire) != nullptr; }

  private:
    // steal_into — a thief (the owner of `thief`, whose ring should be empty) takes half
    // (rounded up) of this ring's items in one CAS, moves all but one into its own ring and
    // returns that one; nullptr when there was nothing. If this ring is empty and
    // `runnext_too`, it calls grace() and then takes this ring's runnext if the same item
    // is still there (see file comment). Go's runqgrab/runqsteal. Executed only by the
    // owner of `thief`, through a Stealer of this ring.
    template <class Grace>
    T* steal_into(LocalQueue& thief, bool runnext_too, Grace&& grace) {
        // relaxed: the thief owns its tail_.
        const std::uint32_t tt = thief.tail_.load(std::memory_order_relaxed);
        // acquire: as in try_push (we are about to write slots of our own ring).
        const std::uint32_t room = Capacity - (tt - thief.head_.load(std::memory_order_acquire));
        for (;;) {
            // acquire: pairs with the release CAS of the previous taker (its slot reads
            // precede ours only in the CAS sense; the acquire keeps head_ before tail_).
            std::uint32_t h = head_.load(std::memory_order_acquire);
            // acquire: pairs with the owner's release store of tail_: slots [h, t) and the
            // items' fields are visible.
            const std::uint32_t t = tail_.load(std::memory_order_acquire);
            std::uint32_t n = t - h;
            n -= n / 2;
            if (n == 0) {
                if (!runnext_too) return nullptr;
                return take_runnext_after_grace(grace);
            }
            // h was read before t; if the owner pushed and consumers popped a lot in
            // between, t - h may exceed the capacity: an inconsistent snapshot, retry.
            if (n > Capacity / 2) continue;
            if (n > room + 1) n = room + 1;  // n-1 go into the thief's ring, one is returned
            // relaxed (all slot accesses here): a slot read may be stale (the owner overwrote
            // it after head_ moved past it), then the CAS below fails and the values are
            // dropped; our writes go to free positions of our own ring (>= its tail, < its
            // head + Capacity), published by the release store of its tail below.
            for (std::uint32_t i = 0; i + 1 < n; ++i)
                thief.slots_[(tt + i) & kMask].store(slots_[(h + i) & kMask].load(std::memory_order_relaxed),
                                                     std::memory_order_relaxed);
            // The returned item is not stored in the thief's ring: with room == n-1 its
            // position would be the thief's own oldest slot (test StealRespectsThiefRoom).
            T* item = slots_[(h + n - 1) & kMask].load(std::memory_order_relaxed);
            Hooks::before_steal_cas();
            // release: our slot reads happen-before the owner's overwrites of those slots
            // (it acquire-loads head_ before reusing them). Success proves positions [h,h+n)
            // were still in the ring and unchanged (see file comment).
            if (head_.compare_exchange_strong(h, h + n, std::memory_order_release,
                                              std::memory_order_relaxed)) {
                // release: publishes the n-1 copied slots to the thief's own thieves.
                if (n > 1) thief.tail_.store(tt + n - 1, std::memory_order_release);
                return item;
            }
        }
    }

    // take_runnext_after_grace — a non-owner: if runnext holds an item, waits grace() and
    // takes it if it is still the same one (a CAS: the owner may have picked it and put
    // another meanwhile, then that one is left alone for another grace). Any processor but
    // the owner, through a Stealer.
    template <class Grace>
    T* take_runnext_after_grace(Grace&& grace) {
        // acquire: pairs with push_next's release (so *r is visible if we get it).
        T* r = runnext_.load(std::memory_order_acquire);
        if (r == nullptr) return nullptr;
        grace();
        // acquire: as above. Exactly one of the owner's exchange and our CAS gets r. An
        // ABA (r picked, run, woken and put back during the grace) is harmless: r is then a
        // ready item in the slot again and ours to take.
        if (runnext_.compare_exchange_strong(r, nullptr, std::memory_order_acquire,
                                             std::memory_order_relaxed))
            return r;
        return nullptr;
    }

    // take_runnext — empties runnext and returns what was there. Executed only by the owner.
    [[gnu::always_inline]] T* take_runnext() noexcept {
        // relaxed load first: skip the locked XCHG when the slot is empty (common).
        T* r = runnext_.load(std::memory_order_relaxed);
        if (r == nullptr) return nullptr;
        if (alone_) {
            // No thief (set_alone): we stored r ourselves and nobody else empties the slot.
            // relaxed: no other thread takes from it (only the owner's own later loads read
            // it, in program order); the exchange's acquire paired with a thief's put, and
            // there is none.
            runnext_.store(nullptr, std::memory_order_relaxed);
            return r;
        }
        // acquire: pairs with a put's release (ours, or — if the item had been handed over
        // by another thread before our put — that handover's own order). An RMW because a
        // thief may CAS it away at the same time.
        return runnext_.exchange(nullptr, std::memory_order_acquire);
    }

    // push_slow — ring full: moves the oldest Capacity/2 items and `item` to
    // `overflow` (Go's runqputslow). 0 when the CAS lost (the ring has room again).
    // The slots are read after the CAS, not copied before it (Go copies into a batch
    // first): once head_ has moved past them no consumer can take them, and only the owner
    // — this thread, which pushes nothing until we return — ever writes slots, so they
    // still hold the taken items. Saves a Capacity/2 array on a possibly small stack.
    // Executed only by the owner.
    template <class Overflow>
    std::uint32_t push_slow(T* item, Overflow& overflow) {
        constexpr std::uint32_t n = Capacity / 2;
        // acquire: as in try_push.
        std::uint32_t h = head_.load(std::memory_order_acquire);
        // relaxed: only we write tail_.
        const std::uint32_t t = tail_.load(std::memory_order_relaxed);
        if (t - h != Capacity) return 0;  // a consumer took some since try_push
        // release: as in pop (the taken slots will be overwritten by our later pushes).
        if (!head_.compare_exchange_strong(h, h + n, std::memory_order_release, std::memory_order_relaxed))
            return 0;
        // relaxed: our own writes (see above).
        for (std::uint32_t i = 0; i < n; ++i) overflow(slots_[(h + i) & kMask].load(std::memory_order_relaxed));
        overflow(item);
        return n + 1;
    }

    // Consumers CAS head_; the owner writes tail_ and the slots; runnext on a line of its
    // own (the owner's picks and push_next write it, thieves only read it when idle).
    alignas(kRingLine) std::atomic<std::uint32_t> head_{0};
    alignas(kRingLine) std::atomic<std::uint32_t> tail_{0};
    unsigned streak_ = 0;  // owner-only: consecutive runnext picks
    bool alone_ = false;   // set_alone: no thief ever (written before the owner starts)
    alignas(kRingLine) std::atomic<T*> runnext_{nullptr};
    alignas(kRingLine) std::atomic<T*> slots_[Capacity]{};
};

}  // namespace coop::ws
