// io_poller.hpp — coop's poller (epoll), internal: the per-fd descriptors and their read and
// write slots, and what the scheduler calls to poll (scheduler.cpp SchedulerCore::park, the
// idle loop, yield). The public API is coop/io.hpp and coop/net.hpp; the design is in io.cpp's
// header and docs/native-runtime.md, "I/O".
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <system_error>

#include "coop/activity.hpp"  // now_ns
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

    // busy_wanted and since_poll_ns — the time half of the busy processors' poll
    // (busy_poll_due below): activities wait on fds, nobody sleeps in epoll_wait (relaxed
    // loads: hints), and no processor has polled for kBusyPollNs. The clock is read only when
    // busy_wanted holds (an I/O program with every processor busy).
    bool busy_wanted() const noexcept { return waiters() > 0 && !token_held(); }
    // since_poll_ns — how long before `now` some processor last returned from epoll_wait.
    std::int64_t since_poll_ns(std::int64_t now) const noexcept {
        return now - last_poll_ns_.load(std::memory_order_relaxed);  // relaxed: a hint (see last_poll_ns_)
    }
    // kBusyPollNs — a busy runtime's poll interval (Photon's idler polls every >= 1000 us;
    // tokio's event_interval counts ticks only, and Go's sysmon's 10 ms gives 10 ms tails,
    // golang/go PR #51651).
    static constexpr std::int64_t kBusyPollNs = 1000000;

    int epfd() const noexcept { return epfd_; }
    std::atomic<int> waiters_{0};

  private:
    int epfd_ = -1;
    int evfd_ = -1;
    alignas(64) std::atomic<bool> token_{false};
    alignas(64) std::atomic<bool> poke_pending_{false};
    // last_poll_ns_ — when some processor last returned from epoll_wait (blocking or not):
    // a hint for busy_poll_due, relaxed (a stale value makes one poll early or late by the
    // interval, and a poll loses nothing; the processors' own line, written once per poll).
    alignas(64) std::atomic<std::int64_t> last_poll_ns_{0};
};

// active_poller — the poller once some fd has been registered (nullptr before: processors
// park on their futex only). Any thread.
Poller* active_poller() noexcept;

// descriptor — the descriptor of fd number `fd` (made on first use; never freed). Tests.
PollDesc* descriptor(int fd) noexcept;

// register_fd — registers `fd` with the poller (as a first wait does); tests.
std::error_code register_fd(int fd) noexcept;

// poll_busy — a busy processor's non-blocking poll (yield, suspend: see busy_checkpoint).
// Executed only by processor `self`.
void poll_busy(unsigned self) noexcept;

// kIoPollMask — a busy processor polls for I/O every (mask+1)-th yield or block (tokio's
// event_interval is 61 ticks).
inline constexpr unsigned kIoPollMask = 63;
// kIoClockMask — and, at a clock tick, also if no processor has polled for
// Poller::kBusyPollNs (busy_poll_due): an activity that yields every few ms would otherwise
// leave I/O waiting for 64 of its yields. A clock tick is every (mask+1)-th yield or block
// while they are quick, every one once they are slow (IoClock). Why a clock read every 8
// switches is cheap enough: none at all unless activities wait on fds and every processor
// is busy (then a relaxed load of the poller and nothing more); CLOCK_MONOTONIC through the
// vDSO costs ~20-60 ns, so <= 8 ns per switch on the busiest I/O program against the
// ~0.5-2 us of the syscalls each of its blocks stands for; a pure CPU program pays one load
// of g_poller per 8 switches.
inline constexpr unsigned kIoClockMask = 7;
static_assert((kIoPollMask & kIoClockMask) == kIoClockMask, "every poll tick is a clock tick");

// IoClock — a processor's clock ticks. `mask` is kIoClockMask (a clock read every 8th yield
// or block) while they are quick, 0 (every one a clock tick) once 8 took kSlowStretchNs or
// more, and kIoClockMask again after kQuickRun ticks in a row each quicker than an eighth of
// it. Why: with a read every 8th tick only, activities that compute 10 ms between yields (the
// echo-hogs workload) left a reply in the socket for up to 8 of their slices, 80 ms, against
// the 1 ms of kBusyPollNs. Why a run of quick ticks and not one: a processor's ticks are all
// its activities' (a hog's 10 ms yield, then its handler's 2 us block); one quick tick would
// flip the mask back between two slow ones. Cost: a clock read (~20-60 ns) per tick only on a
// processor that had a tick of >= 12.5 us among its last kQuickRun, and (as before) only
// while activities wait on fds and nobody sleeps in epoll_wait, or while the mask is 0: then
// the read is what brings the mask back (at most kQuickRun reads once I/O ends). Bound: a
// busy processor polls within one yield or block after the interval passed while its ticks
// are slow, within 8 quick ones otherwise; at the change from quick to slow ticks, within 8
// ticks once. `last_ns`: this processor's previous clock read at a tick. Processor-local.
struct IoClock {
    static constexpr std::int64_t kSlowStretchNs = 100000;  // 8 ticks in 100 us: 12.5 us each
    static constexpr unsigned kQuickRun = 64;
    unsigned mask = kIoClockMask;
    unsigned quick = 0;  // quick ticks in a row while mask == 0
    std::int64_t last_ns = 0;
};

// busy_poll_due — whether a busy processor at a clock tick should poll; adapts `c` (IoClock)
// to how long its ticks take.
bool busy_poll_due(IoClock& c) noexcept;

// busy_checkpoint — suspend's part (at a clock tick, `ticks`: the processor's count): polls
// every kIoPollMask+1 blocks, or when busy_poll_due. Processor `self` only.
inline void busy_checkpoint(unsigned self, unsigned ticks, IoClock& c) noexcept {
    if ((ticks & kIoPollMask) == 0 || busy_poll_due(c)) poll_busy(self);
}

}  // namespace coop::internal::io
