// config.hpp — coop's build-time configuration: sanitizer detection and tuning constants.
//
// Sanitizers see user-level context switches only when told (Boost 1.74's fcontext does not
// tell them), so the switch path in switch.hpp announces every switch to ASan and TSan when
// this header detects them (g++: __SANITIZE_ADDRESS__/__SANITIZE_THREAD__, clang:
// __has_feature).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__SANITIZE_ADDRESS__)
#define COOP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COOP_ASAN 1
#endif
#endif
#ifndef COOP_ASAN
#define COOP_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define COOP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define COOP_TSAN 1
#endif
#endif
#ifndef COOP_TSAN
#define COOP_TSAN 0
#endif

// COOP_HOOK(name) — a test hook: in builds with COOP_TEST_HOOKS (the `coop_hooked` library
// and the tests linked to it, never the production `coop`) it calls the function pointer
// coop::test_hooks::name if one is set, so a directed interleaving test can stop a thread
// inside a protocol window; elsewhere it compiles to nothing.
#if defined(COOP_TEST_HOOKS)
namespace coop::test_hooks {
inline void (*notify_before_claim)() = nullptr;        // scheduler: notify() passed its idle check
// queue: linked, before the tail swing CAS(queue_tail, tail, node); gets &tail_ and tail
inline void (*enqueue_before_tail_cas)(const void* queue_tail, const void* tail) = nullptr;
inline void (*dequeue_before_hp2)() = nullptr;         // queue: next read, hp2 not yet published
inline void (*dequeue_read_item)(const void* node) = nullptr;  // queue: about to read node->item
inline void (*protect_before_publish)() = nullptr;     // queue protect(): read the pointer, hazard not yet published
inline void (*dequeue_read_next)(const void* node) = nullptr;  // queue: about to read node->next (node: the head)
inline void (*mutex_park_before_enqueue)() = nullptr;  // Mutex::park, before the enqueue
inline void (*mutex_park_done)() = nullptr;            // Mutex::park, at its end
inline void (*mutex_spin_yielded)() = nullptr;         // Mutex::lock_slow, processors outnumber CPUs:
                                                       // the spinner is about to give its core back
inline void (*semaphore_park_before_enqueue)() = nullptr;  // Semaphore::park, before the enqueue
inline void (*semaphore_park_done)() = nullptr;        // Semaphore::park, at its end
inline void (*semaphore_settle_missed)() = nullptr;    // settle(): token claimed, no waiter seen
inline void (*condvar_park_before_enqueue)() = nullptr;  // CondVar::park, before the enqueue
inline void (*runtime_start_worker)() = nullptr;       // Runtime(): before each worker starts
inline void (*untyped_entry)() = nullptr;             // an untyped entry point (coop::yield, spawn's start,
                                                       // suspend, make_ready, finish) was called
inline void (*yield_after_pick)() = nullptr;           // yield(): next picked, the yielder not yet queued
inline void (*empty_between_loads)() = nullptr;        // Queue::empty(): tail read, head not yet
inline void (*global_take_after_empty)(int priority) = nullptr;  // GlobalQueues::take: empty() said no
inline void (*global_take_before_clear)(int priority) = nullptr;  // GlobalQueues::take: found nothing, the
                                                                 // summary bit not yet cleared
inline void (*idle_before_park)() = nullptr;           // idle loop: its futex timeout computed, not yet parked
inline void (*global_take_clear_window)(int priority) = nullptr;  // GlobalQueues::take: between the summary
                                                                 // bit's clear and the look that goes with it
inline void (*refill_after_take)(unsigned moved, bool global_empty) = nullptr;  // refill: one taken, not pushed
inline void (*inbox_before_enqueue)() = nullptr;      // submit_inbox: slot held, the activity not yet queued
inline void (*inbox_after_drain)() = nullptr;         // drain_inbox: its dequeues done (the last found nothing)
inline void (*timer_woken)(long long deadline_ns, int nth) = nullptr;  // poll_timers: waking the nth due
                                                       // entry (0 first) of this poll, from the heap's top
inline void (*quiescent_between_reads)() = nullptr;   // quiescent(): the finished sums read, started not yet
inline void (*io_park_before_commit)() = nullptr;  // io.cpp: an I/O waiter's finalizer, context saved, before
                                                   // its commit CAS (slot Wait -> the activity)
inline void (*io_wait_before_claim)(int fd) = nullptr;  // io.cpp wait(): registered, before the CAS Empty -> Wait
inline void (*io_poll_before_events)() = nullptr;  // io.cpp: epoll_wait returned events, none looked at yet
inline void (*io_after_dispatch)(unsigned woken) = nullptr;  // io.cpp: a poller made `woken` activities ready
}  // namespace coop::test_hooks
#define COOP_HOOK(name, ...)                                                                  \
    do {                                                                                      \
        if (::coop::test_hooks::name != nullptr) ::coop::test_hooks::name(__VA_ARGS__);      \
    } while (0)
#else
#define COOP_HOOK(name, ...) \
    do {                     \
    } while (0)
#endif

// COOP_ASSERT(cond, msg) — a contract check of coop's internals (slabs, queues). Unlike
// assert() it stays on in the sanitizer builds (asan/tsan presets are RelWithDebInfo, so
// NDEBUG), where a broken contract should be found; off in Release (NDEBUG, no sanitizer).
#if !defined(NDEBUG) || COOP_ASAN || COOP_TSAN
#define COOP_CHECKED 1
#define COOP_ASSERT(cond, msg)                                                             \
    do {                                                                                   \
        if (!(cond)) [[unlikely]]                                                          \
            ::coop::contract_failed(#cond, msg, __FILE__, __LINE__);                     \
    } while (0)
#else
#define COOP_CHECKED 0
#define COOP_ASSERT(cond, msg) \
    do {                       \
    } while (0)
#endif

namespace coop {

// contract_failed — COOP_ASSERT's failure: one line on stderr, abort.
[[noreturn, gnu::cold, gnu::noinline]] inline void contract_failed(const char* cond, const char* msg,
                                                                   const char* file, int line) noexcept {
    std::fprintf(stderr, "coop: contract violated at %s:%d: %s (%s)\n", file, line, msg, cond);
    std::abort();
}

// kDefaultQuantum — the quantum an activity gets when it is switched to (Fig. 1: "activity→
// quantum ← Default"): the number of check() units it may run before check() switches.
inline constexpr std::int32_t kDefaultQuantum = 10000;

// kDefaultStackSize — the default activity stack (usable bytes). 64 KiB: glibc's printf and
// iostreams need 8-12 KiB, so 32 KiB leaves too little headroom for ordinary user code,
// while pages are only committed when touched (an empty body touches one or two pages:
// 10^4 live activities cost ~80 MiB RSS, not 640 MiB). Sanitizers enlarge frames (ASan
// redzones, TSan's runtime frames): 4x there.
inline constexpr std::size_t kDefaultStackSize =
    (COOP_ASAN || COOP_TSAN) ? std::size_t{256} << 10 : std::size_t{64} << 10;

// kMinStackSize — the smallest stack accepted (the paper's micro stacks are ~ 4 KiB).
inline constexpr std::size_t kMinStackSize = 4096;

// kIdleSpinNs — how long an idle processor looks for work (polls its queues, steals) before
// it parks on its futex. A cross-core futex wake costs ~30 us on the reference machine, a
// spinning hand-off ~26 ns, so the spin lasts no longer than the wake-up it tries to avoid.
// Bounded in time, not in polls: a poll that yields the core (kSpinPollsPerYield) may take
// a whole scheduler time slice when the OS has other threads to run there, and the bound
// must still end the spin.
inline constexpr std::int64_t kIdleSpinNs = 30'000;

// kSpinPollsPerYield — a spinning processor gives its core back (sched_yield, as Go's
// osyield in its spin loops) after this many polls. When processors outnumber cores, a
// spinner that only executes `pause` holds a core that a processor with work is waiting
// for (the OS cannot tell a spinner from a worker); one poll costs ~20-40 ns and a
// sched_yield that finds nobody else to run ~0.3 us, so yielding every 8th poll costs an
// idle core little and hands an oversubscribed one over within ~0.3 us.
inline constexpr unsigned kSpinPollsPerYield = 8;

// kSpinHogPolls — what the statistics count as a spinner hogging its core (the counter
// spin_hogs): more than this many polls in a row without giving the core back.
inline constexpr unsigned kSpinHogPolls = 64;
static_assert(kSpinPollsPerYield <= kSpinHogPolls, "a spinner yields before it counts as hogging");

// kLockSpins / kLockSpinsIdle / kLockBackoffMax — how long lock() polls a held mutex before
// it blocks (only with >1 processor: with one, the holder cannot run while we spin). Polls
// back off exponentially, 1, 2, 4, ... up to kLockBackoffMax pauses (~19 ns each on the
// reference machine) between two looks at the lock word: every look pulls the word's cache
// line away from the holder, and a holder that re-locks at once (lock-global) then pays a
// line transfer per critical section; with 64 polls of one pause each, 64 activities on 2
// processors ran at ~80-100 ns per lock+unlock, with this backoff at ~14-24 ns (measured
// with tests/native/callgrind_ops.cpp `lockg`). kLockSpins polls (511 pauses, ~10 us) when other
// activities are ready (blocking lets this processor run them); kLockSpinsIdle polls
// (2303 pauses, ~45 us, about what the idle loop spins before it parks) when none is.
inline constexpr unsigned kLockSpins = 9;
inline constexpr unsigned kLockSpinsIdle = 16;
inline constexpr unsigned kLockBackoffMax = 256;

// kTimerPollMask — a processor polls the timer list every (mask+1)-th yield.
inline constexpr unsigned kTimerPollMask = 63;

}  // namespace coop
