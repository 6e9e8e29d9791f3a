// watchdog.hpp — turns a hang into a failure: aborts the test binary when the guarded
// scope lasts longer than its limit (a deadlock, livelock or lost wake-up).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCKS_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOCKS_TEST_SANITIZED 1
#endif
#endif
#ifndef LOCKS_TEST_SANITIZED
#define LOCKS_TEST_SANITIZED 0
#endif

namespace locks_test {

// kSanitized — sizes are scaled down under ASan/TSan.
inline constexpr bool kSanitized = LOCKS_TEST_SANITIZED;

// scaled — n in a plain build, n / div (at least 1) under a sanitizer.
inline int scaled(int n, int div = 8) { return kSanitized ? (n / div > 0 ? n / div : 1) : n; }

// Watchdog — std::abort()s with a message if not destroyed within `limit`.
class Watchdog {
  public:
    Watchdog(std::chrono::seconds limit, std::string what)
        : thread_([this, limit, what = std::move(what)] {
              std::unique_lock<std::mutex> l(m_);
              if (!cv_.wait_for(l, limit, [this] { return done_; })) {
                  std::fprintf(stderr, "watchdog: '%s' still running after %llds: hang (deadlock/livelock/lost wake-up)\n",
                               what.c_str(), static_cast<long long>(limit.count()));
                  std::abort();
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> l(m_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }

  private:
    std::mutex m_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// threads_over_cores — more threads than cores (scales with the machine).
inline int threads_over_cores(int factor = 2) {
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return (hw > 0 ? hw : 2) * factor + 1;
}

}  // namespace locks_test
