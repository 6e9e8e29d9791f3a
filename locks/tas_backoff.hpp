// tas_backoff.hpp — `tas-backoff`: test-and-test-and-set with randomised exponential backoff.
//
// Citation: Anderson, "The performance of spin lock alternatives for shared-memory
// multiprocessors", IEEE TPDS 1(1), 1990; the "TAS-Backoff" baseline of Marathe, Moir and
// Shavit, "Composite Abortable Locks" (IPDPS 2006), section 1.3 and Figs. 3–5.
//
// Design: one word, `locked`. Acquire tries an exchange immediately (the uncontended path:
// one atomic RMW, no clock read); otherwise it spins reading the word (test) and only
// exchanges (test-and-set) when it reads free, backing off for a random, doubling number
// of pauses after every lost race. Abort = leave: a waiting thread holds nothing, so a
// timed-out attempt just returns.
//
// Ownership: the thread whose exchange returned false owns the lock until its unlock();
// no memory is allocated; the Ticket is only a success flag.
#pragma once

#include <atomic>
#include <string_view>

#include "locks/abortable.hpp"

namespace locks {

// TasBackoff — test-and-test-and-set lock with randomised exponential backoff.
class TasBackoff {
  public:
    static constexpr std::string_view name = "tas-backoff";

    // Ticket — true when the lock was acquired.
    struct Ticket {
        bool acquired = false;
        explicit operator bool() const { return acquired; }
    };

    explicit TasBackoff(const LockOptions& = {}) {}
    TasBackoff(const TasBackoff&) = delete;
    TasBackoff& operator=(const TasBackoff&) = delete;

    // try_lock_for — acquire within `patience`; Ticket{false} when it ran out.
    Ticket try_lock_for(Patience patience) {
        // acquire: on success, pairs with unlock()'s release store, so the previous
        // holder's critical section happens-before ours.
        if (!locked_.exchange(true, std::memory_order_acquire)) return {true};
        Deadline deadline(patience);
        Backoff backoff;
        for (;;) {
            // relaxed: only a hint whether to try; the exchange below does the acquiring.
            while (locked_.load(std::memory_order_relaxed)) {
                if (deadline.expired()) return {false};
                cpu_relax();
            }
            if (!locked_.exchange(true, std::memory_order_acquire)) return {true};  // as above
            if (deadline.expired()) return {false};
            backoff.pause();
        }
    }

    // try_lock — one attempt, no waiting.
    bool try_lock() { return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire); }

    // unlock — release a lock acquired by try_lock_for (precondition: t is a success).
    void unlock(Ticket) {
        // release: publishes the critical section to the next acquirer's exchange.
        locked_.store(false, std::memory_order_release);
    }

  private:
    alignas(64) std::atomic<bool> locked_{false};
};

}  // namespace locks
