// sync.cpp — the slow paths of coop::BasicMutex, BasicCondVar and BasicSemaphore (designs and
// citations in mutex.hpp, condition.hpp, semaphore.hpp), compiled once per parking entry
// (explicit instantiations at the end: internal::Untyped, i.e. coop::Mutex etc., and the
// three coop::Algo<K>). Every park is Entry::suspend and every wake-up Entry::make_ready.
#include <sched.h>

#include <thread>

#include "coop/coop.hpp"
#include "coop/cpu_relax.hpp"


namespace coop {

using internal::Activity;

namespace {
// kLockYieldDelay — with processors outnumbering CPUs, a poll of Mutex::lock_slow whose
// backoff reaches this many pauses (after 1 + 2 + ... + 32 = 63 pauses, ~1.2 us, far longer
// than a critical section of a running holder) yields the core instead (see lock_slow).
constexpr unsigned kLockYieldDelay = 64;
}  // namespace

// ---------------------------------------------------------------------------------- Mutex

template <class Entry>
void BasicMutex<Entry>::lock_slow() noexcept {
    if (internal::current() == nullptr) {
        // Not an activity (e.g. main() before or after a run): it cannot be parked in the
        // wait queue; spin with OS yields. exchange(2): acquire as in lock(), and "maybe
        // waiters" so that unlocks keep waking parked activities.
        while (word_.exchange(2, std::memory_order_acquire) != 0) std::this_thread::yield();
        return;
    }
    // Spin when another processor may run the holder. Also when processors outnumber cores:
    // parking at once there was measured slower (docs/native-runtime.md, "A contended Mutex").
    const unsigned processors = internal::processors_in_use();
    const bool spin = processors > 1;
    // Processors outnumber the CPUs this process may use: the holder may be an OS thread
    // that the OS has preempted, perhaps on this very core. Then the long waits of the
    // backoff give the core back (sched_yield, as Go's runtime lock and coop's idle loop do)
    // instead of pausing on it, which only kept the holder from running: Producer N=1000 at
    // P=16 on 2 cores took 3-4x its P=2 time with the pauses, about the same with the yields
    // (docs/native-runtime.md, "A contended Mutex"). Short waits stay pauses: a holder
    // that runs releases within them. The CPUs: the runtime's scheduler's count (its
    // affinity mask when the runtime started; its workers inherit that mask).
    const unsigned cpus = internal::cpus_in_use();
    const bool oversubscribed = processors > cpus;
    // Drepper: an activity that slept must take the lock with 2, not 1: it cannot know
    // whether others still wait, and with 1 the next unlock would not wake them.
    std::uint32_t locked = 1;
    for (;;) {
        if (spin) {
            // The holder runs on another processor (or will, after a time slice): poll, backing
            // off (config.hpp), for longer while this processor has nothing else to run.
            for (unsigned i = 0, delay = 1;
                 i < kLockSpins || (i < kLockSpinsIdle && !internal::ready_work());
                 ++i, delay = delay < kLockBackoffMax ? 2 * delay : delay) {
                if (oversubscribed && delay >= kLockYieldDelay) {
                    COOP_HOOK(mutex_spin_yielded);
                    sched_yield();
                } else {
                    for (unsigned d = 0; d < delay; ++d) cpu_relax();
                }
                std::uint32_t expected = 0;
                // relaxed load: a hint; acquire CAS: as in lock().
                if (word_.load(std::memory_order_relaxed) == 0 &&
                    word_.compare_exchange_strong(expected, locked, std::memory_order_acquire,
                                                  std::memory_order_relaxed))
                    return;
            }
        }
        // acquire: as in lock(). Writing 2 tells the holder's unlock() to wake a waiter.
        if (word_.exchange(2, std::memory_order_acquire) == 0) return;
        Entry::suspend(&BasicMutex::park, this);
        locked = 2;
    }
}

using Use = internal::WaitQueue::Use;

template <class Entry>
void BasicMutex<Entry>::unlock_slow() noexcept {
    Use u(waiters_);  // we still hold the lock: nobody may destroy the mutex yet
    // seq_cst: release for the critical section, and the unlocker's store of the Dekker
    // pair with park() (mutex.hpp).
    if (word_.exchange(0, std::memory_order_seq_cst) == 2) wake_one();
}

template <class Entry>
void BasicMutex<Entry>::wake_one() noexcept {
    // seq_cst fence: the unlocker's half of the Dekker pair with park() (mutex.hpp): our
    // exchange(0) is ordered before the dequeue's reads of the wait queue.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (Activity* w = waiters_.dequeue()) Entry::make_ready(w);
}

template <class Entry>
void BasicMutex<Entry>::park(Activity* previous, void* self) noexcept {
    park_enqueue(previous, static_cast<BasicMutex*>(self));
    COOP_HOOK(mutex_park_done);
}

template <class Entry>
void BasicMutex<Entry>::park_enqueue(Activity* previous, BasicMutex* m) noexcept {
    Use u(m->waiters_);  // before the enqueue: until then `previous` keeps the mutex alive
    COOP_HOOK(mutex_park_before_enqueue);
    m->waiters_.enqueue(previous);
    // seq_cst fence: the parker's half of the Dekker pair: the enqueue is ordered before
    // the re-check of the word.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    // relaxed: ordered by the fence; the CAS below re-validates.
    std::uint32_t s = m->word_.load(std::memory_order_relaxed);
    for (;;) {
        if (s == 0) {  // released meanwhile, perhaps unseen by the unlocker: wake one ourselves
            m->wake_one();
            return;
        }
        if (s == 2) return;  // the holder will wake one on unlock
        // s == 1: a holder that does not know about waiters. seq_cst: its unlock's exchange
        // reads our 2 and thereby sees our enqueue.
        if (m->word_.compare_exchange_weak(s, 2, std::memory_order_seq_cst, std::memory_order_relaxed)) return;
    }
}

// -------------------------------------------------------------------------------- CondVar

namespace {
template <class Entry>
struct CondArgs {
    internal::WaitQueue* waiters;
    BasicMutex<Entry>* mutex;
};
}  // namespace

template <class Entry>
void BasicCondVar<Entry>::wait(Mutex& held) noexcept {
    if (internal::current() == nullptr) {
        // Not an activity: no parking; a spurious wake-up (allowed by the contract).
        held.unlock();
        std::this_thread::yield();
        held.lock();
        return;
    }
    CondArgs<Entry> args{&waiters_, &held};
    Entry::suspend(&BasicCondVar::park, &args);
    held.lock();
}

template <class Entry>
void BasicCondVar<Entry>::park(Activity* previous, void* a) noexcept {
    // Copy first: once enqueued, the waiter may be notified and resumed elsewhere, and the
    // arguments on its stack overwritten.
    const CondArgs<Entry> args = *static_cast<CondArgs<Entry>*>(a);
    // Before the enqueue: until then `previous` keeps the condition variable alive; the
    // enqueue still touches the queue after a notifier may have woken `previous`.
    Use u(*args.waiters);
    COOP_HOOK(condvar_park_before_enqueue);
    args.waiters->enqueue(previous);
    // Only now: a notifier that takes the mutex after this unlock finds us in the queue.
    args.mutex->unlock();
}

template <class Entry>
void BasicCondVar<Entry>::notify_one() noexcept {
    // Nobody waits (the common case of a monitor whose buffer is neither full nor empty):
    // return before the guard's two locked RMWs and the dequeue's hazard publication, as
    // Go's sync.Cond does (runtime/sema.go, notifyListNotifyOne: wait == notify -> return).
    // Enough: a waiter this notify must wake is one whose park happens-before it (its
    // enqueue returned before the unlock of the mutex that the notifier, or the thread
    // that set the predicate, locked afterwards: park unlocks only after the enqueue), and
    // Queue::empty() is false for every item whose enqueue returned before the call and is
    // still queued (queue.hpp). A park still inside its enqueue has not released the mutex,
    // so only a notifier that does not hold it can race with it, and such a notify may miss
    // that waiter (as it would if it came a moment earlier). Lifetime: two loads, while the
    // caller keeps the condition variable alive; nothing is touched after.
    if (waiters_.empty()) return;
    Use u(waiters_);  // the caller keeps us alive until now; a woken waiter may destroy us
    if (Activity* w = waiters_.dequeue()) Entry::make_ready(w);
}

template <class Entry>
void BasicCondVar<Entry>::notify_all() noexcept {
    if (waiters_.empty()) return;  // as notify_one
    Use u(waiters_);  // as notify_one: the loop dequeues again after each wake-up
    while (Activity* w = waiters_.dequeue()) Entry::make_ready(w);
}

// ------------------------------------------------------------------------------ Semaphore

template <class Entry>
void BasicSemaphore<Entry>::acquire_slow() noexcept {
    if (internal::current() == nullptr) {
        // Not an activity: we are a committed waiter (count_ went negative) that cannot be
        // queued; take the wake-up token directly instead of through the queue.
        for (;;) {
            // seq_cst: as in settle().
            std::int64_t p = pending_.load(std::memory_order_seq_cst);
            if (p > 0 && pending_.compare_exchange_weak(p, p - 1, std::memory_order_seq_cst)) return;
            std::this_thread::yield();
        }
    }
    Entry::suspend(&BasicSemaphore::park, this);
    // Woken by settle(): we own the permit that release() handed over.
}

template <class Entry>
void BasicSemaphore<Entry>::release_slow() noexcept {
    Use u(waiters_);  // a committed waiter cannot return before our token: still alive
    // seq_cst: the token is published before settle() looks at the queue (Dekker pair with
    // park(): see semaphore.hpp).
    pending_.fetch_add(1, std::memory_order_seq_cst);
    settle();
}

template <class Entry>
void BasicSemaphore<Entry>::park(Activity* previous, void* self) noexcept {
    auto* s = static_cast<BasicSemaphore*>(self);
    {
        Use u(s->waiters_);  // before the enqueue: until then `previous` keeps it alive
        COOP_HOOK(semaphore_park_before_enqueue);
        s->waiters_.enqueue(previous);
        // seq_cst fence: the enqueue precedes settle()'s look at pending_ (Dekker pair).
        std::atomic_thread_fence(std::memory_order_seq_cst);
        s->settle();
    }
    COOP_HOOK(semaphore_park_done);
}

template <class Entry>
void BasicSemaphore<Entry>::settle() noexcept {
    for (;;) {
        // seq_cst: every access to pending_ takes part in the Dekker pairs (semaphore.hpp).
        std::int64_t p = pending_.load(std::memory_order_seq_cst);
        do {
            if (p <= 0) return;
        } while (!pending_.compare_exchange_weak(p, p - 1, std::memory_order_seq_cst));
        if (Activity* w = waiters_.dequeue()) {
            Entry::make_ready(w);
            continue;
        }
        COOP_HOOK(semaphore_settle_missed);
        // No waiter visible yet: give the token back, then look again. A waiter whose
        // enqueue we missed sees the token in its own settle().
        pending_.fetch_add(1, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (waiters_.empty()) return;
    }
}

// ------------------------------------------------------------------ the instantiations

template class BasicMutex<internal::Untyped>;
template class BasicMutex<Algo<Scheduling::global>>;
template class BasicMutex<Algo<Scheduling::work_stealing>>;
template class BasicMutex<Algo<Scheduling::parasail>>;
template class BasicCondVar<internal::Untyped>;
template class BasicCondVar<Algo<Scheduling::global>>;
template class BasicCondVar<Algo<Scheduling::work_stealing>>;
template class BasicCondVar<Algo<Scheduling::parasail>>;
template class BasicSemaphore<internal::Untyped>;
template class BasicSemaphore<Algo<Scheduling::global>>;
template class BasicSemaphore<Algo<Scheduling::work_stealing>>;
template class BasicSemaphore<Algo<Scheduling::parasail>>;

}  // namespace coop
