// test_park.cpp — the park/notify protocol of coop's idle processors (park.hpp, owned by the
// Scheduler for every algorithm), tested on Parking itself, without a runtime: a directed
// interleaving test that stops a waker inside wake_one() (COOP_HOOK notify_before_claim)
// while a parker finds work on its own, and a stress test with a watchdog.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "coop/park.hpp"
#include "tests/native/support.hpp"

namespace {

using coop::internal::Parking;

void spin_until(const std::atomic<int>& v, int want) {
    while (v.load() != want) std::this_thread::yield();
}

// wait_bounded — waits until `flag` is set; false after `seconds` (a lost wake-up: the
// expected wake-up takes microseconds, the bound is only there to fail instead of hanging).
bool wait_bounded(const std::atomic<bool>& flag, int seconds = 10) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (!flag.load()) {
        if (std::chrono::steady_clock::now() > end) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
}

struct Race {
    std::atomic<int> phase{0};
    std::atomic<bool> work{false};
    std::atomic<bool> woke{false};
};
Race* g_race = nullptr;

// more_work for the parker: in phase 0 (the parker has announced itself and fenced) it lets
// the waker run into wake_one() and stop at the hook, then reports work: the parker leaves
// park() on its own while the waker is inside the window.
bool parker_more_work(void* arg) {
    auto* r = static_cast<Race*>(arg);
    if (r->phase.load() == 0) {
        r->phase.store(1);  // parker inside park(), after its fence
        spin_until(r->phase, 2);  // waker stopped in wake_one() after its idle check
        return true;
    }
    return r->work.load();
}

// The lost wake-up of the shared-flag protocol: a waker sees a parking processor (working_ < P),
// the parker finds work itself and leaves; the waker then claims the wake-up. The protocol
// must not leave that claim set with nobody to clear it: the parker parks again, new work
// is made ready and wake_one() must wake it.
TEST(ParkNotify, WakerInsideNotifyWhileTheParkerFindsWork) {
    coop_test::Watchdog dog("ParkNotify.WakerInsideNotifyWhileTheParkerFindsWork", 120);
    Parking parking(2);
    Race r;
    g_race = &r;
    std::thread parker([&] {
        parking.park(0, -1, &parker_more_work, &r);  // finds work (phase 0 script)
        r.phase.store(3);
        spin_until(r.phase, 4);  // the waker's wake_one() has returned
        parking.park(0, -1, &parker_more_work, &r);  // nothing to do: parks
        r.woke.store(true);
    });
    spin_until(r.phase, 1);
    coop::test_hooks::notify_before_claim = [] {
        coop::test_hooks::notify_before_claim = nullptr;
        g_race->phase.store(2);
        spin_until(g_race->phase, 3);  // the parker has left park()
    };
    parking.wake_one();
    coop::test_hooks::notify_before_claim = nullptr;
    r.phase.store(4);
    // Let the parker park for real (parked() rises when it announces itself).
    while (parking.parked() == 0) std::this_thread::yield();
    r.work.store(true);
    parking.wake_one();
    const bool woken = wait_bounded(r.woke);
    EXPECT_TRUE(woken) << "wake_one() did not wake the parked processor: a wake-up was lost";
    if (!woken) parking.wake_all();
    parker.join();
}

}  // namespace

namespace {

// Stress: processor 0 repeatedly makes one unit of work ready and waits until another
// processor has taken it (a program that needs two processors at once); the others park
// whenever there is nothing to take. A lost wake-up leaves the unit untaken with everybody
// else asleep: the watchdog turns that hang into a failure.
struct Stress {
    std::atomic<long> available{0};
    std::atomic<long> taken{0};
    std::atomic<bool> stop{false};
};

bool stress_more_work(void* arg) {
    auto* s = static_cast<Stress*>(arg);
    return s->available.load() > 0 || s->stop.load();
}

TEST(ParkNotify, StressRendezvousWithParkingProcessors) {
    coop_test::Watchdog dog("ParkNotify.StressRendezvousWithParkingProcessors", 240);
    const unsigned n = coop_test::many_processors();
    const long rounds = coop_test::scaled(30000, 10);
    Parking parking(n);
    Stress s;
    std::vector<std::thread> helpers;
    for (unsigned i = 1; i < n; ++i)
        helpers.emplace_back([&, i] {
            while (!s.stop.load()) {
                long a = s.available.load();
                if (a > 0 && s.available.compare_exchange_strong(a, a - 1)) {
                    s.taken.fetch_add(1);
                    continue;
                }
                parking.park(i, -1, &stress_more_work, &s);
            }
        });
    for (long r = 0; r < rounds; ++r) {
        s.available.fetch_add(1);
        parking.wake_one();
        while (s.taken.load() <= r) std::this_thread::yield();
    }
    s.stop.store(true);
    parking.wake_all();
    for (auto& t : helpers) t.join();
    EXPECT_EQ(s.taken.load(), rounds);
    EXPECT_FALSE(parking.token_taken()) << "the wake-up token was left taken";
    EXPECT_EQ(parking.parked(), 0u);
}

}  // namespace
