// support.hpp — helpers for coop's tests: the shared watchdog (tests/support/) that turns a
// hang into a failure, and sizes scaled down under sanitizers.
#pragma once

#include <stdlib.h>

#include <string>
#include <thread>

#include "coop/config.hpp"
#include "tests/support/watchdog.hpp"

namespace coop_test {

// kSanitized — ASan/TSan builds run the same tests with smaller sizes.
inline constexpr bool kSanitized = COOP_ASAN || COOP_TSAN;

// scaled — `n` normally, n / div under sanitizers (at least 1).
constexpr long scaled(long n, long div = 20) { return kSanitized ? (n / div > 0 ? n / div : 1) : n; }

// Watchdog — the tests' one watchdog (tests/support/watchdog.hpp): aborts the process (a
// test failure with a message) if not destroyed within its limit (three times that under a
// sanitizer); every wait in these tests is bounded by one.
using Watchdog = coopbench::test::Watchdog;

// processor_counts — 1 and the machine's cores (at least 2), for tests that run on both.
inline unsigned many_processors() {
    unsigned n = std::thread::hardware_concurrency();
    return n < 2 ? 2 : n;
}

// ScopedEnv — an environment variable set for the scope (coop reads COOP_* variables when
// a Runtime or a stack pool is built).
class ScopedEnv {
  public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) { setenv(name, value.c_str(), 1); }
    ~ScopedEnv() { unsetenv(name_); }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    const char* name_;
};

}  // namespace coop_test
