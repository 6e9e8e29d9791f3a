// watchdog.hpp — the tests' one watchdog: turns a hang into a failure by aborting the test
// binary (with a message) when the guarded scope outlives its limit (a deadlock, a lost
// wake-up, a thread spinning on a gate nobody opens). Limits are generous and scaled up
// under sanitizers; no test asserts on time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace coopbench::test {

// sanitized — true in ASan/TSan builds (sizes scale down, limits up).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool sanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool sanitized = true;
#else
inline constexpr bool sanitized = false;
#endif
#else
inline constexpr bool sanitized = false;
#endif

// tsan — true in ThreadSanitizer builds.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool tsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool tsan = true;
#else
inline constexpr bool tsan = false;
#endif
#else
inline constexpr bool tsan = false;
#endif

// processors — the processor count tests give backends: every core the machine has.
inline unsigned processors() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

// Watchdog — aborts the process (a test failure, with a message) when still alive `seconds`
// (three times that under a sanitizer) after construction.
class Watchdog {
  public:
    Watchdog(std::chrono::seconds limit, std::string what) : Watchdog(std::move(what), static_cast<int>(limit.count())) {}
    // progress — optional: called when the limit is reached, its text joins the message
    // (e.g. how many items had moved, to tell a slow run from a stuck one).
    explicit Watchdog(std::string what, int seconds = 60, std::function<std::string()> progress = {})
        : what_(std::move(what)), progress_(std::move(progress)),
          thread_([this, limit = sanitized ? 3 * seconds : seconds] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (!cv_.wait_for(lock, std::chrono::seconds(limit), [this] { return done_; })) {
                  const std::string more = progress_ ? " (" + progress_() + ")" : "";
                  std::fprintf(stderr, "watchdog: '%s' still running after %d s (hang?)%s\n", what_.c_str(), limit,
                               more.c_str());
                  std::abort();
              }
          }) {}
    ~Watchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

  private:
    std::string what_;
    std::function<std::string()> progress_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;  // last: starts after the members it reads
};

}  // namespace coopbench::test
