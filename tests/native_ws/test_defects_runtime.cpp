// test_defects_runtime.cpp — two interleavings of native-ws (the real runtime, its 4096-slot
// rings) forced with test hooks (config.hpp COOP_HOOK; this binary links coop_hooked). Each
// hangs on the code before its fix; a watchdog turns the hang into a failure. Nothing here
// asserts on time: the bounded waits inside the hooks only decide whether the interleaving
// was reached (then the test checks that it was).
//
// - OverflowWhileAnotherProcessorTakesCompletes (queue.hpp append/empty): processor X's
//   take from the global Default queue has passed empty() (work was there) and is held
//   (hook global_take_after_empty); processor E runs everything that was there, so the
//   queue is empty (head == tail), then overflows its full ring: the chain is linked, and
//   before E's tail CAS (hook enqueue_before_tail_cas) X is let go: its dequeue moves the tail
//   one node onto the chain and takes that activity; E's tail CAS fails. Before the fix the
//   tail stayed there, head == tail, and the rest of the chain (2048 activities) was hidden
//   from every empty()-gated take and from the parkers' re-check: the joins of main never
//   returned.
// - RefillWakesAParker (ws_ring.hpp refill, Scheduler<A>::pick_next): the global
//   Default queue holds g and x, processor R's ring is empty; main blocks on R, so R's pick
//   (from the block, not the idle loop) takes g and refills x; inside the refill's window (x
//   taken, not yet on the ring: hook refill_after_take) processor X finishes what it ran,
//   finds nothing and parks. Then x goes onto R's ring and R runs g, which spins without
//   yielding until x has run (or it gives up, after kGiveUp). Only X can run x: before the
//   fix nobody woke it.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/src/processor.hpp"
#include "tests/native_ws/ws_test_util.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::uint32_t kRing = coop::ws::kRingCapacity;  // the ring of the runtime's WsAlgorithm

// wait_for — true once pred() holds, false after `limit` (the interleaving was not reached).
template <class Pred>
bool wait_for(Pred pred, std::chrono::milliseconds limit) {
    const auto end = Clock::now() + limit;
    while (!pred()) {
        if (Clock::now() > end) return false;
        std::this_thread::yield();
    }
    return true;
}

std::uint64_t stat(const coop::Runtime& rt, const char* name) {
    const auto s = rt.stats();
    const auto it = s.find(name);
    return it == s.end() ? 0 : it->second;
}

coop::Options two_processors() {
    coop::Options o;
    o.processors = 2;
    o.scheduling = coop::Scheduling::work_stealing;
    return o;
}

// Busy — an activity that keeps the other processor busy (so it neither steals nor takes)
// until released; records that processor's thread.
struct Busy {
    std::atomic<bool> running{false};
    std::atomic<bool> release{false};
    std::atomic<std::thread::id> thread{};
    void run() {
        thread.store(std::this_thread::get_id());
        running.store(true);
        while (!release.load()) __builtin_ia32_pause();
    }
};

// ---- D1 -------------------------------------------------------------------------------
enum D1Phase : int { kD1Start, kHoldX, kXHeld, kArmOverflow, kReleaseX, kD1Done };
std::atomic<int> g_d1{kD1Start};
std::atomic<std::thread::id> g_d1_x{};
std::atomic<bool> g_d1_reached{false};

// On X, inside GlobalQueues::take(Default), after empty() said "not empty": hold.
void d1_take_hook(int priority) {
    if (priority != static_cast<int>(coop::Priority::Default)) return;
    if (std::this_thread::get_id() != g_d1_x.load()) return;
    int expected = kHoldX;
    if (!g_d1.compare_exchange_strong(expected, kXHeld)) return;
    wait_for([] { return g_d1.load() >= kReleaseX; }, std::chrono::seconds(60));
}

// On E, inside the overflow's append (chain linked, tail CAS not yet made): let X's dequeue
// move the tail onto the chain.
void d1_enqueue_hook(const void* queue_tail, const void* tail) {
    if (std::this_thread::get_id() == g_d1_x.load()) return;
    int expected = kArmOverflow;
    if (!g_d1.compare_exchange_strong(expected, kReleaseX)) return;
    const auto* t = static_cast<const std::atomic<coop::Node*>*>(queue_tail);
    if (wait_for([&] { return static_cast<const void*>(t->load()) != tail; }, std::chrono::seconds(10)))
        g_d1_reached.store(true);
    g_d1.store(kD1Done);
}

TEST(WsRuntimeDefects, OverflowWhileAnotherProcessorTakesCompletes) {
    wstest::Watchdog dog("WsRuntimeDefects.OverflowWhileAnotherProcessorTakesCompletes", 120);
    g_d1 = kD1Start;
    g_d1_reached = false;
    coop::test_hooks::global_take_after_empty = &d1_take_hook;
    coop::test_hooks::enqueue_before_tail_cas = &d1_enqueue_hook;
    std::atomic<long> ran{0};
    constexpr long kBatch = kRing + 2;  // fills the ring and runnext, then one overflow
    bool held = false, overflowed = false;
    {
        coop::Runtime rt(two_processors());
        rt.run([&] {
            Busy busy;
            coop::Thread b = coop::spawn([&] { busy.run(); });
            // The other processor steals b from our runnext (after the grace) and runs it.
            if (!wait_for([&] { return busy.running.load(); }, std::chrono::seconds(30))) {
                busy.release = true;
                b.join();
                return;
            }
            g_d1_x.store(busy.thread.load());
            auto spawn_batch = [&] {
                std::vector<coop::Thread> kids;
                kids.reserve(kBatch);
                for (long i = 0; i < kBatch; ++i) kids.push_back(coop::spawn([&] { ran.fetch_add(1); }));
                return kids;
            };
            // Batch 1 while X is busy: our ring overflows into the global queue.
            const std::uint64_t before = stat(rt, "overflowed");
            std::vector<coop::Thread> first = spawn_batch();
            overflowed = stat(rt, "overflowed") > before;
            // X finishes b and, with an empty ring, takes from the global queue: held after
            // its empty() check.
            g_d1 = kHoldX;
            busy.release = true;
            held = wait_for([] { return g_d1.load() == kXHeld; }, std::chrono::seconds(30));
            if (!held) g_d1 = kD1Done;
            // We run all of batch 1 (X is held): the global queue is empty again.
            for (auto& k : first) k.join();
            // Batch 2 overflows into the empty queue; X's dequeue races the append.
            if (held) g_d1 = kArmOverflow;
            std::vector<coop::Thread> second = spawn_batch();
            if (g_d1.load() != kD1Done) g_d1 = kD1Done;  // not reached: let X go
            for (auto& k : second) k.join();  // hung here before the fix
            b.join();
        });
    }
    coop::test_hooks::global_take_after_empty = nullptr;
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
    EXPECT_TRUE(overflowed) << "batch 1 did not overflow the ring";
    EXPECT_TRUE(held) << "X was not held in its take";
    EXPECT_TRUE(g_d1_reached.load()) << "X's dequeue did not move the tail inside the append";
    EXPECT_EQ(ran.load(), 2 * kBatch);
}

// ---- D2 -------------------------------------------------------------------------------
enum D2Phase : int { kD2Start, kArmRefill, kInWindow, kD2Done };
std::atomic<int> g_d2{kD2Start};
std::atomic<std::thread::id> g_d2_r{};
coop::Runtime* g_d2_rt = nullptr;
Busy* g_d2_busy = nullptr;
std::atomic<bool> g_d2_reached{false};

// On R, inside refill: x taken from the global queue (now empty), not yet on the ring.
void d2_refill_hook(unsigned moved, bool global_empty) {
    if (std::this_thread::get_id() != g_d2_r.load() || moved != 0 || !global_empty) return;
    int expected = kArmRefill;
    if (!g_d2.compare_exchange_strong(expected, kInWindow)) return;
    const std::uint64_t parks = stat(*g_d2_rt, "parks");
    g_d2_busy->release = true;  // X finishes its activity, finds nothing, parks
    if (wait_for([&] { return stat(*g_d2_rt, "parks") > parks; }, std::chrono::seconds(10))) {
        // X counted its park; give it time to get from the count through its re-check to
        // futex_wait (if it is slower, it sees x on our ring and the test passes trivially).
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        g_d2_reached.store(true);
    }
    g_d2.store(kD2Done);
}

// How long g waits, without yielding, for the parked processor to run x: far above a futex
// wake on a loaded machine, far below the watchdog.
constexpr auto kGiveUp = std::chrono::seconds(10);

TEST(WsRuntimeDefects, RefillWakesAParker) {
    wstest::Watchdog dog("WsRuntimeDefects.RefillWakesAParker", 120);
    g_d2 = kD2Start;
    g_d2_reached = false;
    coop::test_hooks::refill_after_take = &d2_refill_hook;
    std::atomic<bool> x_ran{false};
    std::atomic<bool> x_ran_while_g_waited{false};
    bool placed = false;
    {
        coop::Runtime rt(two_processors());
        g_d2_rt = &rt;
        rt.run([&] {
            Busy busy;
            g_d2_busy = &busy;
            coop::Thread b = coop::spawn([&] { busy.run(); });
            if (!wait_for([&] { return busy.running.load(); }, std::chrono::seconds(30))) {
                busy.release = true;
                b.join();
                return;
            }
            coop::Thread g = coop::spawn([&] {
                if (g_d2.load() != kD2Done) busy.release = true;  // not reached: do not hang
                // "For good": no yield, so only the parked processor can run x. The wait gives
                // up after kGiveUp so that a lost wake-up fails in seconds rather than at the
                // watchdog; with the wake-up, x runs as soon as the woken processor picks it (a
                // futex wake, tens of microseconds). After giving up, g ends and R runs x itself.
                const auto end = Clock::now() + kGiveUp;
                while (!x_ran.load() && Clock::now() < end) __builtin_ia32_pause();
                x_ran_while_g_waited = x_ran.load();
            });
            coop::Thread x = coop::spawn([&] { x_ran = true; });
            // Move g and x from our runnext/ring into the global Default queue, in that order
            // (as an overflow would have put them there); nothing is left on our ring.
            coop::internal::Processor* self = coop::internal::this_processor();
            auto* ws = &static_cast<coop::internal::Scheduler<coop::internal::WsAlgorithm>&>(*self->runtime->scheduler)
                            .algorithm();
            auto& local = ws->local(self->index);
            coop::internal::Activity* first = local.ring.pick().item;   // x (runnext)
            coop::internal::Activity* second = local.ring.pick().item;  // g (displaced)
            placed = first != nullptr && second != nullptr && local.ring.empty_hint();
            if (second != nullptr) ws->push_global(coop::Priority::Default, second);
            if (first != nullptr) ws->push_global(coop::Priority::Default, first);
            // Our next pick is the block below (not the idle loop) and must not be the
            // fairness look (which takes one without refilling): restart the owner-only tick.
            local.until_fairness = coop::ws::kGlobalCheckInterval;
            g_d2_r.store(std::this_thread::get_id());
            g_d2 = kArmRefill;
            g.join();  // R: takes g, refills x (the hook), runs g; hung here before the fix
            if (g_d2.load() != kD2Done) g_d2 = kD2Done;
            busy.release = true;
            x.join();
            b.join();
        });
        g_d2_rt = nullptr;
    }
    coop::test_hooks::refill_after_take = nullptr;
    EXPECT_TRUE(placed);
    EXPECT_TRUE(g_d2_reached.load()) << "the refill window was not reached with the other processor parked";
    EXPECT_TRUE(x_ran.load());
    EXPECT_TRUE(x_ran_while_g_waited.load())
        << "x, refilled onto R's ring while X parked, was not run by X: the refill woke nobody";
}

}  // namespace
