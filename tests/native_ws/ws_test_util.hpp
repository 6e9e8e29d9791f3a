// ws_test_util.hpp — shared bits of the tests of runtimes/native/ws: a watchdog that turns
// a hang into a failure, sanitizer-aware sizes, and a per-item take counter.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "runtimes/native/config.hpp"

namespace wstest {

// kSanitized — smaller stress sizes under ASan/TSan (CI time, HELPERS.md).
inline constexpr bool kSanitized = COOP_ASAN || COOP_TSAN;

// Watchdog — aborts the process with a message if not destroyed within `seconds`
// (a lost item or a livelock would otherwise hang the test until CTest's timeout).
class Watchdog {
  public:
    Watchdog(const char* what, int seconds) : what_(what) {
        thread_ = std::thread([this, seconds] {
            std::unique_lock lock(m_);
            if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
                std::fprintf(stderr, "watchdog: %s did not finish within %d s (lost item or livelock)\n",
                             what_, seconds);
                std::abort();
            }
        });
    }
    ~Watchdog() {
        {
            std::lock_guard lock(m_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

  private:
    const char* what_;
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// Item — a test item that counts how often it was taken.
struct Item {
    int id = 0;
    std::atomic<int> taken{0};
};

// spin_until — waits (yielding) until pred() holds.
template <class Pred>
void spin_until(Pred pred) {
    while (!pred()) std::this_thread::yield();
}

}  // namespace wstest
