// owner_guard.hpp — coop::OwnerGuard and coop::OwnerGuardAsym (`owner-guard`,
// `owner-guard-asym` in the lock workloads): mostly lock-free access to a resource that one
// owner thread uses most of the time. Part of coop because native-parasail's deques
// (ws/parasail_queue.hpp) stand on it; locks/owner_guard.hpp includes it from here for the
// lock workloads.
//
// Citation: S. Tucker Taft, "Work stealing and mostly lock-free access", ParaSail blog,
// 24 Sep 2012, and the comments under it (plain atomics are not barriers: the flag
// protocol needs store–load ordering). Full reference: docs/papers.md.
//
// Design (the blog's protocol exactly): two flags, owner_wants and nonowner_wants, one
// mutex, and a FIFO queue of waiting non-owners protected by that mutex.
//   Owner:    set owner_wants; if nonowner_wants: lock; use; clear owner_wants;
//             Check_Queue; unlock.  Else: use; clear owner_wants; re-check nonowner_wants
//             and if set: lock; Check_Queue; unlock.
//   Nonowner: lock; set nonowner_wants; while owner_wants: join the queue, release the
//             mutex and sleep until woken with the mutex handed over; use; Check_Queue;
//             unlock.
//   Check_Queue (mutex held): queue empty -> clear nonowner_wants and unlock; else pop
//             one waiter and hand it the mutex (its semaphore is released, the mutex is
//             not: the lock hand-off the blog suggests).
// Mutual exclusion: each side sets its flag before reading the other's (store–load
// order), so the owner can skip the mutex only while no non-owner can pass its check.
// One addition (not in the blog), for the try-only entry of thieves: an owner that saw
// nonowner_wants sets owner_waiting before it blocks on the mutex. A thief that holds the
// mutex and, after its fence, finds owner_wants set but owner_waiting set too knows the
// owner is not inside but queued behind the very mutex it holds, and proceeds instead of
// giving up. Without it a busy owner and an idle thief livelocked in slow motion: each try
// held the mutex through a membarrier (3-50 µs on KVM), the owner's next access arrived in
// that window and waited for the mutex, and the thief then saw owner_wants and gave up —
// native-parasail's create at P=2 ran 1.9-3.8 µs per thread (perf: the owner spinning in
// the mutex, the thief in the IPIs), with 77 of ~1400 tries succeeding at N=10^5.
// No lost waiter: the owner re-reads nonowner_wants after clearing owner_wants (again
// store–load), so it cannot miss a non-owner that queued itself meanwhile.
//
// Where the store–load order comes from:
//   OwnerGuard      seq_cst stores and loads of both flags (on x86 each owner store is an
//                   XCHG: two full barriers per owner access, ~2 x 10-20 cycles);
//   OwnerGuardAsym  an asymmetric fence (asymmetric_fence.hpp): the owner's path is
//                   plain loads/stores and a compiler fence; each non-owner entry calls
//                   membarrier instead. Where membarrier is missing it says so once on
//                   stderr and behaves as OwnerGuard (`using_membarrier()` tells which).
// The resource's data is ordered (happens-before, also for TSan) by release/acquire on
// the flags and by the mutex: a non-owner that reads owner_wants == false reads the
// owner's release clear; an owner that reads nonowner_wants == false reads Check_Queue's
// release clear.
//
// Ownership rules: exactly one thread — the owner — calls owner_lock/owner_unlock, never
// concurrently with itself; any number of other threads call nonowner_lock/unlock. A
// waiter record lives on its non-owner's stack while it is queued. No allocation.
//
// Example (compiled: docs/examples/locks_example.cpp; locks::OwnerGuard is this class):
//   locks::OwnerGuard g;
//   std::thread other([&] {
//       g.nonowner_lock(); use(); g.nonowner_unlock();             // any other thread
//   });
//   bool slow = g.owner_lock(); use(); g.owner_unlock(slow);   // owner
#pragma once

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string_view>

#include "coop/src/asymmetric_fence.hpp"
#include "coop/src/os_semaphore.hpp"

// COOP_GUARD_HOOK(name) — calls coop::guard_hooks::name if a test set it (only where
// COOP_GUARD_TEST_HOOKS is defined: a directed test stops a thread inside a window). Its own
// switch, not config.hpp's COOP_TEST_HOOKS: the guard is header-only, and a test of the guard
// alone should not need coop_hooked. Every file of one program must agree on it (the guard's
// member functions are inline).
#if defined(COOP_GUARD_TEST_HOOKS)
namespace coop::guard_hooks {
inline void (*try_after_fence)() = nullptr;      // nonowner_try_lock: mutex held, flag set, fenced
inline void (*owner_before_mutex)() = nullptr;   // owner_lock: saw nonowner_wants, about to wait
inline void (*try_before_flag)() = nullptr;      // nonowner_try_lock: mutex held, flag not yet set
}  // namespace coop::guard_hooks
#define COOP_GUARD_HOOK(name)                                                          \
    do {                                                                               \
        if (::coop::guard_hooks::name != nullptr) ::coop::guard_hooks::name();         \
    } while (0)
#else
#define COOP_GUARD_HOOK(name) \
    do {                      \
    } while (0)
#endif

namespace coop {

// OwnerGuardT — the protocol; Asym selects the asymmetric fence (see file comment).
template <bool Asym>
class OwnerGuardT {
  public:
    static constexpr std::string_view name = Asym ? "owner-guard-asym" : "owner-guard";

    OwnerGuardT() {
        if constexpr (Asym) {
            asym_ = asymmetric_fence_heavy_available();
            static std::once_flag said;
            if (!asym_)
                std::call_once(said, [] {
                    std::fprintf(stderr, "owner-guard-asym: %s; falling back to owner-guard (seq_cst flags)\n",
                                 asymmetric_fence_unavailable_reason().c_str());
                });
        }
    }
    OwnerGuardT(const OwnerGuardT&) = delete;
    OwnerGuardT& operator=(const OwnerGuardT&) = delete;

    // using_membarrier — does this guard use the asymmetric fence (false: seq_cst flags)?
    bool using_membarrier() const { return asym(); }

    // owner_lock — the owner's entry; returns whether it took the mutex (pass it to
    // owner_unlock). Always inlined (the uncontended path is a store, a fence and a load, on
    // every switch of native-parasail); the contended rest is out of line. Precondition:
    // called by the owner only, not already inside. Executed only by the owner.
    [[gnu::always_inline]] bool owner_lock() {
        if (asym()) {
            // relaxed + light fence: the store–load order comes from the non-owners'
            // membarrier (see asymmetric_fence.hpp); the signal fence keeps the compiler
            // from moving the load above the store.
            owner_wants_.store(true, std::memory_order_relaxed);
            asymmetric_fence_light();
            // acquire: pairs with Check_Queue's release clear (the last non-owner's use
            // happens-before ours).
            if (!nonowner_wants_.load(std::memory_order_acquire)) return false;
        } else {
            // seq_cst store then seq_cst load: the store–load order of the blog's
            // argument (a release store and acquire load could be reordered).
            owner_wants_.store(true, std::memory_order_seq_cst);
            if (!nonowner_wants_.load(std::memory_order_seq_cst)) return false;
        }
        return owner_lock_contended();
    }

    // owner_unlock — the owner's exit; `locked` is what owner_lock returned. Always inlined
    // as owner_lock. Executed only by the owner.
    [[gnu::always_inline]] void owner_unlock(bool locked) {
        if (locked) [[unlikely]] {
            owner_unlock_locked();
            return;
        }
        bool nonowner;
        if (asym()) {
            // release: pairs with the non-owners' acquire load of owner_wants (our use
            // happens-before theirs). The store–load order against the re-check comes
            // from the light/heavy fence pair, as in owner_lock.
            owner_wants_.store(false, std::memory_order_release);
            asymmetric_fence_light();
            nonowner = nonowner_wants_.load(std::memory_order_relaxed);  // the mutex orders what follows
        } else {
            // seq_cst: store–load order for the "no lost waiter" argument.
            owner_wants_.store(false, std::memory_order_seq_cst);
            nonowner = nonowner_wants_.load(std::memory_order_seq_cst);
        }
        if (nonowner) [[unlikely]] {
            mutex_.acquire();
            check_queue_and_unlock();
        }
    }

    // owner_lock_contended — owner_lock's rest when a non-owner wants in: wait for the mutex.
    // Executed only by the owner.
    [[gnu::noinline]] bool owner_lock_contended() {
        // release: a thief that reads true (acquire) holds the mutex we are about to wait
        // for, and our accesses so far (the last use included) happen-before its use.
        owner_waiting_.store(true, std::memory_order_release);
        COOP_GUARD_HOOK(owner_before_mutex);
        mutex_.acquire();
        // relaxed: the mutex orders it; a later holder of the mutex acquires our release of
        // it, which comes after this store, so no thief can read the stale true (coherence).
        owner_waiting_.store(false, std::memory_order_relaxed);
        return true;
    }
    // owner_unlock_locked — owner_unlock after owner_lock took the mutex. Executed only by
    // the owner.
    [[gnu::noinline]] void owner_unlock_locked() {
        // release: a non-owner reading false sees our use (the mutex orders it anyway).
        owner_wants_.store(false, std::memory_order_release);
        check_queue_and_unlock();
    }

    // nonowner_lock — a non-owner's entry: returns holding the mutex with owner_wants
    // clear. Precondition: not called by the owner.
    void nonowner_lock() {
        mutex_.acquire();
        if (asym()) {
            // relaxed + heavy fence: after membarrier the store is visible to the owner's
            // next load, or the owner's store is visible to our load (Dekker).
            nonowner_wants_.store(true, std::memory_order_relaxed);
            asymmetric_fence_heavy();
        } else {
            nonowner_wants_.store(true, std::memory_order_seq_cst);  // seq_cst: store–load order
        }
        // acquire (seq_cst for the symmetric guard): pairs with the owner's release clear.
        // After a wake-up, our flag is still set (the queue was not empty) and its fence
        // already done, so re-reading is enough.
        while (owner_wants_.load(asym() ? std::memory_order_acquire : std::memory_order_seq_cst)) {
            Waiter w;
            if (tail_) tail_->next = &w;
            else head_ = &w;
            tail_ = &w;
            mutex_.release();
            w.wake.acquire();  // woken holding the mutex (hand-off)
        }
    }

    // nonowner_try_lock — a non-owner's entry that never waits: returns true holding the
    // mutex with owner_wants clear (as nonowner_lock) or with the owner waiting for that
    // mutex (owner_waiting, see the file comment), or false at once when the mutex is
    // taken or the owner is inside. For opportunistic users (a thief: work stealing must
    // not put a processor to sleep behind the owner it tries to help; ParaSail's blog
    // queues a non-owner, which on a scheduler turns every contended steal into a futex
    // sleep and a cross-core wake-up of ~30 µs). Giving up is Check_Queue without using
    // the resource: our flag is cleared (or the mutex handed to a queued non-owner), so
    // an owner that saw the flag only takes the mutex once more; no waiter is lost.
    bool nonowner_try_lock() {
        // relaxed: a hint only, to spare the mutex and the heavy fence (a membarrier IPI to
        // the owner's CPU) while the owner is visibly inside; the real check follows the
        // fence below.
        if (owner_wants_.load(std::memory_order_relaxed)) return false;
        if (!mutex_.try_acquire()) return false;
        COOP_GUARD_HOOK(try_before_flag);
        if (asym()) {
            // relaxed + heavy fence: as in nonowner_lock (Dekker against owner_lock).
            nonowner_wants_.store(true, std::memory_order_relaxed);
            asymmetric_fence_heavy();
        } else {
            nonowner_wants_.store(true, std::memory_order_seq_cst);  // seq_cst: store–load order
        }
        COOP_GUARD_HOOK(try_after_fence);
        // acquire: as in nonowner_lock (pairs with the owner's release clear).
        if (!owner_wants_.load(asym() ? std::memory_order_acquire : std::memory_order_seq_cst)) return true;
        // acquire: pairs with owner_lock's release store. True means the owner saw our
        // flag (or an earlier non-owner's) and is waiting for the mutex we hold: it is not
        // inside and cannot enter before our unlock (see the file comment). A stale true is
        // impossible: the owner clears it while holding the mutex, before releasing it to
        // whoever held it next — and we acquired the mutex after that.
        if (owner_waiting_.load(std::memory_order_acquire)) return true;
        check_queue_and_unlock();  // give up: clear our flag or hand the mutex on
        return false;
    }

    // owner_waiting — whether the owner is blocked on (or about to block on) the mutex
    // (tests: a hook waits for it).
    bool owner_waiting() const noexcept { return owner_waiting_.load(std::memory_order_acquire); }

    // nonowner_unlock — a non-owner's exit: Check_Queue, then unlock or hand off.
    void nonowner_unlock() { check_queue_and_unlock(); }

    // owner_access / nonowner_access — run fn under the guard.
    template <class F>
    [[gnu::always_inline]] decltype(auto) owner_access(F&& fn) {  // inlined as owner_lock
        struct Exit {
            OwnerGuardT* g;
            bool locked;
            [[gnu::always_inline]] ~Exit() { g->owner_unlock(locked); }
        } exit{this, owner_lock()};
        return fn();
    }
    template <class F>
    decltype(auto) nonowner_access(F&& fn) {
        nonowner_lock();
        struct Exit {
            OwnerGuardT* g;
            ~Exit() { g->nonowner_unlock(); }
        } exit{this};
        return fn();
    }

    // nonowner_try_access — run fn under the guard if nonowner_try_lock succeeds; returns
    // whether it ran.
    template <class F>
    bool nonowner_try_access(F&& fn) {
        if (!nonowner_try_lock()) return false;
        struct Exit {
            OwnerGuardT* g;
            ~Exit() { g->nonowner_unlock(); }
        } exit{this};
        fn();
        return true;
    }

  private:
    bool asym() const {
        if constexpr (Asym) return asym_;
        else return false;
    }

    // Waiter — a queued non-owner (on its stack).
    struct Waiter {
        OsSemaphore wake{0};
        Waiter* next = nullptr;
    };

    // check_queue_and_unlock — Check_Queue with the mutex held, then unlock or hand off.
    void check_queue_and_unlock() {
        if (head_ == nullptr) {
            // release: the owner reading false sees our use (pairs with its acquire load).
            nonowner_wants_.store(false, asym() ? std::memory_order_release : std::memory_order_seq_cst);
            mutex_.release();
            return;
        }
        Waiter* w = head_;
        head_ = w->next;
        if (head_ == nullptr) tail_ = nullptr;
        w->wake.release();  // hand-off: the mutex stays locked, now held by w
    }

    alignas(64) std::atomic<bool> owner_wants_{false};
    std::atomic<bool> owner_waiting_{false};  // the owner waits for the mutex (owner_lock)
    alignas(64) std::atomic<bool> nonowner_wants_{false};
    alignas(64) OsSemaphore mutex_{1};  // a mutex that another thread may hand on (not
                                        // std::binary_semaphore: see os_semaphore.hpp)
    Waiter* head_ = nullptr;  // the nonowner-waiting queue (FIFO), protected by mutex_
    Waiter* tail_ = nullptr;
    bool asym_ = false;  // Asym and membarrier available
};

// OwnerGuard — the blog's protocol with sequentially consistent flags.
using OwnerGuard = OwnerGuardT<false>;
// OwnerGuardAsym — the same with an asymmetric fence (membarrier on the non-owners' side).
using OwnerGuardAsym = OwnerGuardT<true>;

}  // namespace coop
