// apps_test_support.hpp — helpers shared by the apps tests: a watchdog that turns a hang
// into a failure, tiny-plan expansion, and the run's processor count.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/workload.hpp"

namespace apps_test {

// sanitized — true in ASan/TSan builds (sizes and budgets scale down/up with it).
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

// Watchdog — aborts the process (a test failure, with a message) when it is still alive
// `seconds` after construction: a deadlock or lost wake-up becomes a failure, not a hang.
class Watchdog {
  public:
    explicit Watchdog(std::string what, int seconds = sanitized ? 180 : 60)
        : what_(std::move(what)), thread_([this, seconds] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
                  std::fprintf(stderr, "watchdog: '%s' still running after %d s (hang?)\n", what_.c_str(), seconds);
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

  private:
    std::string what_;
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

// processors — the processor count the tests give backends: every core the machine has.
inline unsigned processors() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

// expand — the points (parameter maps) of a plan's grids, each with its processor count.
struct PlanPoint {
    coopbench::Params params;
    unsigned processors;
};
inline std::vector<PlanPoint> expand(const std::vector<coopbench::Grid>& grids) {
    std::vector<PlanPoint> out;
    for (const auto& grid : grids) {
        std::vector<PlanPoint> acc{{{}, processors()}};
        for (const auto& [key, vals] : grid) {
            std::vector<PlanPoint> next;
            for (const auto& p : acc)
                for (const auto& v : vals) {
                    PlanPoint q = p;
                    if (key == "processors") q.processors = static_cast<unsigned>(std::stoul(v));
                    else q.params[key] = v;
                    next.push_back(q);
                }
            acc = std::move(next);
        }
        out.insert(out.end(), acc.begin(), acc.end());
    }
    return out;
}

// describe — "K=v,K=v" for failure messages.
inline std::string describe(const coopbench::Params& p) {
    std::string s;
    for (const auto& [k, v] : p) s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

}  // namespace apps_test
