// common.hpp — small helpers shared by workloads: spawning a group of threads with a
// clean failure when the system cannot hold them, and a start gate.
#pragma once

#include <atomic>
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
    explicit Group(std::size_t expected = 0) { threads_.reserve(expected); }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() { join_all(); }

    // check_capacity — fail early when `n` more threads cannot fit (see B::capacity).
    bool check_capacity(const Context& ctx, std::size_t n) {
        if (auto why = capacity_problem<B>(ctx.options, n + threads_.size())) {
            error_ = *why;
            return false;
        }
        return true;
    }

    template <class F>
    bool spawn(F&& fn) {
        try {
            threads_.push_back(B::spawn(std::forward<F>(fn)));
            return true;
        } catch (const SpawnError& e) {
            error_ = std::string(e.what()) + " at " + std::to_string(threads_.size()) + " threads";
            return false;
        }
    }

    void join_all() {
        for (auto& t : threads_) t.join();
        threads_.clear();
    }

    std::size_t size() const { return threads_.size(); }
    const std::string& error() const { return error_; }

  private:
    std::vector<typename B::Thread> threads_;
    std::string error_;
};

// Gate — threads wait at the gate (yielding, so cooperative backends make progress)
// until open() is called; the measured interval starts at open().
template <Backend B>
class Gate {
  public:
    void wait() const {
        // acquire: pairs with open()'s release so the opener's writes are visible.
        while (!open_.load(std::memory_order_acquire)) B::yield();
    }
    void open() { open_.store(true, std::memory_order_release); }

  private:
    std::atomic<bool> open_{false};
};

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
