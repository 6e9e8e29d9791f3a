// test_units_lifetime.cpp — lifetimes in units/units.hpp: a unit destroyed as soon as its last
// result was seen, and the misuse that must be a clear error (units: ... then abort), not
// undefined behaviour. Built with UNITS_TEST_HOOKS: the directed tests stop a carrier or a
// sender inside a window with units.hpp's UNITS_TEST_HOOK points.
//
// - DestroyUnitAfterLastResult.*: the program destroys a unit right after it saw the result
//   of the unit's last message (units/README.md's own pattern). The carrier must not touch
//   the unit after that result became visible. Directed: the carrier is held at
//   drain_before_end_deq (the operation ran, the unit not yet counted out); if the result is
//   already visible there, the hook lets the program destroy the unit before the carrier
//   goes on (heap-use-after-free in end_deq_and_is_empty under ASan; the count of results
//   seen before the unit's end is the failure in every build). Also through a forwarded
//   result (an operation returning an unresolved future). Stress: many waiters on the
//   future, the program waiting first; a program that polls ready(); the Scope/Unit
//   declaration order of the README.
// - Lesser defects (death tests): two activities resolving one Promise at once; a message
//   whose dependency resolves after its Scope stopped (or inside a later Scope); an activity
//   sending while ~Scope runs. A send in progress when stop() begins completes and runs.
// Every test runs under a watchdog.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "coop/cpu_relax.hpp"
#include "tests/locks/sizes.hpp"
#include "units/units.hpp"

#if !defined(UNITS_TEST_HOOKS)
#error "test_units_lifetime needs UNITS_TEST_HOOKS (tests/units/CMakeLists.txt)"
#endif

using namespace std::chrono_literals;
using locks_test::scaled;

namespace {

unsigned procs() { return std::max(2u, std::thread::hardware_concurrency()); }

template <class F>
void with_units(F&& body, unsigned carriers = procs()) {
    coop::Runtime rt({.processors = procs()});
    rt.run([&] {
        units::Scope scope(carriers);
        body();
    });
}

// spare_carriers — one carrier fewer than processors: a processor is left for the program,
// so it runs the moment it is woken (or keeps polling) while a carrier is still busy with
// the same message (waking its other waiters): the stress tests' window.
unsigned spare_carriers() { return std::max(1u, procs() - 1); }

struct Account {
    long balance = 0;
};
long deposit(Account& a, long x) { return a.balance += x; }

// ---------------------------------------------------------------------------------------
// Directed: a carrier held between its operation and its unit's end_deq_and_is_empty().

std::atomic<bool> g_destroyed{false};
std::atomic<int> g_seen_before_end{0};
std::atomic<int> g_hook_calls{0};

// hold_if_result_visible — drain_before_end_deq: if the message's result can already be seen
// here, the program may destroy the unit now; let it (wait until it did) before the carrier
// goes on to end_deq_and_is_empty(). The OS thread waits (yielding it): the program runs on
// another processor (procs() >= 2).
void hold_if_result_visible(const void* message) {
    g_hook_calls.fetch_add(1);
    const auto* st = static_cast<const units::detail::StateBase*>(static_cast<const units::detail::Task*>(message));
    if (!st->ready()) return;
    g_seen_before_end.fetch_add(1);
    while (!g_destroyed.load(std::memory_order_acquire)) std::this_thread::yield();
}

// spin_while — the program waits for an activity that a hook holds inside its window (the
// hook keeps its OS thread and never yields) by spinning, not yielding: a yield asks no idle
// processor for help (Negele et al., Fig. 2), so had this processor picked the held activity
// on a yield while the others had parked, the program would wait behind it for ever.
// Spinning keeps this processor; the spawn or wake-up that readied the activity woke a
// parked processor, which takes it.
template <class Pred>
void spin_while(Pred&& pred) {
    while (pred()) coop::cpu_relax();
}

enum class Await { Wait, Poll };

void directed_destroy_after_last_result(Await how) {
    g_destroyed = false;
    g_seen_before_end = 0;
    g_hook_calls = 0;
    units::test_hooks::drain_before_end_deq = &hold_if_result_visible;
    with_units([&] {
        auto* u = new units::Unit<Account>();
        auto f = units::send(*u, &deposit, 5L);
        if (how == Await::Wait) {
            EXPECT_EQ(units::wait(f), 5);
        } else {
            spin_while([&] { return !f.ready(); });
            EXPECT_EQ(f.get(), 5);
        }
        delete u;  // the program saw the unit's last result: it may destroy the unit
        g_destroyed.store(true, std::memory_order_release);
    });
    units::test_hooks::drain_before_end_deq = nullptr;
    EXPECT_EQ(g_hook_calls.load(), 1);
    EXPECT_EQ(g_seen_before_end.load(), 0)
        << "the result was visible before the carrier's last access to the unit (end_deq_and_is_empty)";
}

TEST(DestroyUnitAfterLastResult, DirectedWait) {
    locks_test::Watchdog wd(60s, "directed: wait, then destroy the unit");
    directed_destroy_after_last_result(Await::Wait);
}

TEST(DestroyUnitAfterLastResult, DirectedPollReady) {
    locks_test::Watchdog wd(60s, "directed: poll ready(), then destroy the unit");
    directed_destroy_after_last_result(Await::Poll);
}

// The result is published only after the unit was counted out, wherever a hook sits: a
// waiter of the future (a raw Task, woken synchronously inside the publish, on the carrier)
// reads the unit's counter. The unit's only message counted out: 0. A publish anywhere
// before end_deq_and_is_empty() (even after drain_before_end_deq, where the directed tests
// above hold the carrier only if the result is already visible) reads 1.
std::atomic<bool> g_waiter_registered{false};
std::atomic<std::int64_t> g_count_at_publish{-1};
units::Unit<Account>* g_unit = nullptr;

long deposit_when_watched(Account& a, long x) {
    while (!g_waiter_registered.load(std::memory_order_acquire)) coop::cpu_relax();
    return a.balance += x;
}

void read_count_at_publish(units::detail::Task*) { g_count_at_publish = g_unit->queue.count(); }

TEST(DestroyUnitAfterLastResult, ResultPublishedOnlyAfterTheUnitWasCountedOut) {
    locks_test::Watchdog wd(60s, "directed: the unit's counter when the result is published");
    g_waiter_registered = false;
    g_count_at_publish = -1;
    with_units([&] {
        g_unit = new units::Unit<Account>();
        auto f = units::send(*g_unit, &deposit_when_watched, 5L);
        units::detail::Task watcher;
        watcher.wake = &read_count_at_publish;
        // The operation spins until this is registered: it is not resolved yet, so the
        // watcher is only queued, and the publish will wake it.
        units::detail::FutureAccess::state(f)->add_waiter(&watcher);
        g_waiter_registered.store(true, std::memory_order_release);
        EXPECT_EQ(units::wait(f), 5);
        delete g_unit;
        g_unit = nullptr;
        coop::release(&watcher);  // the queue node it carries from the waiter list
    });
    EXPECT_EQ(g_count_at_publish.load(), 0)
        << "the result was published before the carrier counted the unit out (end_deq_and_is_empty)";
}

// Forwarding: the unit's operation returns a future that is not resolved yet; the message's
// result is that future's value. If the message registered as a forwarder before its unit
// was counted out, resolving the inner future lets another carrier resolve the message's
// future (and the program destroy the unit) while this carrier is still before end_deq.
units::Promise<long>* g_inner = nullptr;
std::atomic<bool> g_inner_resolved_by_hook{false};

void resolve_inner_if_registered(const void* message) {
    (void)message;
    units::Future<long> inner = g_inner->future();
    // A waiter besides the resolver's token: the message already waits on the inner future.
    const bool registered = units::detail::FutureAccess::state(inner)->waiters.count() >= 2;
    g_inner_resolved_by_hook = registered;
    g_hook_calls.fetch_add(1);  // after the decision: the test reads it next
    if (!registered) return;
    g_inner->resolve(7);  // wakes the forwarder: another carrier resolves the message's future
    g_seen_before_end.fetch_add(1);
    while (!g_destroyed.load(std::memory_order_acquire)) std::this_thread::yield();
}

TEST(DestroyUnitAfterLastResult, DirectedForwardedResult) {
    locks_test::Watchdog wd(60s, "directed: forwarded result, then destroy the unit");
    g_destroyed = false;
    g_seen_before_end = 0;
    g_hook_calls = 0;
    g_inner_resolved_by_hook = false;
    units::Promise<long> inner;
    g_inner = &inner;
    units::test_hooks::drain_before_end_deq = &resolve_inner_if_registered;
    with_units([&] {
        auto* u = new units::Unit<Account>();
        auto f = units::send(*u, [&inner](Account&) { return inner.future(); });
        spin_while([] { return g_hook_calls.load() == 0; });
        if (!g_inner_resolved_by_hook) inner.resolve(7);
        EXPECT_EQ(units::wait(f), 7);
        delete u;
        g_destroyed.store(true, std::memory_order_release);
    });
    units::test_hooks::drain_before_end_deq = nullptr;
    g_inner = nullptr;
    EXPECT_EQ(g_seen_before_end.load(), 0)
        << "the forwarded result could be resolved before the carrier's last access to the unit";
}

// ---------------------------------------------------------------------------------------
// Stress forms (no hook): the windows are hit by timing; under ASan a write into a destroyed
// unit is a heap-use-after-free report.

// Many waiters: the program registers on f first (so it is woken first), then `kWaiters`
// free messages depend on f; the carrier wakes them all after the program. The unit's message
// starts only when `gate` is resolved, so every registration happens before f resolves.
TEST(DestroyUnitAfterLastResult, ManyWaitersProgramWokenFirst) {
    locks_test::Watchdog wd(240s, "many waiters, destroy after wait");
    const int rounds = scaled(100, 4), kWaiters = scaled(1000, 4);
    with_units(
        [&] {
        for (int r = 0; r < rounds; ++r) {
            units::Promise<long> gate;
            auto* u = new units::Unit<Account>();
            auto f = units::send(*u, [](Account& a, units::Future<long> g) { return a.balance += g.get(); }, gate.future());
            std::atomic<bool> destroyed{false};
            coop::Thread program = coop::spawn([&] {
                EXPECT_EQ(units::wait(f), 1);
                delete u;
                destroyed = true;
            });
            auto* fs = units::detail::FutureAccess::state(f);
            while (fs->waiters.count() < 2) coop::yield();  // the program is registered
            std::vector<units::Future<long>> ws;
            for (int i = 0; i < kWaiters; ++i)
                ws.push_back(units::send([](units::Future<long> v) { return v.get(); }, f));
            gate.resolve(1);
            program.join();
            for (auto& w : ws) ASSERT_EQ(units::wait(w), 1);
            ASSERT_TRUE(destroyed.load());
        }
        },
        spare_carriers());
}

// Polling: the program polls ready() and destroys the unit the moment it sees the result
// (while the carrier still wakes the future's other waiters).
TEST(DestroyUnitAfterLastResult, PollReadyThenDestroy) {
    locks_test::Watchdog wd(240s, "poll ready, destroy");
    const int rounds = scaled(400, 4), kWaiters = 2000;
    with_units(
        [&] {
            for (int r = 0; r < rounds; ++r) {
                units::Promise<long> gate;
                auto u = std::make_unique<units::Unit<Account>>();
                auto f = units::send(*u, [](Account& a, units::Future<long> g) { return a.balance += g.get(); }, gate.future());
                std::vector<units::Future<long>> ws;
                for (int i = 0; i < kWaiters; ++i)
                    ws.push_back(units::send([](units::Future<long> v) { return v.get(); }, f));
                gate.resolve(1);
                while (!f.ready()) {
                }
                EXPECT_EQ(f.get(), 1);
                u.reset();
                for (auto& w : ws) ASSERT_EQ(units::wait(w), 1);
            }
        },
        spare_carriers());
}

// The README's declaration order: the unit is declared after the Scope, so it is destroyed
// right after wait(), before the Scope stops; many waiters lengthen the carrier's wake-ups.
TEST(DestroyUnitAfterLastResult, ReadmePatternUnitDeclaredAfterScope) {
    locks_test::Watchdog wd(240s, "README pattern");
    const int rounds = scaled(100, 4), kWaiters = scaled(200, 4);
    coop::Runtime rt({.processors = procs()});
    rt.run([&] {
        for (int r = 0; r < rounds; ++r) {
            units::Scope scope(spare_carriers());
            units::Unit<Account> acct;
            units::Promise<long> gate;
            auto f = units::send(acct, [](Account& a, units::Future<long> g) { return a.balance += g.get(); }, gate.future());
            std::vector<units::Future<long>> ws;
            for (int i = 0; i < kWaiters; ++i)
                ws.push_back(units::send([](units::Future<long> v) { return v.get(); }, f));
            gate.resolve(5);
            EXPECT_EQ(units::wait(f), 5);
        }  // acct dies here, then the scope stops
    });
}

// ---------------------------------------------------------------------------------------
// Lesser defects: clear errors.

// Two activities resolve one Promise at once: the second must abort with "resolved twice"
// (not write the value concurrently, drive the waiter list's counter below zero, drop the
// producer's reference twice). Directed: the first resolve is held right after its claim.
TEST(UnitsLifetimeDeathTest, ConcurrentPromiseResolveAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            static std::atomic<int> stage{0};
            static std::atomic<bool> armed{true};
            units::test_hooks::promise_resolve_claimed = [] {
                if (!armed.exchange(false)) return;  // only the first resolve is held
                stage = 1;
                while (stage.load() != 2) std::this_thread::yield();
            };
            // In the child: a hang fails the death test at once (the watchdog's message is
            // not "resolved twice") instead of at ctest's timeout.
            locks_test::Watchdog wd(60s, "concurrent resolve");
            with_units([] {
                units::Promise<int> p;
                auto w = units::send([](units::Future<int> v) { return v.get(); }, p.future());
                coop::Thread a = coop::spawn([&] { p.resolve(1); });
                // Spin, not yield: `a` holds its OS thread inside the hook and never yields,
                // and a yield asks no idle processor for help (Negele et al., Fig. 2). Had
                // this processor picked `a` on a yield while the other had parked, main would
                // wait behind `a` for ever. Spinning keeps this processor; the spawn, which
                // does wake a parked processor, has `a` run (stolen) on another.
                while (stage.load() != 1) coop::cpu_relax();
                p.resolve(2);  // while a's resolve is inside
                stage = 2;
                a.join();
                (void)units::wait(w);
            });
        },
        "resolved twice");
}

// A message waits for a promise that is resolved only after the Scope it was sent in
// stopped: it can never run; resolving must say so.
TEST(UnitsLifetimeDeathTest, DependencyResolvedAfterScopeStoppedAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            coop::Runtime rt({.processors = procs()});
            rt.run([] {
                units::Promise<int> p;
                {
                    units::Scope scope(procs());
                    (void)units::send([](units::Future<int> v) { return v.get(); }, p.future());
                }
                p.resolve(1);
            });
        },
        "resolved after its units::Scope stopped");
}

// The same, resolved inside a later Scope (from an operation of that Scope): the message
// must not run in a Scope it was not sent in (its units may be gone).
TEST(UnitsLifetimeDeathTest, DependencyResolvedInALaterScopeAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            coop::Runtime rt({.processors = procs()});
            rt.run([] {
                units::Promise<int> p;
                {
                    units::Scope scope(procs());
                    (void)units::send([](units::Future<int> v) { return v.get(); }, p.future());
                }
                units::Scope later(procs());
                (void)units::wait(units::send([&p] {
                    p.resolve(1);
                    return 0;
                }));
            });
        },
        "resolved after its units::Scope stopped");
}

// An activity inside a send (held inside submit, past the Scope check) while ~Scope begins:
// stop() waits for it, its message runs before the carriers stop, and nothing touches a
// freed Scheduler.
std::atomic<bool> g_sender_in_window{false};
std::atomic<bool> g_scope_gone{false};
std::atomic<bool> g_submit_armed{false};

void hold_sender_until_stop(void) {
    if (!g_submit_armed.exchange(false)) return;
    g_sender_in_window = true;
    // Until stop() has begun (it then waits for us), or (without that wait) the Scope is gone.
    while (!units::detail::g_stopping.load() && !g_scope_gone.load()) std::this_thread::yield();
}

TEST(UnitsLifetime, SendInProgressWhenStopBeginsCompletesAndRuns) {
    locks_test::Watchdog wd(60s, "send in progress at stop");
    g_sender_in_window = false;
    g_scope_gone = false;
    g_submit_armed = true;
    std::atomic<int> ran{0};
    units::test_hooks::submit_outside = &hold_sender_until_stop;
    coop::Runtime rt({.processors = procs()});
    rt.run([&] {
        coop::Thread sender;  // declared before the Scope: still running while ~Scope runs
        {
            units::Scope scope(procs());
            sender = coop::spawn([&] {
                (void)units::send([&ran] {
                    ran.fetch_add(1);
                    return 0;
                });
            });
            spin_while([] { return !g_sender_in_window.load(); });
        }  // ~Scope while the sender is inside its send
        g_scope_gone = true;
        sender.join();
    });
    units::test_hooks::submit_outside = nullptr;
    EXPECT_EQ(ran.load(), 1);
}

// A sender that goes on sending after stop() began: a clear error.
TEST(UnitsLifetimeDeathTest, SendWhileScopeStopsAborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            g_submit_armed = true;
            units::test_hooks::submit_outside = &hold_sender_until_stop;
            coop::Runtime rt({.processors = procs()});
            rt.run([&] {
                coop::Thread sender;
                {
                    units::Scope scope(procs());
                    sender = coop::spawn([&] {
                        for (;;) (void)units::send([] { return 0; });  // the first is held at stop
                    });
                    spin_while([] { return !g_sender_in_window.load(); });
                }
                g_scope_gone = true;
                sender.join();
            });
        },
        "while its units::Scope was stopping|send outside a units::Scope");
}

}  // namespace
