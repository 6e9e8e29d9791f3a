// sizes.hpp — sizes of the lock and unit stress tests, scaled to the build and the machine;
// the watchdog is the shared one (tests/support/watchdog.hpp).
#pragma once

#include <thread>

#include "tests/support/watchdog.hpp"

namespace locks_test {

using coopbench::test::Watchdog;

// kSanitized — sizes are scaled down under ASan/TSan.
inline constexpr bool kSanitized = coopbench::test::sanitized;

// scaled — n in a plain build, n / div (at least 1) under a sanitizer.
inline int scaled(int n, int div = 8) { return kSanitized ? (n / div > 0 ? n / div : 1) : n; }

// threads_over_cores — more threads than cores (scales with the machine).
inline int threads_over_cores(int factor = 2) {
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return (hw > 0 ? hw : 2) * factor + 1;
}

}  // namespace locks_test
