// abortable.hpp — the common interface of the abortable lock library (locks/), and the
// small pieces every algorithm shares: Patience, the deadline clock, cpu_relax, a
// per-thread random number generator and randomised exponential backoff.
//
// Interface (checked by the AbortableLock concept below), after concurrencykit's and
// litl's "one algorithm per file behind one adapter":
//
//   struct SomeLock {
//     static constexpr std::string_view name = "tas-backoff";
//     using Ticket = ...;                       // what release needs; contextually bool:
//                                               // true = acquired, false = timed out
//     explicit SomeLock(const LockOptions&);    // e.g. CAL's node count C
//     Ticket try_lock_for(Patience p);          // acquire within p, or time out
//     void unlock(Ticket t);                    // precondition: t came from a successful
//                                               // try_lock_for on this lock, not yet unlocked
//   };
//
// Example (compiled: docs/examples/locks_example.cpp):
//   locks::CalLock lock(locks::LockOptions{.nodes = 4});
//   if (auto t = lock.try_lock_for(locks::Patience::micros(512))) {   // acquired
//       /* critical section */
//       lock.unlock(t);                                                // t: what release needs
//   } else { /* timed out */ }
//
// Every algorithm is header-only (locks/*.hpp) and depends on nothing but the standard
// library and POSIX, so it can be used without the harness.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string_view>

#include "coop/cpu_relax.hpp"

namespace locks {

// LockOptions — construction parameters shared by all locks; each lock reads what it needs.
struct LockOptions {
    unsigned nodes = 4;  // CAL: the size C of the node array (1..kMaxCalNodes)
};

// Patience — how long a thread is willing to wait; infinite() never times out.
class Patience {
  public:
    constexpr Patience() = default;
    constexpr explicit Patience(std::chrono::nanoseconds ns) : ns_(ns.count() < 0 ? 0 : ns.count()) {}
    static constexpr Patience infinite() { return Patience{}; }
    static constexpr Patience nanos(std::int64_t n) { return Patience(std::chrono::nanoseconds(n)); }
    static constexpr Patience micros(std::int64_t n) { return Patience(std::chrono::microseconds(n)); }
    constexpr bool is_infinite() const { return ns_ == kInfinite; }
    constexpr std::int64_t ns() const { return ns_; }

  private:
    static constexpr std::int64_t kInfinite = std::numeric_limits<std::int64_t>::max();
    std::int64_t ns_ = kInfinite;
};

// now_ns — the steady clock in nanoseconds (the paper's CurrNanoTime; vDSO, ~20 ns).
inline std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Deadline — the moment a patience runs out. The clock is read only when a lock first has
// to wait (start()), so an uncontended acquisition costs no clock read.
class Deadline {
  public:
    explicit Deadline(Patience p) : patience_(p) {}
    // start — begin counting now (idempotent).
    void start() {
        if (!started_ && !patience_.is_infinite()) end_ = now_ns() + patience_.ns();
        started_ = true;
    }
    // expired — has the patience run out? (starts the clock on first call)
    bool expired() {
        if (patience_.is_infinite()) return false;
        start();
        return now_ns() > end_;
    }

  private:
    Patience patience_;
    std::int64_t end_ = 0;
    bool started_ = false;
};

// cpu_relax — coop's spin-wait hint (coop/include/coop/cpu_relax.hpp: x86 PAUSE, aarch64
// YIELD, else nothing), the one every spinning loop of the project uses.
using coop::cpu_relax;

// random_below — a per-thread xorshift64* number in [0, n) (n > 0); no shared state.
inline std::uint32_t random_below(std::uint32_t n) {
    thread_local std::uint64_t s =
        0x9E3779B97F4A7C15ull ^ reinterpret_cast<std::uintptr_t>(&s) ^ static_cast<std::uint64_t>(now_ns());
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return static_cast<std::uint32_t>(((s * 0x2545F4914F6CDD1Dull) >> 32) % n);
}

// Backoff — randomised exponential backoff measured in cpu_relax() iterations: each
// pause() waits a random number of iterations below the current limit, then doubles the
// limit up to `max` (the paper's backoff(ChooseRandomInt(0, nano_backoff)); nano_backoff <<= 1).
class Backoff {
  public:
    explicit Backoff(std::uint32_t initial = 4, std::uint32_t max = 1024) : limit_(initial), max_(max) {}
    void pause() {
        for (std::uint32_t i = random_below(limit_) + 1; i > 0; --i) cpu_relax();
        if (limit_ < max_) limit_ <<= 1;
    }

  private:
    std::uint32_t limit_;
    std::uint32_t max_;
};

// AbortableLock — the concept every lock in locks/ satisfies.
template <class L>
concept AbortableLock = requires(L& l, Patience p, typename L::Ticket t) {
    { L::name } -> std::convertible_to<std::string_view>;
    { l.try_lock_for(p) } -> std::same_as<typename L::Ticket>;
    static_cast<bool>(t);
    l.unlock(t);
} && std::constructible_from<L, const LockOptions&>;

}  // namespace locks
