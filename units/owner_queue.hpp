// owner_queue.hpp — OwnerQueue: a lock-free queue whose single dequeuer (the owner) is
// decided by the enqueuers themselves, with a smooth hand-off of that privilege.
//
// Citation: L. Quirk, "Ownership of a queue for practical lock-free scheduling" (2008),
// sections 6 (specification) and 7 (implementation): "a composition of two atomic objects:
// a lock-free queue and a shared counter"; Theorem 2 (no two owners) and Theorem 3 (both
// operations are total). The queue is coop's (coop/include/coop/queue.hpp, Negele et al.
// Fig. 6 with per-processor hazard pointers).
//
// Ownership contract (section 6; every user of this class must keep it)
// - enq_and_was_empty(item) may be called by anybody at any time. It returns true to
//   exactly one caller per "busy period": that caller becomes THE OWNER.
// - Only the owner calls deq_and_is_empty(), and it MUST keep calling it (the duty to
//   drain, section 7) until it returns is_empty == true; then it is no longer the owner.
//   While it owns the queue it must be prepared to get any number of other threads' items
//   in any order (the first item it dequeues need not be the one it enqueued).
// - Nobody else dequeues. Ownership may be handed to another thread (or activity) by any
//   means that orders the hand-over (a queue, a semaphore), never duplicated.
// - Theorem 2: if the contract is kept, no two callers of deq_and_is_empty overlap.
//   Theorem 3: if the contract is kept, deq_and_is_empty always finds an item (it is total);
//   we check this with an assertion-like abort, never a silent nullptr.
// - The paper's section 7 says "until deq_and_is_empty returns false": that is a slip; the
//   specification (section 6) and the proof of Theorem 2 both end ownership when it returns
//   true (the set is now empty). We follow sections 6 and 8.
// - Owned construction (`OwnerQueue(owned)`): the queue starts as if the constructing party
//   had made one enq_and_was_empty() that returned true, of a *token* that is no item. The
//   owner gives the token back with disown_token_and_is_empty() instead of its first
//   dequeue. Futures use this (units.hpp): the resolver owns the waiter list from the start,
//   so a waiter added before resolution never becomes owner and never runs early (the
//   paper's conclusion: "a thread which fills the future also takes ownership").
//
// Threads: every caller runs on a bound processor (coop::bind_processor; every coop worker
// is bound) with no context switch inside an operation (coop activities switch only at
// explicit points, none of which is inside these calls). They may be inlined into code that
// blocks between two of them: coop's queue reads its thread_locals through non-inlined
// accessors (hazard.hpp), so the slot used after a migration is the new thread's. Items derive from coop::QueueItem
// and are owned by the queue between enqueue and the dequeue that returns them.
//
// Costs: enq_and_was_empty = the queue's enqueue (3 locked instructions) + one locked add;
// deq_and_is_empty = dequeue (3) + one locked sub.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "coop/queue.hpp"

namespace units {

// owned — tag for OwnerQueue's owned constructor.
struct owned_t {
    explicit owned_t() = default;
};
inline constexpr owned_t owned{};

namespace detail {
[[noreturn, gnu::cold, gnu::noinline]] inline void theorem3_violated() {
    std::fputs("units::OwnerQueue: deq_and_is_empty found no item (ownership contract broken: "
               "a non-owner dequeued, or the owner dequeued after it was told empty)\n",
               stderr);
    std::abort();
}
}  // namespace detail

// OwnerQueue — see the contract above. T derives from coop::QueueItem.
template <class T>
class OwnerQueue {
  public:
    // Dequeued — what deq_and_is_empty returns: the item, and whether the set is now empty
    // (then the caller is no longer the owner).
    struct Dequeued {
        T* item;
        bool is_empty;
    };

    OwnerQueue() = default;
    // OwnerQueue(owned) — starts owned by the constructing party, holding one token (see the
    // contract). The owner's first call must be disown_token_and_is_empty().
    explicit OwnerQueue(owned_t) noexcept : count_(1) {}

    OwnerQueue(const OwnerQueue&) = delete;
    OwnerQueue& operator=(const OwnerQueue&) = delete;

    // enq_and_was_empty — enters `item` (owned by the caller, in no queue) and returns true
    // iff the set was empty: the caller is then the owner and must drain.
    bool enq_and_was_empty(T* item) {
        queue_.enqueue(item);
        // acq_rel. release: the enqueue above happens-before the owner's decrement that
        // reads this value or a later one (every later RMW continues this release sequence),
        // so the owner's next dequeue finds the item we counted (Theorem 3 in the C++ memory
        // model: a counted item is a visible item). acquire: when we read 0 we become the
        // owner, and the previous owner's last decrement (release) that wrote that 0 makes
        // everything it did while owning (the unit's state, its operations) happen-before
        // everything we do as owner: unit exclusion is also a happens-before chain.
        return count_.fetch_add(1, std::memory_order_acq_rel) == 0;
    }

    // deq_and_is_empty — the owner only: removes an item; is_empty says whether the set is
    // now empty (ownership ends). Never returns a null item (Theorem 3; aborts if the
    // contract was broken).
    Dequeued deq_and_is_empty() {
        T* item = queue_.dequeue();
        if (item == nullptr) [[unlikely]]
            detail::theorem3_violated();
        // acq_rel. acquire: reading the increments of enqueuers we have not dequeued yet makes
        // their enqueues visible to our next dequeue (see enq_and_was_empty). release: when we
        // write 0 (ownership ends), the next owner's increment that reads it acquires all we
        // did as owner.
        return {item, count_.fetch_sub(1, std::memory_order_acq_rel) == 1};
    }

    // begin_deq / end_deq_and_is_empty — deq_and_is_empty() in two steps, for an owner that
    // must still own the queue while it processes the item: begin_deq() removes an item
    // (total, as above) without touching the counter; end_deq_and_is_empty() then counts it
    // out. deq_and_is_empty() == begin_deq() immediately followed by end_deq_and_is_empty().
    // Units need this: an operation dequeued with is_empty == true would otherwise run after
    // ownership ended, concurrently with the next owner's first operation (unit exclusion
    // broken). The counter moves exactly as with deq_and_is_empty(), so Theorems 2 and 3
    // hold unchanged; the owner only holds the privilege a little longer.
    T* begin_deq() {
        T* item = queue_.dequeue();
        if (item == nullptr) [[unlikely]]
            detail::theorem3_violated();
        return item;
    }
    bool end_deq_and_is_empty() noexcept {
        // acq_rel: as in deq_and_is_empty(); release now also covers the processing of the
        // item (the next owner sees its effects).
        return count_.fetch_sub(1, std::memory_order_acq_rel) == 1;
    }

    // disown_token_and_is_empty — the owner of an OwnerQueue(owned) gives back the token it
    // was created with, in place of its first dequeue: true means nobody enqueued meanwhile
    // and ownership ends; false means items were counted and the owner must drain them with
    // deq_and_is_empty(). Memory orders as deq_and_is_empty (release: what the owner did
    // before, e.g. storing a future's value, is seen by the next owner).
    bool disown_token_and_is_empty() noexcept { return count_.fetch_sub(1, std::memory_order_acq_rel) == 1; }

    // count — the counter (a hint; exact only when no operation is in flight). Tests use it.
    std::int64_t count() const noexcept { return count_.load(std::memory_order_acquire); }

    // empty_hint — whether the underlying queue looked empty (a hint, see Queue::empty).
    bool empty_hint() const noexcept { return queue_.empty(); }

    // check_quiescent — test helper (Queue::check_quiescent): items in the list, or -1.
    long check_quiescent() const noexcept { return queue_.check_quiescent(); }

  private:
    coop::Queue<T> queue_;
    // On its own line: enqueuers and the owner hit it; the queue's head and tail lines are
    // separate already (queue.hpp).
    alignas(coop::kCacheLine) std::atomic<std::int64_t> count_{0};
};

}  // namespace units
