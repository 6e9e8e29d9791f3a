// io_poller.hpp — coop's poller (epoll), internal: the per-fd descriptors and their read and
// write slots, and what the scheduler calls to poll (scheduler.cpp SchedulerCore::park, the
// idle loop, yield). The public API is coop/io.hpp and coop/net.hpp; the design is in io.cpp's
// header and docs/native-runtime.md, "I/O".
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <system_error>

#include "coop/activity.hpp"
#include "coop/cpu_relax.hpp"

namespace coop::internal::io {

// A slot's values (Go's pollDesc rg/wg, runtime/netpoll.go: pdNil, pdReady, pdWait, a *g):
// empty, ready (an event came and nobody consumed it), wait (a waiter is committing its park)
// or the parked activity's address (aligned, so > kWait).
inline constexpr std::uintptr_t kEmpty = 0, kReady = 1, kWait = 2;
inline constexpr int kRead = 0, kWrite = 1;

// SpinLock — a short lock (test-and-test-and-set) for a descriptor's registration, close and
// deadline hand-off: held for a few instructions or one epoll_ctl, never across a park.
class SpinLock {
  public:
    void lock() noexcept {
        // acquire: the holder's critical section is ordered after the previous holder's.
        while (f_.exchange(true, std::memory_order_acquire))
            while (f_.load(std::memory_order_relaxed)) cpu_relax();
    }
    void unlock() noexcept { f_.store(false, std::memory_order_release); }  // release: pairs with lock

  private:
    std::atomic<bool> f_{false};
};

// PollDesc — one fd number's descriptor. Type-stable: lives in a chunk of the table that is
// never freed (io.cpp), so the poller may look at a descriptor whose fd was closed; its `seq`
// says which generation an event belongs to (the epoll data packs fd and seq, Go's fdseq).
struct alignas(64) PollDesc {
    std::atomic<std::uintptr_t> slot[2] = {kEmpty, kEmpty};  // kRead, kWrite
    std::atomic<std::uint32_t> seq{0};    // bumped by close: events and waiters of older ones stale
    std::atomic<bool> open{false};        // registered with epoll under `seq`
    std::atomic<bool> pollable{true};     // false: epoll refused it (a regular file): always ready
    SpinLock lock;                        // registration, close, a deadline's fire vs its waiter
    std::uint64_t wait_id[2] = {0, 0};    // under lock: which wait a deadline timer belongs to
    bool timed_out[2] = {false, false};   // under lock: that wait's deadline fired
};

// Batch — what one epoll_wait returned (on the polling processor's stack).
struct Batch {
    static constexpr int kMax = 128;  // Go's netpoll reads 128 events per call
    epoll_event ev[kMax];
    int n = 0;
};

// Poller — the one epoll instance of the process (fds are process-wide; at most one runtime
// runs at a time), made at the first registration.
class Poller {
  public:
    Poller();
    // take_token / release_token — at most one processor blocks in epoll_wait (the token's
    // holder). Any processor.
    bool take_token() noexcept {
        // relaxed load first (a hint, skips the RMW when taken); acquire exchange: the new
        // holder sees the previous holder's batch handling (nothing else is guarded).
        return !token_.load(std::memory_order_relaxed) && !token_.exchange(true, std::memory_order_acquire);
    }
    void release_token() noexcept { token_.store(false, std::memory_order_release); }
    bool token_held() const noexcept { return token_.load(std::memory_order_relaxed); }
    // block — epoll_wait into `b` for at most timeout_ns (< 0: none). The token's holder only.
    void block(std::int64_t timeout_ns, Batch& b) noexcept;
    // poll_now — epoll_wait without blocking, events made ready on processor `self`; returns
    // how many activities it woke. Skipped (0) when the token is held: its holder sleeps in
    // epoll_wait and gets the events itself. A busy processor, between activities.
    unsigned poll_now(unsigned self) noexcept;
    // dispatch — the activities of `b`'s events made ready on processor `self` (one kept by
    // the caller's next pick, the rest queued for others, parked processors woken by
    // awakened's notify); returns how many. Any bound processor.
    // `blocking`: b came from block() (only then is the eventfd drained).
    unsigned dispatch(unsigned self, Batch& b, bool blocking) noexcept;
    // poke — makes a blocked (or the next) epoll_wait return: writes the eventfd unless a
    // write is pending (Go's netpollBreak and netpollWakeSig). Any thread.
    void poke() noexcept;
    // waiters — activities parked (or committing) on a slot: a hint for the idle loop's
    // hand-off of the polling duty (Go's netpollWaiters).
    int waiters() const noexcept { return waiters_.load(std::memory_order_relaxed); }

    int epfd() const noexcept { return epfd_; }
    std::atomic<int> waiters_{0};

  private:
    int epfd_ = -1;
    int evfd_ = -1;
    alignas(64) std::atomic<bool> token_{false};
    alignas(64) std::atomic<bool> poke_pending_{false};
};

// active_poller — the poller once some fd has been registered (nullptr before: processors
// park on their futex only). Any thread.
Poller* active_poller() noexcept;

// descriptor — the descriptor of fd number `fd` (made on first use; never freed). Tests.
PollDesc* descriptor(int fd) noexcept;

// register_fd — registers `fd` with the poller (as a first wait does); tests.
std::error_code register_fd(int fd) noexcept;

// poll_busy — a busy processor's non-blocking poll (yield, suspend: every kIoPollMask+1
// dispatches). Executed only by processor `self`.
void poll_busy(unsigned self) noexcept;

// kIoPollMask — a busy processor polls for I/O every (mask+1)-th yield or block (tokio's
// event_interval is 61 ticks).
inline constexpr unsigned kIoPollMask = 63;

}  // namespace coop::internal::io
