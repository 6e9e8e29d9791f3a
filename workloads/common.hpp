// common.hpp — small helpers shared by workloads: spawning a group of threads with a
// clean failure when the system cannot hold them, and the start gate (StartGate) that every
// workload's threads wait behind.
#pragma once

#include <atomic>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/workload.hpp"
#include "runtimes/concept.hpp"

namespace coopbench {

// Group — threads of backend B spawned together and joined together.
// spawn() returns false (and sets `error`) when the backend refuses a thread; the threads
// already created are still joined by join_all(), so a failed point leaves nothing behind.
template <Backend B>
class Group {
  public:
    // `expected` handles are reserved by a passed check_capacity (else at the first spawn),
    // not here: a workload constructs its Group before check_capacity, and a size beyond the
    // system's limits (T=10^12) must be refused by that check, not fail allocating the
    // handles first.
    explicit Group(std::size_t expected = 0) : expected_(expected) {}
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() { join_all(); }

    // check_capacity — fail early when `n` more threads cannot fit (see B::capacity). A
    // passed check reserves the `expected` handles, so the allocation of the handles' array
    // is made here, before a workload starts its clock, as the Go and tokio programs make
    // theirs (a spawn inside the measured interval would otherwise pay a malloc that theirs
    // do not: one in the ~400 ns of create N=1).
    bool check_capacity(const Context& ctx, std::size_t n) {
        if (auto why = capacity_problem<B>(ctx.options, n + threads_.size())) {
            error_ = *why;
            return false;
        }
        if (threads_.capacity() < expected_) threads_.reserve(expected_);  // bad_alloc: the point fails, out of memory
        return true;
    }

    template <class F>
    bool spawn(F&& fn) {
        if (threads_.capacity() < expected_) threads_.reserve(expected_);  // bad_alloc: the point fails, out of memory
        try {
            threads_.push_back(B::spawn(std::forward<F>(fn)));
            return true;
        } catch (const SpawnError& e) {
            error_ = std::string(e.what()) + " at " + std::to_string(threads_.size()) + " threads";
            return false;
        }
    }

    // join_all — joins every thread. A backend whose join says a thread never ran (coop's
    // Thread::join returns false when no stack could be had) sets `error` to B's reason
    // (B::start_failure()); the workload then fails the point with it.
    void join_all() {
        for (auto& t : threads_) {
            if constexpr (std::same_as<decltype(t.join()), bool>) {
                if (!t.join() && error_.empty()) {
                    if constexpr (requires { B::start_failure(); }) error_ = B::start_failure();
                    else error_ = "a thread never ran";
                }
            } else {
                t.join();
            }
        }
        threads_.clear();
    }

    std::size_t size() const { return threads_.size(); }
    // reserved — handles the group holds room for without allocating.
    std::size_t reserved() const { return threads_.capacity(); }
    const std::string& error() const { return error_; }

  private:
    std::vector<typename B::Thread> threads_;
    std::size_t expected_ = 0;
    std::string error_;
};

// StartGate — the one start gate of every workload: a one-shot gate with an abort outcome.
// Threads spawned behind it first call wait(), which returns once the spawner called go()
// (true: every thread was created, run) or abort() (false: a spawn was refused, return at
// once without touching shared state). Two ways to wait, chosen by the workload:
//   GateWait::block — on the backend's Mutex/CondVar (apps: thousands of threads that must
//                      not burn the cores while the rest are spawned);
//   GateWait::spin  — yielding on an atomic (micro benchmarks: the measured interval starts
//                      at go(), and a blocked thread's wake-up would be measured too).
// Ownership: the gate lives in the workload's run() and outlives the threads it gates:
// spawn_behind/spawn_gated join everything on a refused spawn, and run() joins before it
// returns otherwise.
enum class GateWait { block, spin };

template <Backend B>
class StartGate {
  public:
    explicit StartGate(GateWait how = GateWait::block) : how_(how) {}
    StartGate(const StartGate&) = delete;
    StartGate& operator=(const StartGate&) = delete;

    // wait — until go() or abort(); true means run, false means return at once.
    bool wait() {
        if (how_ == GateWait::spin) {
            State s;
            // acquire: pairs with open()'s release store, so the spawner's writes before
            // go()/abort() are visible to the thread that saw the state change.
            while ((s = state_.load(std::memory_order_acquire)) == State::closed) B::yield();
            return s == State::go;
        }
        mutex_.lock();
        // relaxed under the mutex: the mutex orders it with open().
        while (state_.load(std::memory_order_relaxed) == State::closed) opened_.wait(mutex_);
        const bool run = state_.load(std::memory_order_relaxed) == State::go;
        mutex_.unlock();
        return run;
    }
    // go — release every waiter (and any later caller of wait) to run.
    void go() { open(State::go); }
    // abort — release every waiter to return without running.
    void abort() { open(State::aborted); }

  private:
    enum class State { closed, go, aborted };
    void open(State s) {
        mutex_.lock();
        // release: a spinning waiter's acquire load sees everything written before go().
        state_.store(s, std::memory_order_release);
        if (how_ == GateWait::block) opened_.notify_all();
        mutex_.unlock();
    }
    const GateWait how_;
    typename B::Mutex mutex_;
    typename B::CondVar opened_;
    std::atomic<State> state_{State::closed};
};

// spawn_behind — spawn `n` threads running body(i), i in [0, n), each behind `gate`, and
// leave the gate closed (the caller starts its clock, then calls gate.go()). On a refused
// spawn: abort the gate, join what was spawned, return false (group.error() says why).
template <Backend B, class Body>
bool spawn_behind(Group<B>& group, StartGate<B>& gate, std::size_t n, Body body) {
    for (std::size_t i = 0; i < n; ++i) {
        if (!group.spawn([&gate, body, i]() mutable {
                if (gate.wait()) body(i);
            })) {
            gate.abort();
            group.join_all();
            return false;
        }
    }
    return true;
}

// spawn_gated — spawn_behind, then open the gate (go) when every thread was created.
template <Backend B, class Body>
bool spawn_gated(Group<B>& group, StartGate<B>& gate, std::size_t n, Body body) {
    if (!spawn_behind(group, gate, n, std::move(body))) return false;
    gate.go();
    return true;
}

// Padded — one value on its own cache line (per-thread counters without false sharing).
template <class T>
struct alignas(64) Padded {
    T value{};
};

// expect — a self-check: the reason when `got` differs from `want`.
template <class T>
std::optional<std::string> expect(const std::string& what, const T& got, const T& want) {
    if (got == want) return std::nullopt;
    return "self-check failed: " + what + " = " + std::to_string(got) + ", expected " + std::to_string(want);
}

}  // namespace coopbench
