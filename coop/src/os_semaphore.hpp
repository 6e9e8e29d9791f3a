// os_semaphore.hpp — a POSIX semaphore (sem_t) with acquire/release, for the locks that
// need a binary semaphore that one thread takes and another gives (owner_guard.hpp's
// mutex with hand-off and its waiters' wake-ups).
//
// Why not std::binary_semaphore: libstdc++ 12 (Debian 12's g++) loses wake-ups in
// std::counting_semaphore (GCC PR 98033 and PR 104928): acquire can sleep on the futex
// with the counter already 1, because release skips the notify when it sees the counter
// positive while a concurrent acquirer's CAS fails. It hung OwnerAccessWorkload.EveryGuard
// under TSan about once in 40 runs (a non-owner asleep in acquire, gdb: __platform_wait
// with val=1 while the semaphore was free). glibc's sem_t has no such window (its waiters
// register in the semaphore word before sleeping), and TSan intercepts it, so the
// happens-before edge release → acquire is visible to it.
#pragma once

#include <semaphore.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "coop/cpu_relax.hpp"

namespace coop {

class OsSemaphore {
  public:
    explicit OsSemaphore(unsigned initial) {
        if (sem_init(&s_, 0, initial) != 0) fail("sem_init");
    }
    ~OsSemaphore() { sem_destroy(&s_); }
    OsSemaphore(const OsSemaphore&) = delete;
    OsSemaphore& operator=(const OsSemaphore&) = delete;

    // acquire — take the semaphore. Spins a bounded number of sem_trywait first: the
    // owner guard's mutex is held only for a short critical section (a steal, a check of
    // the queue), and a futex sleep + cross-core wake costs ~30 µs on the machines this
    // project measures (KVM), against well under a microsecond of spinning.
    void acquire() {
        for (int i = 0; i < kSpins; ++i) {
            if (try_acquire()) return;
            cpu_relax();
        }
        while (sem_wait(&s_) != 0)
            if (errno != EINTR) fail("sem_wait");
    }
    // try_acquire — take the semaphore if it is free now; never sleeps.
    bool try_acquire() {
        while (sem_trywait(&s_) != 0) {
            if (errno == EAGAIN) return false;
            if (errno != EINTR) fail("sem_trywait");
        }
        return true;
    }
    void release() {
        if (sem_post(&s_) != 0) fail("sem_post");
    }

  private:
    static constexpr int kSpins = 2000;  // ~10-50 µs of pause: about one membarrier on KVM
    [[noreturn]] static void fail(const char* what) {
        std::perror(what);
        std::abort();
    }
    sem_t s_;
};

}  // namespace coop
