// ws_test_util.hpp — shared bits of the tests of coop/src/ws: a watchdog that turns
// a hang into a failure, sanitizer-aware sizes, and a per-item take counter.
#pragma once

#include <atomic>
#include <thread>

#include "coop/config.hpp"
#include "tests/support/watchdog.hpp"

namespace wstest {

// kSanitized — smaller stress sizes under ASan/TSan (CI time, HELPERS.md).
inline constexpr bool kSanitized = COOP_ASAN || COOP_TSAN;

// Watchdog — the tests' one watchdog (tests/support/watchdog.hpp): aborts the process with
// a message if not destroyed within its limit (a lost item or a livelock would otherwise
// hang the test until CTest's timeout).
using Watchdog = coopbench::test::Watchdog;

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
