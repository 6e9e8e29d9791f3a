// support.hpp — helpers for coop's tests: a watchdog that turns a hang into a failure, and
// sizes scaled down under sanitizers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "runtimes/native/config.hpp"

namespace coop_test {

// kSanitized — ASan/TSan builds run the same tests with smaller sizes.
inline constexpr bool kSanitized = COOP_ASAN || COOP_TSAN;

// scaled — `n` normally, n / div under sanitizers (at least 1).
constexpr long scaled(long n, long div = 20) { return kSanitized ? (n / div > 0 ? n / div : 1) : n; }

// Watchdog — aborts the process (a test failure with a message) if not destroyed within
// `seconds`: every wait in these tests is bounded by one.
class Watchdog {
  public:
    explicit Watchdog(const char* what, int seconds = 60) : what_(what) {
        thread_ = std::thread([this, seconds] {
            std::unique_lock<std::mutex> lock(m_);
            if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
                std::fprintf(stderr, "WATCHDOG: '%s' did not finish within %d s (hang or lost wake-up)\n",
                             what_, seconds);
                std::abort();
            }
        });
    }
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(m_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

  private:
    const char* what_;
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// processor_counts — 1 and the machine's cores (at least 2), for tests that run on both.
inline unsigned many_processors() {
    unsigned n = std::thread::hardware_concurrency();
    return n < 2 ? 2 : n;
}

}  // namespace coop_test
