// io.cpp — coop's poller (epoll) and the waits of coop/io.hpp: an activity that would block
// on an fd parks, and an idle processor that holds the poll token sleeps in epoll_wait and
// makes it ready again.
//
// Citation: Go's netpoller (golang/go runtime/netpoll.go: pollDesc's rg/wg binary semaphores,
// netpollblock / netpollblockcommit / netpollunblock; runtime/netpoll_epoll.go: one
// EPOLLIN|EPOLLOUT|EPOLLRDHUP|EPOLLET registration per fd, the (pd, fdseq) tag, netpollBreak's
// eventfd deduplicated by netpollWakeSig; runtime/proc.go findRunnable: at most one M blocks
// in netpoll until the earliest timer), with the park committed in coop's task-switch
// finalizer (Negele et al. 2017, Sect. 3.2, Fig. 3: the finalizer runs on the resumed side
// after the suspended context is saved), which is what Go's netpollblockcommit is to gopark.
//
// Design summary
// - Descriptors: one PollDesc per fd number in a table of chunks that are never freed
//   (type-stable: the poller may read a descriptor whose fd was closed). An fd is registered
//   once (epoll_ctl ADD, edge-triggered, in|out|rdhup) with data = fd | seq << 32; close
//   bumps seq, so an event of the closed generation that the poller already holds is dropped.
// - A slot (read or write) holds kEmpty, kReady, kWait or the parked activity:
//     wait():    CAS Ready -> Empty: return (an event came since the last wait)
//                CAS Empty -> Wait; re-check close (seq) and the deadline; arm the deadline;
//                suspend(fin_io_park): switch away, then on the resumed side
//     fin_io_park: CAS Wait -> activity; if it fails (the slot became Ready or Empty meanwhile:
//                an event, a close or the deadline came and found nobody to wake), make the
//                activity ready at once.
//                After the resume: exchange -> Empty; Ready: ok; else closed / timed out.
//     unblock(slot, ioready): (poller: ioready; close, deadline: not)
//                Ready stays; Empty stays unless ioready (-> Ready); Wait -> Ready/Empty;
//                activity -> Ready/Empty and the activity is returned to be made ready.
//   No wake-up is lost: whoever changes the slot away from Wait or the activity is the
//   one who resumes it (the finalizer if the change came first, the unblocker otherwise),
//   and the commit happens after the context is saved, so nobody resumes a half-suspended
//   activity (Boost.Fiber #138 is that bug). An I/O call tries the syscall first and
//   waits only on EAGAIN, so data already there costs the read alone.
// - Who polls: SchedulerCore::park (scheduler.cpp): an idle processor that takes the token
//   parks as Polling (park.hpp) and calls Poller::block (epoll_wait until the earliest timer)
//   instead of its futex; wakers that find only it parked write the eventfd (poller_poke).
//   Its events are dispatched after it is Running again: each activity made ready on this
//   processor (awakened: the next pick keeps one, the others are queued, and awakened's
//   notify wakes parked processors for them). Busy processors poll without blocking every
//   kIoPollMask+1 yields or blocks, or at every kIoClockMask+1-th once nobody has polled for
//   1 ms (busy_checkpoint, busy_poll_due), when nobody holds the token; a spinning idle
//   processor polls each time it gives its core back (worker.cpp). The maker of the poller
//   wakes a processor parked before it existed (poller(); its re-check: SchedulerCore::park).
// - Deadlines: a heap-allocated timer (TimerEntry::fire) per timed wait, tagged with the
//   slot's wait_id; fire and the waiter's end of wait take the descriptor's lock, so a late
//   timer never touches a later wait.
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include "coop/coop.hpp"
#include "coop/io.hpp"
#include "coop/src/io_poller.hpp"
#include "coop/src/runtime_internal.hpp"

namespace coop {
namespace internal::io {

namespace {
constexpr std::uint64_t kPokeTag = ~std::uint64_t{0};  // the eventfd's epoll data

// The descriptor table: kChunks chunks of kChunk descriptors, each made on first use and
// never freed.
constexpr int kChunkBits = 10, kChunk = 1 << kChunkBits, kChunks = 1 << 12;  // 4M fds
std::atomic<PollDesc*> g_chunks[kChunks];

std::atomic<Poller*> g_poller{nullptr};
std::once_flag g_poller_once;
std::atomic<bool> g_no_pwait2{false};

std::error_code errno_code(int e) noexcept { return {e, std::generic_category()}; }

Poller& poller() {
    bool made = false;
    std::call_once(g_poller_once, [&made] {
        static Poller p;  // never destroyed before exit; its fds live as long as the process
        // release: the poller is built before processors see it (active_poller's acquire).
        g_poller.store(&p, std::memory_order_release);
        made = true;
    });
    if (made) {
        // The processors that parked before the poller existed sleep on their futexes, and
        // none would take the poll token until something woke it (an idle runtime would
        // leave the first fd's events to the busy processors' polls): wake one, whose next
        // park takes the token. No lost nudge: notify's seq_cst fence orders the store of
        // g_poller above before its load of the parked count, and a parker that decided on
        // its futex before it saw the poller re-checks g_poller after its own count and
        // fence (SchedulerCore::park): of the two, one sees the other (Dekker, as park.hpp
        // (a)). From a thread outside the runtimes nobody is nudged: the first activity to
        // wait then finds its own processor idle (it takes the token) or busy (it polls).
        if (Processor* self = this_processor()) self->runtime->scheduler->notify();
    }
    // relaxed: call_once's completion synchronizes with every later return from it
    // ([thread.once.callonce]: the active call's end happens before the passive calls
    // return), so the store inside it is visible here without an order of this load's own.
    return *g_poller.load(std::memory_order_relaxed);
}

// unblock — Go's netpollunblock: see the header. Returns the activity to make ready.
Activity* unblock(std::atomic<std::uintptr_t>& slot, bool ioready) noexcept {
    // seq_cst load and CAS: close()'s half of the Dekker pair with the waiter (its seq bump
    // before this load; the waiter's CAS to Wait before its load of seq): one of the two
    // sees the other. acq_rel in effect for the activity: acquire takes the finalizer's
    // release CAS that published the parked activity (its saved context).
    std::uintptr_t old = slot.load(std::memory_order_seq_cst);
    for (;;) {
        if (old == kReady) return nullptr;
        if (old == kEmpty && !ioready) return nullptr;
        const std::uintptr_t to = ioready ? kReady : kEmpty;
        if (slot.compare_exchange_weak(old, to, std::memory_order_seq_cst, std::memory_order_seq_cst))
            return old > kWait ? reinterpret_cast<Activity*>(old) : nullptr;
    }
}

// IoTimer — a timed wait's deadline (TimerEntry::fire).
struct IoTimer : TimerEntry {
    PollDesc* desc;
    int mode;
    std::uint64_t id;  // the wait it belongs to (PollDesc::wait_id)
};

void fire_io_timer(TimerEntry* e, bool expired) {
    auto* t = static_cast<IoTimer*>(e);
    if (expired) {
        PollDesc& d = *t->desc;
        Activity* a = nullptr;
        d.lock.lock();
        if (d.wait_id[t->mode] == t->id) {  // its wait has not ended: time it out
            d.timed_out[t->mode] = true;
            a = unblock(d.slot[t->mode], false);
        }
        d.lock.unlock();
        if (a != nullptr) make_ready(a);
    }
    delete t;
}

// fin_io_park — the commit (Go's netpollblockcommit), on the resumed side of the waiter's
// switch: its context is saved.
void fin_io_park(Activity* prev, void* slot_ptr) noexcept {
    COOP_HOOK(io_park_before_commit);
    auto& slot = *static_cast<std::atomic<std::uintptr_t>*>(slot_ptr);
    std::uintptr_t expected = kWait;
    // release: publishes `prev` (its saved context) to the unblocker that takes it from the
    // slot (acquire there); acquire on failure: takes the unblocker's writes.
    if (!slot.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(prev), std::memory_order_acq_rel,
                                      std::memory_order_acquire)) {
        // An event, a close or the deadline changed the slot between the waiter's CAS to
        // Wait and now, and found nobody to wake: the waiter is ready at once (Go's park_m
        // when the commit fails). Without this line it would never run again.
        Processor* p = this_processor();
        p->runtime->scheduler->awakened(p->index, prev);
    }
}

std::int64_t to_ns(coop::io::Deadline d) noexcept {
    if (d == coop::io::kNoDeadline) return INT64_MAX;
    return std::chrono::duration_cast<std::chrono::nanoseconds>(d.time_since_epoch()).count();
}

// open_desc — the descriptor of `fd`, registered with the poller (once per generation);
// `seq`: its generation.
PollDesc* open_desc(int fd, std::uint32_t& seq, std::error_code& ec) noexcept {
    PollDesc* d = descriptor(fd);
    if (d == nullptr) {
        ec = errno_code(fd < 0 ? EBADF : ENOMEM);
        return nullptr;
    }
    // acquire: pairs with the release store of `open` below (the registration's writes).
    if (!d->open.load(std::memory_order_acquire)) {
        Poller* pl = nullptr;
        try {
            pl = &poller();
        } catch (...) {
            ec = errno_code(ENOMEM);
            return nullptr;
        }
        if (pl->epfd() < 0) {
            ec = errno_code(EMFILE);
            return nullptr;
        }
        d->lock.lock();
        if (!d->open.load(std::memory_order_relaxed)) {
            d->slot[kRead].store(kEmpty, std::memory_order_relaxed);
            d->slot[kWrite].store(kEmpty, std::memory_order_relaxed);
            const std::uint32_t s = d->seq.load(std::memory_order_relaxed);
            epoll_event ev{};
            ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
            ev.data.u64 = static_cast<std::uint32_t>(fd) | (static_cast<std::uint64_t>(s) << 32);
            bool pollable = true;
            if (epoll_ctl(pl->epfd(), EPOLL_CTL_ADD, fd, &ev) != 0) {
                // EEXIST: registered by an earlier generation that was closed behind coop's
                // back (io.hpp's rule); retag it. EPERM: not pollable (a regular file).
                if (errno == EEXIST && epoll_ctl(pl->epfd(), EPOLL_CTL_MOD, fd, &ev) == 0) {
                } else if (errno == EPERM) {
                    pollable = false;
                } else {
                    ec = errno_code(errno);
                    d->lock.unlock();
                    return nullptr;
                }
            }
            d->pollable.store(pollable, std::memory_order_relaxed);
            // release: the slots, the tag and `pollable` before a reader that sees `open`.
            d->open.store(true, std::memory_order_release);
        }
        d->lock.unlock();
    }
    // relaxed: read after open's acquire, and only compared with later loads of seq.
    seq = d->seq.load(std::memory_order_relaxed);
    return d;
}

// wait_thread — wait() outside an activity: poll(2).
std::error_code wait_thread(int fd, int mode, std::int64_t deadline_ns) noexcept {
    pollfd p{fd, static_cast<short>(mode == kRead ? POLLIN : POLLOUT), 0};
    for (;;) {
        int ms = -1;
        if (deadline_ns != INT64_MAX) {
            const std::int64_t left = deadline_ns - now_ns();
            if (left <= 0) ms = 0;
            else ms = static_cast<int>(std::min<std::int64_t>((left + 999999) / 1000000, INT_MAX));
        }
        const int r = ::poll(&p, 1, ms);
        if (r > 0) return {};
        if (r == 0) return std::make_error_code(std::errc::timed_out);
        if (errno != EINTR) return errno_code(errno);
    }
}

// wait — wait_readable / wait_writable (see the header).
std::error_code wait(int fd, int mode, std::int64_t deadline_ns) noexcept {
    Activity* self = current();
    if (self == nullptr) return wait_thread(fd, mode, deadline_ns);
    std::error_code ec;
    std::uint32_t seq = 0;
    PollDesc* d = open_desc(fd, seq, ec);
    if (d == nullptr) return ec;
    if (!d->pollable.load(std::memory_order_relaxed)) return {};  // a regular file: ready
    std::atomic<std::uintptr_t>& slot = d->slot[mode];
    COOP_HOOK(io_wait_before_claim, fd);
    // seq_cst: the CAS to Wait is the waiter's half of the Dekker pair with close() (unblock).
    std::uintptr_t old = slot.load(std::memory_order_seq_cst);
    for (;;) {
        if (old == kReady) {
            if (slot.compare_exchange_weak(old, kEmpty, std::memory_order_seq_cst)) return {};
        } else if (old == kEmpty) {
            if (slot.compare_exchange_weak(old, kWait, std::memory_order_seq_cst)) break;
        } else {
            return std::make_error_code(std::errc::device_or_resource_busy);  // a second waiter
        }
    }
    // Give up before parking: closed, or the deadline has passed. An event that came meanwhile
    // wins (Ready), as in Go's netpollblock.
    auto give_up = [&](std::errc why) -> std::error_code {
        // acq_rel: takes an unblocker's Ready.
        if (slot.exchange(kEmpty, std::memory_order_acq_rel) == kReady) return {};
        return std::make_error_code(why);
    };
    // seq_cst: after our CAS to Wait (Dekker with close, which bumps seq then looks at the slot).
    if (d->seq.load(std::memory_order_seq_cst) != seq) return give_up(std::errc::operation_canceled);
    const bool timed = deadline_ns != INT64_MAX;
    if (timed) {
        if (deadline_ns <= now_ns()) return give_up(std::errc::timed_out);
        auto* t = new (std::nothrow) IoTimer;
        if (t == nullptr) return give_up(std::errc::not_enough_memory);
        t->activity = self;
        t->deadline_ns = deadline_ns;
        t->fire = &fire_io_timer;
        t->desc = d;
        t->mode = mode;
        t->id = d->wait_id[mode];  // only this waiter changes it (under the lock), so no race
        // Pushed before the park: if it fires before the commit, it finds Wait, empties the
        // slot and the commit fails (the finalizer makes us ready). `t` is the timers' now.
        push_timer(*this_processor()->runtime, t);
    }
    Poller& pl = *g_poller.load(std::memory_order_relaxed);  // open_desc made it
    pl.waiters_.fetch_add(1, std::memory_order_relaxed);   // a hint (waiters())
    suspend(&fin_io_park, &slot);
    pl.waiters_.fetch_sub(1, std::memory_order_relaxed);
    bool timed_out = false;
    if (timed) {
        // Under the lock: a fire of this wait either finished (timed_out set) or will find the
        // wait_id moved on and leave the slot alone.
        d->lock.lock();
        ++d->wait_id[mode];
        timed_out = d->timed_out[mode];
        d->timed_out[mode] = false;
        d->lock.unlock();
    }
    // acq_rel: acquire takes the unblocker's writes; we are the slot's only waiter.
    old = slot.exchange(kEmpty, std::memory_order_acq_rel);
    if (old == kReady) return {};
    // The deadline first: its fire woke us (or came before the close's wake-up did: both
    // happened, and timed_out is as true as operation_canceled).
    if (timed_out) return std::make_error_code(std::errc::timed_out);
    // acquire: close's bump (it happened before its unblock, which we synchronised with).
    if (d->seq.load(std::memory_order_acquire) != seq) return std::make_error_code(std::errc::operation_canceled);
    return {};  // woken otherwise (cannot happen today): the caller's syscall tells
}

// unregister — close()'s and forget()'s common part: wakes the waiters with an error and
// removes the fd from the poller; the generation ends (seq bumped).
void unregister(int fd) noexcept {
    PollDesc* d = descriptor(fd);
    if (d == nullptr) return;
    Activity* woken[2] = {nullptr, nullptr};
    d->lock.lock();
    if (d->open.load(std::memory_order_relaxed)) {
        // seq_cst: the bump comes before unblock's look at the slots (Dekker with wait()).
        d->seq.fetch_add(1, std::memory_order_seq_cst);
        woken[0] = unblock(d->slot[kRead], false);
        woken[1] = unblock(d->slot[kWrite], false);
        if (d->pollable.load(std::memory_order_relaxed))
            epoll_ctl(g_poller.load(std::memory_order_relaxed)->epfd(), EPOLL_CTL_DEL, fd, nullptr);
        d->open.store(false, std::memory_order_release);
    }
    d->lock.unlock();
    for (Activity* a : woken)
        if (a != nullptr) make_ready(a);
}

}  // namespace

PollDesc* descriptor(int fd) noexcept {
    if (fd < 0 || fd >= kChunk * kChunks) return nullptr;
    std::atomic<PollDesc*>& c = g_chunks[fd >> kChunkBits];
    // acquire: the chunk's construction before its use.
    PollDesc* chunk = c.load(std::memory_order_acquire);
    if (chunk == nullptr) {
        auto* fresh = new (std::nothrow) PollDesc[kChunk];
        if (fresh == nullptr) return nullptr;
        // acq_rel: release publishes the fresh chunk; acquire (failure) takes the winner's.
        if (c.compare_exchange_strong(chunk, fresh, std::memory_order_acq_rel, std::memory_order_acquire)) chunk = fresh;
        else delete[] fresh;
    }
    return &chunk[fd & (kChunk - 1)];
}

std::error_code register_fd(int fd) noexcept {
    std::error_code ec;
    std::uint32_t seq = 0;
    open_desc(fd, seq, ec);
    return ec;
}

Poller* active_poller() noexcept {
    // acquire: pairs with poller()'s release store.
    return g_poller.load(std::memory_order_acquire);
}

Poller::Poller() {
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    evfd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd_ >= 0 && evfd_ >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;  // level-triggered: readable until drained, so a poke that comes
                              // before the poller enters epoll_wait still ends that wait
        ev.data.u64 = kPokeTag;
        if (epoll_ctl(epfd_, EPOLL_CTL_ADD, evfd_, &ev) == 0) return;
    }
    // No poller (out of fds): open_desc reports EMFILE; nobody polls.
    if (epfd_ >= 0) ::close(epfd_);
    if (evfd_ >= 0) ::close(evfd_);
    epfd_ = evfd_ = -1;
}

void Poller::block(std::int64_t timeout_ns, Batch& b) noexcept {
    int n = -1;
    bool waited = false;
    // relaxed: a flag set once when the kernel lacks epoll_pwait2 (< 5.11).
    if (!g_no_pwait2.load(std::memory_order_relaxed)) {
        timespec ts{};
        if (timeout_ns >= 0) {
            ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
            ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
        }
        n = epoll_pwait2(epfd_, b.ev, Batch::kMax, timeout_ns >= 0 ? &ts : nullptr, nullptr);
        waited = !(n < 0 && errno == ENOSYS);
        if (!waited) g_no_pwait2.store(true, std::memory_order_relaxed);
    }
    if (!waited) {
        // epoll_wait's milliseconds, rounded up (as Go's netpoll) so a timer is not polled early.
        const int ms =
            timeout_ns < 0 ? -1 : static_cast<int>(std::min<std::int64_t>((timeout_ns + 999999) / 1000000, INT_MAX));
        n = epoll_wait(epfd_, b.ev, Batch::kMax, ms);
    }
    b.n = n < 0 ? 0 : n;
    last_poll_ns_.store(now_ns(), std::memory_order_relaxed);  // relaxed: a hint (see its declaration)
}


unsigned Poller::dispatch(unsigned self, Batch& b, bool blocking) noexcept {
    if (b.n == 0) return 0;
    COOP_HOOK(io_poll_before_events);
    Processor* p = this_processor();
    unsigned woken = 0;
    for (int i = 0; i < b.n; ++i) {
        const epoll_event& ev = b.ev[i];
        if (ev.data.u64 == kPokeTag) {
            // Only a blocking poll drains the eventfd (Go's netpoll: delay != 0): a busy
            // processor's non-blocking poll must not eat a poke meant for the blocked one.
            if (blocking) {
                // seq_cst: cleared before the drain, so a poke after it writes again.
                poke_pending_.store(false, std::memory_order_seq_cst);
                std::uint64_t v;
                [[maybe_unused]] const ssize_t r = ::read(evfd_, &v, sizeof v);
            }
            continue;
        }
        const int fd = static_cast<int>(ev.data.u64 & 0xffffffffu);
        const auto seq = static_cast<std::uint32_t>(ev.data.u64 >> 32);
        PollDesc* d = descriptor(fd);
        // acquire: a close's bump; an event of an older generation is stale (its fd number may
        // have been reused): dropped (Go's fdseq check).
        if (d == nullptr || d->seq.load(std::memory_order_acquire) != seq) continue;
        Activity* a[2] = {nullptr, nullptr};
        if (ev.events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) a[0] = unblock(d->slot[kRead], true);
        if (ev.events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) a[1] = unblock(d->slot[kWrite], true);
        for (Activity* x : a) {
            if (x == nullptr) continue;
            p->runtime->scheduler->awakened(self, x);
            ++woken;
        }
    }
    COOP_HOOK(io_after_dispatch, woken);
    return woken;
}

unsigned Poller::poll_now(unsigned self) noexcept {
    if (token_held()) return 0;
    Batch b;
    const int n = epoll_wait(epfd_, b.ev, Batch::kMax, 0);
    b.n = n < 0 ? 0 : n;
    last_poll_ns_.store(now_ns(), std::memory_order_relaxed);  // relaxed: a hint (see its declaration)
    return dispatch(self, b, false);
}

void Poller::poke() noexcept {
    // acq_rel: one write per pending poke (Go's netpollWakeSig CAS); cleared by the drain.
    if (poke_pending_.exchange(true, std::memory_order_acq_rel)) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t r = ::write(evfd_, &one, sizeof one);
}

bool busy_poll_due(IoClock& c) noexcept {
    const Poller* p = active_poller();
    if (p == nullptr) return false;
    const bool wanted = p->busy_wanted();
    if (!wanted && c.mask != 0) return false;  // quick ticks, no I/O to poll: no clock read
    const std::int64_t now = now_ns();
    const std::int64_t took = now - c.last_ns;  // since this processor's previous clock tick
    c.last_ns = now;
    if (c.mask != 0) {
        if (took >= IoClock::kSlowStretchNs) c.mask = 0, c.quick = 0;
    } else if (took >= IoClock::kSlowStretchNs / (kIoClockMask + 1)) {
        c.quick = 0;
    } else if (++c.quick >= IoClock::kQuickRun) {
        c.mask = kIoClockMask;
    }
    return wanted && p->since_poll_ns(now) >= Poller::kBusyPollNs;
}

void poll_busy(unsigned self) noexcept {
    if (Poller* p = active_poller(); p != nullptr && p->waiters() > 0) p->poll_now(self);
}

}  // namespace internal::io

namespace internal {
void poller_poke() noexcept {
    if (io::Poller* p = io::active_poller()) p->poke();
}
}  // namespace internal

// ------------------------------------------------------------------------- the public API

namespace io {

namespace {
class Category final : public std::error_category {
  public:
    const char* name() const noexcept override { return "coop.io"; }
    std::string message(int c) const override {
        return c == static_cast<int>(errc::eof) ? "end of file before the requested bytes" : "unknown coop.io error";
    }
};
}  // namespace

const std::error_category& category() noexcept {
    static const Category c;
    return c;
}

std::error_code wait_readable(int fd, Deadline deadline) noexcept {
    return internal::io::wait(fd, internal::io::kRead, internal::io::to_ns(deadline));
}
std::error_code wait_writable(int fd, Deadline deadline) noexcept {
    return internal::io::wait(fd, internal::io::kWrite, internal::io::to_ns(deadline));
}

std::size_t read(int fd, void* buf, std::size_t n, std::error_code& ec, Deadline deadline) noexcept {
    const std::int64_t dl = internal::io::to_ns(deadline);
    for (;;) {
        const ssize_t r = ::read(fd, buf, n);
        if (r >= 0) {
            ec.clear();
            return static_cast<std::size_t>(r);
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            ec = internal::io::errno_code(errno);
            return 0;
        }
        if ((ec = internal::io::wait(fd, internal::io::kRead, dl))) return 0;
    }
}

std::size_t write(int fd, const void* buf, std::size_t n, std::error_code& ec, Deadline deadline) noexcept {
    const std::int64_t dl = internal::io::to_ns(deadline);
    bool sock = true;  // send(MSG_NOSIGNAL) first: no SIGPIPE from a reset peer
    for (;;) {
        ssize_t r = sock ? ::send(fd, buf, n, MSG_NOSIGNAL) : ::write(fd, buf, n);
        if (r < 0 && sock && errno == ENOTSOCK) {
            sock = false;
            continue;
        }
        if (r >= 0) {
            ec.clear();
            return static_cast<std::size_t>(r);
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            ec = internal::io::errno_code(errno);
            return 0;
        }
        if ((ec = internal::io::wait(fd, internal::io::kWrite, dl))) return 0;
    }
}

std::error_code set_nonblocking(int fd) noexcept {
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return internal::io::errno_code(errno);
    return {};
}

std::error_code close(int fd) noexcept {
    internal::io::unregister(fd);  // before close(2): the number cannot be reused yet
    if (::close(fd) != 0 && errno != EINTR) return internal::io::errno_code(errno);
    return {};
}

void forget(int fd) noexcept { internal::io::unregister(fd); }

// ------------------------------------------------------------------------- blocking()

namespace detail {
namespace {
struct Job {
    void (*fn)(void*);
    void* arg;
    internal::Activity* activity;
    Job* next = nullptr;
    // done — the pool thread's last touch of the job and of the runtime (make_ready's
    // notify) is over. The woken activity waits for it: otherwise it could finish, and its
    // runtime end, while make_ready still runs (TSan: Io.BlockingRunsOffTheProcessor).
    std::atomic<bool> done{false};
};

// Pool — the blocking threads: made on demand up to `max`, then kept (they sleep on the
// condition variable when idle).
struct Pool {
    std::mutex m;
    std::condition_variable cv;
    Job* head = nullptr;
    Job** tail = &head;
    unsigned threads = 0, idle = 0, queued = 0;
    unsigned max = 64;
    Pool() {
        if (const char* s = std::getenv("COOP_BLOCKING_THREADS")) {
            const long v = std::strtol(s, nullptr, 10);
            if (v > 0 && v < 100000) max = static_cast<unsigned>(v);
        }
    }
    void run() {
        std::unique_lock<std::mutex> lock(m);
        for (;;) {
            while (head == nullptr) {
                ++idle;
                cv.wait(lock);
                --idle;
            }
            Job* j = head;
            head = j->next;
            if (head == nullptr) tail = &head;
            --queued;
            lock.unlock();
            j->fn(j->arg);
            internal::make_ready(j->activity);  // from a non-worker thread: through the inbox
            // release: after make_ready's last access; j lives on the activity's stack, which
            // waits for this store before it goes on.
            j->done.store(true, std::memory_order_release);
            lock.lock();
        }
    }
};
Pool& pool() {
    static auto* p = new Pool;  // outlives every thread (its threads never end)
    return *p;
}

void fin_blocking(internal::Activity*, void* job) noexcept {
    // On the resumed side: the caller's context is saved before a pool thread may make it
    // ready.
    Pool& p = pool();
    auto* j = static_cast<Job*>(job);
    {
        std::lock_guard<std::mutex> lock(p.m);
        *p.tail = j;
        p.tail = &j->next;
    }
    p.cv.notify_one();
}
}  // namespace

void run_blocking(void (*fn)(void*), void* arg) noexcept {
    internal::Activity* self = internal::current();
    if (self == nullptr) {
        fn(arg);
        return;
    }
    Pool& p = pool();
    bool pooled = false;
    {
        std::lock_guard<std::mutex> lock(p.m);
        // A thread for every job that no idle one will take, up to the bound.
        if (p.idle <= p.queued && p.threads < p.max) {
            try {
                std::thread([&p] { p.run(); }).detach();
                ++p.threads;
            } catch (...) {  // no thread: below
            }
        }
        pooled = p.threads != 0;
        if (pooled) ++p.queued;
    }
    if (!pooled) {  // none could be made (nor ever was): run here, blocking this processor
        fn(arg);
        return;
    }
    Job job{fn, arg, self};
    internal::suspend(&fin_blocking, &job);
    // acquire: pairs with the pool thread's release store of done (a few instructions away).
    while (!job.done.load(std::memory_order_acquire)) coop::yield();
}
}  // namespace detail

}  // namespace io
}  // namespace coop
