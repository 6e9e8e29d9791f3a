// park.hpp — how coop's idle processors sleep and are woken: one futex word per processor,
// a count of parked processors and one "a wake-up is in flight" token.
//
// Citation: the paper's Fig. 2 (ENQUEUESWITCH resumes an idle processor when
// INCREMENT(working) < Processors; Negele et al. 2017, Sect. 3.2) gives the shape; the
// token rule is Go's (runtime/proc.go wakep(): at most one spinning M is woken at a time,
// and it is the woken M that gives the token up). Checked with Spin: models/park_notify.pml
// (the protocol below passes; the protocol coop had before, with a shared waking flag that
// the parker cleared whether or not it was woken, is found losing a wake-up).
//
// Design summary
// - Each processor i has a futex word state_[i]: Running, Parked (announced, maybe not yet
//   asleep), Woken (chosen by wake_one(): owns the token) or Kicked (woken by wake_all():
//   owns nothing). `parked_` counts processors in state Parked.
// - park(i):  state_[i] = Parked; parked_++; fence;
//             if no work: futex_wait(state_[i], Parked)        (until state changes)
//             s = exchange(state_[i], Running)
//             s == Parked (found work, timeout, spurious): parked_--        (not chosen)
//             s == Woken: token_ = false; fence       (the chosen one returns the token)
// - wake_one():  fence; if parked_ == 0: return;                        (fast path)
//             if token_ || exchange(token_, true): return    (a wake-up is in flight)
//             for each i: if CAS(state_[i], Parked -> Woken): parked_--; futex_wake; return
//             nobody parked after all: token_ = false; fence; if parked_ > 0: retry
// - wake_all(): fence; for each i: if CAS(state_[i], Parked -> Kicked): parked_--; futex_wake.
//
// Why no wake-up is lost (all accesses below are seq_cst, so there is one total order S):
// (a) A waker W publishes work, fences and loads parked_; a parker P increments parked_,
//     fences and looks for work (Dekker). If W's load precedes P's increment in S, P's
//     look sees the work. Otherwise W sees parked_ > 0, and since P stores Parked before
//     its increment, W's scan (after its load) finds P in Parked unless P has already
//     left by its own exchange (then P runs and looks at the queues again).
// (b) The token: a waker that finds token_ set skips its wake-up. The token is set only by
//     a waker that then either CASes some processor Parked -> Woken (that processor is
//     bound to come out of its futex_wait, as the CAS changed the word it sleeps on, and
//     clears the token *then* fences and looks at the queues, so it sees the skipped
//     waker's work: the skipper published, fenced and loaded token_ == true, which is
//     before the clear in S), or finds nobody parked, clears the token itself and retries
//     while parked_ > 0. Today's bug cannot happen: the token is cleared only by whoever
//     owns it, never by a parker that merely found work (the exchange tells it apart).
// (c) A burst of wake_one() calls while one wake-up is in flight costs one futex_wake: all
//     but the first see the token. The woken processor takes one activity and, if more are
//     ready, calls wake_one() again (chained wake-up, the idle loop), so a burst of k
//     activities wakes up to k processors one after the other.
// - Processor-local policies (per-processor queues, stealing) reuse this as is: "work" is
//   whatever their look for work checks (any queue, the inbox, timers), and a waker that
//   wants a particular processor can CAS that processor's word instead of scanning.
//
// - I/O (coop/src/io.cpp): at most one parked processor, the holder of the poller's token,
//   announces itself Polling instead of Parked and blocks in epoll_wait instead of its futex
//   (park_polling). It counts in parked_ like any parker and takes the same Dekker pair (a),
//   so the proof above holds word for word with "futex_wake" read as "write the poller's
//   eventfd" (poller_poke) for that one word: a waker whose CAS moves it Polling -> Woken /
//   Kicked pokes the eventfd, which is level-triggered in the epoll set, so epoll_wait
//   returns whether it had started yet or not. wake() prefers futex sleepers (a Parked word)
//   and pokes the poller only when it is the only one parked (Go: wakep() starts an idle P
//   and leaves the M in netpoll alone; netpollBreak when nobody else can take the work).
//
// Ownership rules
// - state_[i] is set to Parked and back to Running only by processor i; wake_one() and
//   wake_all() move it from Parked to Woken/Kicked. token_ is set by the waker that
//   exchanges it false -> true and cleared exactly once per set, by the processor it woke or
//   by itself when it woke nobody.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <memory>

#include "config.hpp"
#include "hazard.hpp"

namespace coop::internal {

// futex_wait / futex_wake — the Linux futex on a 32-bit word (process-private).
inline void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected,
                       std::int64_t timeout_ns) noexcept {
    timespec ts{};
    timespec* tsp = nullptr;
    if (timeout_ns >= 0) {
        ts.tv_sec = static_cast<time_t>(timeout_ns / 1000000000);
        ts.tv_nsec = static_cast<long>(timeout_ns % 1000000000);
        tsp = &ts;
    }
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, tsp,
            nullptr, 0);
}
inline long futex_wake(std::atomic<std::uint32_t>* word, int n) noexcept {
    return syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, n,
                   nullptr, nullptr, 0);
}

// poller_poke — wakes the processor blocked in the poller's epoll_wait (io.cpp: writes its
// eventfd, deduplicated). Called by wake() for a word it moved from Polling.
void poller_poke() noexcept;

// Parking — the park/wake protocol of N processors (see the header).
class Parking {
  public:
    explicit Parking(unsigned processors)
        : n_(processors), state_(std::make_unique<Word[]>(processors)) {}

    // park — processor `self` sleeps until wake_one()/wake_all() chooses it, `timeout_ns`
    // passes (< 0: none) or a spurious wake-up, unless has_work(arg) finds work after it
    // announced itself. Returns true if a wake_one() chose it (it then owns and has
    // returned the token; the caller looks for work).
    bool park(unsigned self, std::int64_t timeout_ns, bool (*has_work)(void*), void* arg) noexcept {
        std::atomic<std::uint32_t>& word = state_[self].v;
        return park_as(self, kParked, has_work, arg, [&] { futex_wait(&word, kParked, timeout_ns); });
    }

    // park_polling — park() by the poller's token holder: announced Polling, and instead of
    // the futex it calls block() (epoll_wait until an event, the eventfd or its timeout),
    // unless has_work(arg) finds work after the announcement. Same result as park().
    template <class Block>
    bool park_polling(unsigned self, bool (*has_work)(void*), void* arg, Block&& block) noexcept {
        return park_as(self, kPolling, has_work, arg, block);
    }

  private:
    template <class Block>
    bool park_as(unsigned self, std::uint32_t announce, bool (*has_work)(void*), void* arg, Block&& block) noexcept {
        std::atomic<std::uint32_t>& word = state_[self].v;
        // seq_cst: before the count, so a waker that sees the count finds the word (a).
        word.store(announce, std::memory_order_seq_cst);
        // seq_cst RMW + fence: the parker's half of the Dekker pair (a).
        parked_.fetch_add(1, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        if (!has_work(arg)) block();
        // seq_cst exchange: tells "chosen" (Woken/Kicked, the waker decremented parked_)
        // from "left on its own" (Parked/Polling: we decrement); one RMW, so never both.
        const std::uint32_t s = word.exchange(kRunning, std::memory_order_seq_cst);
        if (s == kParked || s == kPolling) {
            // seq_cst: part of the order the waker's parked_ loads rely on (a).
            parked_.fetch_sub(1, std::memory_order_seq_cst);
            return false;
        }
        if (s == kWoken) {
            // seq_cst store + fence: the token goes back before our caller's next look at
            // the queues, so a waker that skipped because of it has its work seen (b).
            token_.store(false, std::memory_order_seq_cst);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            return true;
        }
        return false;  // Kicked: wake_all(); its caller's fence came before its CAS
    }

  public:
    // wake_one — after publishing work: wakes one parked processor unless none is parked or
    // a wake-up is already in flight.
    void wake_one() noexcept {
        // seq_cst fence: the waker's half of the Dekker pair (a): the published work is
        // ordered before the load of parked_.
        std::atomic_thread_fence(std::memory_order_seq_cst);
        // seq_cst: (a); on x86 a plain mov.
        if (parked_.load(std::memory_order_seq_cst) == 0) return;
        COOP_HOOK(notify_before_claim);
        for (;;) {
            // relaxed load first: skip the RMW while a wake-up is in flight (a burst). The
            // seq_cst exchange is what decides (b).
            if (token_.load(std::memory_order_relaxed) || token_.exchange(true, std::memory_order_seq_cst))
                return;
            if (wake(kWoken)) return;  // the woken processor returns the token
            // Nobody parked after all (they left on their own): give the token back, then
            // look again, so that a waker that skipped meanwhile is not lost (b).
            token_.store(false, std::memory_order_seq_cst);
            std::atomic_thread_fence(std::memory_order_seq_cst);
            if (parked_.load(std::memory_order_seq_cst) == 0) return;
        }
    }

    // wake_all — wakes every parked processor (stop, external submissions).
    void wake_all() noexcept {
        // seq_cst fence: as in wake_one() (a).
        std::atomic_thread_fence(std::memory_order_seq_cst);
        while (wake(kKicked)) {
        }
    }

    // parked — processors announced as parked (a hint; tests and statistics).
    unsigned parked() const noexcept { return parked_.load(std::memory_order_relaxed); }
    // token_taken — whether a wake-up is in flight (tests).
    bool token_taken() const noexcept { return token_.load(std::memory_order_relaxed); }

  private:
    static constexpr std::uint32_t kRunning = 0, kParked = 1, kWoken = 2, kKicked = 3, kPolling = 4;
    struct alignas(kCacheLine) Word {
        std::atomic<std::uint32_t> v{kRunning};
    };

    // wake — moves the first parked processor to `to` and wakes it; false if none is parked.
    // Futex sleepers first; the poller (Polling) only when no processor sleeps on its futex.
    bool wake(std::uint32_t to) noexcept {
        for (std::uint32_t from : {kParked, kPolling}) {
            for (unsigned i = 0; i < n_; ++i) {
                std::atomic<std::uint32_t>& word = state_[i].v;
                std::uint32_t expected = from;
                // seq_cst load and CAS: the scan of (a); the CAS is the choice that the
                // parker's exchange reads.
                if (word.load(std::memory_order_seq_cst) == from &&
                    word.compare_exchange_strong(expected, to, std::memory_order_seq_cst)) {
                    parked_.fetch_sub(1, std::memory_order_seq_cst);
                    if (from == kParked) futex_wake(&word, 1);
                    else poller_poke();  // the word's sleeper is in epoll_wait, not the futex
                    return true;
                }
            }
        }
        return false;
    }

    const unsigned n_;
    std::unique_ptr<Word[]> state_;
    alignas(kCacheLine) std::atomic<unsigned> parked_{0};
    alignas(kCacheLine) std::atomic<bool> token_{false};
};

}  // namespace coop::internal
