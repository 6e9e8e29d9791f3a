// pthread_locks.hpp — the OS-provided references: `pthread-timedlock`
// (pthread_mutex_timedlock, whose deadline is on CLOCK_REALTIME) and `pthread-mutex` (a
// plain pthread_mutex_t; patience ignored).
//
// Citation: POSIX.1-2008 pthread_mutex_timedlock. (Not glibc's pthread_mutex_clocklock:
// ThreadSanitizer does not intercept it and would miss the acquisition.)
// Design: thin adapters to the AbortableLock interface; a first trylock keeps the
// uncontended path free of clock reads. Ownership: POSIX's — the acquiring thread unlocks.
#pragma once

#include <pthread.h>
#include <time.h>

#include <cerrno>
#include <string_view>

#include "locks/abortable.hpp"

namespace locks {

// PthreadTimedlock — a pthread_mutex_t acquired with pthread_mutex_timedlock.
class PthreadTimedlock {
  public:
    static constexpr std::string_view name = "pthread-timedlock";

    // Ticket — true when the mutex was acquired.
    struct Ticket {
        bool acquired = false;
        explicit operator bool() const { return acquired; }
    };

    explicit PthreadTimedlock(const LockOptions& = {}) { pthread_mutex_init(&m_, nullptr); }
    ~PthreadTimedlock() { pthread_mutex_destroy(&m_); }
    PthreadTimedlock(const PthreadTimedlock&) = delete;
    PthreadTimedlock& operator=(const PthreadTimedlock&) = delete;

    // try_lock_for — trylock, then wait until the (CLOCK_REALTIME) deadline.
    Ticket try_lock_for(Patience p) {
        if (pthread_mutex_trylock(&m_) == 0) return {true};
        if (p.is_infinite()) return {pthread_mutex_lock(&m_) == 0};
        timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const long long ns = static_cast<long long>(ts.tv_nsec) + p.ns() % 1000000000;
        ts.tv_sec += static_cast<time_t>(p.ns() / 1000000000 + ns / 1000000000);
        ts.tv_nsec = static_cast<long>(ns % 1000000000);
        int r;
        while ((r = pthread_mutex_timedlock(&m_, &ts)) == EINTR) {
        }
        return {r == 0};
    }

    // unlock — release (precondition: t is a success of this thread).
    void unlock(Ticket) { pthread_mutex_unlock(&m_); }

  private:
    pthread_mutex_t m_;
};

// PthreadMutex — a plain pthread_mutex_t; try_lock_for waits forever (patience ignored).
class PthreadMutex {
  public:
    static constexpr std::string_view name = "pthread-mutex";

    // Ticket — always true (the mutex never times out).
    struct Ticket {
        bool acquired = false;
        explicit operator bool() const { return acquired; }
    };

    explicit PthreadMutex(const LockOptions& = {}) { pthread_mutex_init(&m_, nullptr); }
    ~PthreadMutex() { pthread_mutex_destroy(&m_); }
    PthreadMutex(const PthreadMutex&) = delete;
    PthreadMutex& operator=(const PthreadMutex&) = delete;

    // try_lock_for — pthread_mutex_lock; the patience is ignored.
    Ticket try_lock_for(Patience) { return {pthread_mutex_lock(&m_) == 0}; }
    // unlock — pthread_mutex_unlock.
    void unlock(Ticket) { pthread_mutex_unlock(&m_); }

  private:
    pthread_mutex_t m_;
};

}  // namespace locks
