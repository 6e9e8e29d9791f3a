// test_protocol_directed.cpp — directed tests of protocol lines that no other test guarded
// (the mutants of tests/mutants/ named after each test below; review of c2949b3,
// coop-protocols-2026-12). Each test holds a thread inside the line's window with a COOP_HOOK
// (config.hpp; this binary links coop_hooked) or builds the interleaving that the line
// exists for. A lost wake-up or a lost sleeper hangs the run: a watchdog of a few seconds
// turns it into a failure. No test asserts on time: the bounded waits only decide how long
// a window is held open, and every check is on order or on what was seen.
//
// Which line each test guards (the mutant that deletes or moves it, tests/mutants/):
//   CondVarWaiterDestroysItDuringTheBroadcast  sync.cpp notify_all's `Use u(waiters_)`
//                                               (condvar_notify_all_no_use)
//   CondVarBroadcastWakesAWaiterQueuedBeforeIt sync.cpp notify_all's fast return through
//                                               Queue::empty, tail read first
//                                               (condvar_empty_head_first)
//   InboxFlagIsSetAfterTheEnqueue               inbox.cpp submit_inbox: inbox_ready stored
//                                               after the enqueue (inbox_flag_before_enqueue)
//   InboxFlagIsClearedBeforeTheDrainLooks       inbox.cpp drain_inbox: the clear before the
//                                               dequeues (inbox_clear_after_drain)
//   TimerHeapWakesTheEarliestDeadlineFirst      timers.cpp meld: the earlier deadline on top
//                                               (timers_meld_max_heap)
//   TimerPollRestoresTheNextDeadline            timers.cpp poll_timers' lower_earliest from
//                                               the heap's new top (timers_no_restore)
//   TimerPopKeepsEverySleeper                   timers.cpp pop_root's meld(a, b) of each pair
//                                               (timers_pop_root_drops_pair_b)
//   RunWaitsWhileAChildStartsAndEndsBetweenItsReads  quiescence.cpp: `finished` summed
//                                               before `started` (quiescence_started_first)
//   ErrnoIsTheActivitysAcrossAYield             switch.hpp restore_errno after the switch
//                                               (restore_errno_skipped)
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/src/processor.hpp"
#include "coop/src/scheduler.hpp"
#include "tests/native/support.hpp"

namespace {

using namespace std::chrono_literals;

constexpr int kWatchdogSeconds = 30;  // a pass takes about a second
// kStrandedSeconds — how long a test waits for an activity that a correct runtime runs at
// once before it calls it stranded (the mutants' hang; a pass waits microseconds).
constexpr int kStrandedSeconds = 5;

// spin_until — spins until `f` is non-zero; false after `ms` milliseconds (< 0: never).
bool spin_until(const std::atomic<int>& f, int ms = -1) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (f.load() == 0) {
        if (ms >= 0 && std::chrono::steady_clock::now() > end) return false;
        std::this_thread::yield();
    }
    return true;
}

// stranded — the test's answer when an activity was never run: a message, then the end of
// the process (the runtime cannot be stopped with an activity stuck in it).
[[noreturn]] void stranded(const char* what) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    std::fflush(stderr);
    std::_Exit(1);
}

void clear_hooks() {
    namespace h = coop::test_hooks;
    h::notify_before_claim = nullptr;
    h::protect_before_publish = nullptr;
    h::empty_between_loads = nullptr;
    h::semaphore_park_done = nullptr;
    h::inbox_before_enqueue = nullptr;
    h::inbox_after_drain = nullptr;
    h::timer_woken = nullptr;
    h::quiescent_between_reads = nullptr;
}

class ProtocolDirected : public ::testing::Test {
  protected:
    void TearDown() override { clear_hooks(); }

  private:
    coop_test::Watchdog dog_{std::string("ProtocolDirected.") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                             kWatchdogSeconds};
};

// ---------------------------------------------------------------------------- CondVar

// condition.hpp allows destroying a CondVar right after a broadcast (as POSIX does). Here the
// woken WAITER destroys it while the notifier is still inside notify_all's loop: the hook
// notify_before_claim (make_ready of the waiter found the other processor parked) arms
// protect_before_publish for the notifier's thread, so its next dequeue() stops after its
// first read of the queue's head, until the waiter has begun the destroy (and a little
// more). With notify_all's guard the waiter's ~WaitQueue waits for notify_all to return;
// without it the notifier's re-read finds the storage overwritten (0x5a, as a reuse of the
// freed memory would): a crash. P=2, global queues.
alignas(64) unsigned char g_cv_buf[sizeof(coop::CondVar)];
coop::CondVar* g_cv = nullptr;
std::atomic<int> g_cv_queued{0}, g_cv_destroying{0}, g_cv_destroyed{0}, g_cv_held{0};
std::atomic<int> g_claim_armed{0}, g_hold_armed{0};
std::atomic<std::thread::id> g_notifier{};

// The hooks are set before the runtime's workers start and unset after they ended (every
// thread reads them); atomic flags decide when they act.
void arm_hold() {
    if (std::this_thread::get_id() != g_notifier.load()) return;
    int armed = 1;
    if (g_claim_armed.compare_exchange_strong(armed, 0)) g_hold_armed = 1;
}

void hold_notifier() {
    if (std::this_thread::get_id() != g_notifier.load()) return;
    int armed = 1;
    if (!g_hold_armed.compare_exchange_strong(armed, 0)) return;
    g_cv_held = 1;
    // Until the waiter has begun destroying (it needs a moment on the other processor),
    // then a moment for the destroy itself, which the guard makes wait for us.
    if (spin_until(g_cv_destroying, 2000)) spin_until(g_cv_destroyed, 20);
}

TEST_F(ProtocolDirected, CondVarWaiterDestroysItDuringTheBroadcast) {
    int held = 0;
    for (int round = 0; round < 10; ++round) {
        g_cv_queued = 0, g_cv_destroying = 0, g_cv_destroyed = 0, g_cv_held = 0;
        g_claim_armed = 0, g_hold_armed = 0;
        coop::test_hooks::notify_before_claim = &arm_hold;
        coop::test_hooks::protect_before_publish = &hold_notifier;
        {  // the runtime ends before its hooks are unset
            coop::Runtime rt(coop::Options{.processors = 2, .scheduling = coop::Scheduling::global});
            rt.run([] {
                static coop::Mutex m;
                g_cv = new (g_cv_buf) coop::CondVar;
                static bool done;
                done = false;
                coop::Thread w = coop::spawn([] {
                    std::unique_lock<coop::Mutex> lock(m);
                    g_cv_queued = 1;
                    while (!done) g_cv->wait(m);
                    lock.unlock();
                    // Awake, and nobody waits on it any more: destroy it (allowed).
                    g_cv_destroying = 1;
                    std::destroy_at(g_cv);
                    std::memset(static_cast<void*>(g_cv_buf), 0x5a, sizeof g_cv_buf);
                    g_cv_destroyed = 1;
                });
                while (g_cv_queued.load() == 0) coop::yield();
                {
                    std::lock_guard<coop::Mutex> lock(m);  // the waiter's park enqueued it and unlocked
                    done = true;
                }
                // The other processor idle and parked, so that the wake-up goes through
                // notify_before_claim (we do not yield meanwhile).
                auto& parking = coop::internal::this_processor()->runtime->scheduler->parking();
                const auto end = std::chrono::steady_clock::now() + 2s;
                while (parking.parked() == 0 && std::chrono::steady_clock::now() < end) {
                }
                g_notifier = std::this_thread::get_id();
                g_claim_armed = 1;
                g_cv->notify_all();
                g_claim_armed = 0;
                g_hold_armed = 0;
                g_notifier = std::thread::id{};
                w.join();
            });
        }
        coop::test_hooks::notify_before_claim = nullptr;
        coop::test_hooks::protect_before_publish = nullptr;
        held += g_cv_held.load();
        EXPECT_EQ(g_cv_destroyed.load(), 1);
    }
    // The window must have been reached at least once, or the test tested nothing.
    EXPECT_GT(held, 0) << "the notifier was never held inside notify_all's loop";
}

// notify_all's fast return reads the wait queue's tail, then its head (Queue::empty): equal
// means empty. Read the other way round, the head can be the retired dummy that a waiter
// re-queued meanwhile as its own node (queue.hpp: a dequeued item carries the dummy it
// retired), so that the tail read afterwards equals it: an ABA that makes a queue holding
// waiters look empty. Here W1 and W2 wait on one CondVar for different predicates; N1 makes
// W2's true and broadcasts, and is held between the two loads (hook empty_between_loads)
// while N2's notify_one wakes W1, which finds its own predicate false and waits again.
// A broadcast must wake W2, which waited before it. P=2, work stealing.
std::atomic<int> g_w1_waits{0}, g_w2_waiting{0}, g_w2_done{0}, g_go_n2{0}, g_w1_rewaited{0}, g_n1_held{0};
std::atomic<int> g_n1_armed{0};
std::atomic<std::thread::id> g_n1{};

void hold_n1() {  // set before the workers start (every Queue::empty() calls it)
    if (std::this_thread::get_id() != g_n1.load()) return;
    int armed = 1;
    if (!g_n1_armed.compare_exchange_strong(armed, 0)) return;
    g_n1_held = 1;
    g_go_n2 = 1;
    spin_until(g_w1_rewaited, kStrandedSeconds * 1000);
}

TEST_F(ProtocolDirected, CondVarBroadcastWakesAWaiterQueuedBeforeIt) {
    for (auto* f : {&g_w1_waits, &g_w2_waiting, &g_w2_done, &g_go_n2, &g_w1_rewaited, &g_n1_held, &g_n1_armed})
        *f = 0;
    coop::test_hooks::empty_between_loads = &hold_n1;
    // Work stealing: a made-ready activity goes to a ring, not through a queue, so W1 still
    // holds the dummy its dequeue retired when it waits again (the global algorithm's ready
    // queue would hand W1 another node on the way).
    coop::Runtime rt(coop::Options{.processors = 2, .scheduling = coop::Scheduling::work_stealing});
    rt.run([] {
        static coop::Mutex m;
        static coop::CondVar cv;
        static bool p1, p2;
        p1 = p2 = false;
        coop::Thread w1 = coop::spawn([] {
            std::unique_lock<coop::Mutex> lock(m);
            while (!p1) {
                g_w1_waits.fetch_add(1);
                cv.wait(m);
            }
        });
        while (g_w1_waits.load() == 0) coop::yield();
        coop::Thread w2 = coop::spawn([] {
            std::unique_lock<coop::Mutex> lock(m);
            g_w2_waiting = 1;
            while (!p2) cv.wait(m);
            g_w2_done = 1;
        });
        while (g_w2_waiting.load() == 0) coop::yield();
        coop::Thread n2 = coop::spawn([] {
            while (g_go_n2.load() == 0) coop::yield();
            cv.notify_one();  // wakes W1, the queue's first
            while (g_w1_waits.load() < 2) coop::yield();
            m.lock();  // W1's second wait has enqueued it and unlocked
            m.unlock();
            g_w1_rewaited = 1;
        });
        {
            std::lock_guard<coop::Mutex> lock(m);  // both waiters queued
            p2 = true;
        }
        g_n1 = std::this_thread::get_id();
        g_n1_armed = 1;
        cv.notify_all();
        g_n1_armed = 0;
        g_n1 = std::thread::id{};
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(kStrandedSeconds);
        while (g_w2_done.load() == 0 && std::chrono::steady_clock::now() < end) coop::yield();
        if (g_w2_done.load() == 0)
            stranded("CondVarBroadcastWakesAWaiterQueuedBeforeIt: a waiter queued before notify_all was not "
                     "woken (the fast return saw the queue empty)");
        {
            std::lock_guard<coop::Mutex> lock(m);
            p1 = true;
        }
        cv.notify_all();
    });
    EXPECT_EQ(g_n1_held.load(), 1) << "the window was not reached";
}

// ---------------------------------------------------------------------------- Inbox

// A thread that is not a worker releases a semaphore that activity A waits on: release ->
// make_ready(A) -> submit_inbox (enqueue A, inbox_ready = true, notify_all). The worker
// drains the inbox only when it sees the flag. Held at the hook inbox_before_enqueue (the
// outsider, before its enqueue) until the worker has drained once: a flag stored before the
// enqueue lets the worker drain an empty inbox and clear the flag, and A is never run. The
// correct order sets no flag before the enqueue, so the worker does not drain and the hold
// ends after half a second. P=1; activity C sleeps 100 us in a loop so that the idle loop
// comes round (and looks at the flag) while the outsider is held.
std::atomic<int> g_parked{0}, g_drained{0}, g_outsider_held{0};
std::atomic<std::thread::id> g_outsider{};

TEST_F(ProtocolDirected, InboxFlagIsSetAfterTheEnqueue) {
    g_parked = 0, g_drained = 0, g_outsider_held = 0;
    coop::Runtime rt(coop::Options{.processors = 1});
    static coop::Semaphore sem(0);
    std::atomic<int> done{0}, stop{0};
    coop::test_hooks::semaphore_park_done = [] { g_parked = 1; };
    coop::test_hooks::inbox_after_drain = [] { g_drained = 1; };
    std::thread e([&] {
        spin_until(g_parked);  // A is queued on the semaphore
        g_outsider = std::this_thread::get_id();
        coop::test_hooks::inbox_before_enqueue = [] {
            if (std::this_thread::get_id() != g_outsider.load()) return;
            coop::test_hooks::inbox_before_enqueue = nullptr;
            g_drained = 0;
            g_outsider_held = 1;
            spin_until(g_drained, 500);  // a drain now found an empty inbox
        };
        sem.release();
        if (!spin_until(done, kStrandedSeconds * 1000))
            stranded("InboxFlagIsSetAfterTheEnqueue: the activity made ready from outside was never run "
                     "(stranded in the inbox: its flag was cleared by a drain before the enqueue)");
        stop = 1;
    });
    rt.run([&] {
        coop::Thread c = coop::spawn([&] {
            while (stop.load() == 0) coop::sleep_for(100us);
        });
        coop::Thread a = coop::spawn([&] {
            sem.acquire();
            done = 1;
        });
    });
    e.join();
    EXPECT_EQ(g_outsider_held.load(), 1);
}

// drain_inbox clears the flag, then dequeues. Held at the hook inbox_after_drain (the
// worker, its dequeues done: the last found nothing) while an outsider releases the
// semaphore that A waits on (enqueue A, flag, notify_all: the worker is not parked, so the
// notify is a no-op). A clear after the dequeues erases that flag: A stays in the inbox and
// the processor, with nothing else to do, parks for good. P=1. The drain is provoked by the
// outsider's spawn of an activity X (also through the inbox).
std::atomic<int> g_drain_armed{0}, g_drain_window{0}, g_released{0};

TEST_F(ProtocolDirected, InboxFlagIsClearedBeforeTheDrainLooks) {
    g_parked = 0, g_drain_armed = 0, g_drain_window = 0, g_released = 0;
    coop::Runtime rt(coop::Options{.processors = 1});
    static coop::Semaphore sem(0);
    std::atomic<int> done{0};
    coop::test_hooks::semaphore_park_done = [] { g_parked = 1; };
    coop::test_hooks::inbox_after_drain = [] {
        int armed = 1;
        if (!g_drain_armed.compare_exchange_strong(armed, 2)) return;  // once, when armed
        g_drain_window = 1;
        spin_until(g_released, kStrandedSeconds * 1000);  // the outsider's release returned
    };
    std::thread e([&] {
        spin_until(g_parked);  // A is queued on the semaphore
        g_drain_armed = 1;
        coop::Thread x = coop::spawn([] {});  // the inbox's next drain stops in the window
        if (!spin_until(g_drain_window, kStrandedSeconds * 1000)) stranded("the drain never came");
        sem.release();
        g_released = 1;
        if (!spin_until(done, kStrandedSeconds * 1000))
            stranded("InboxFlagIsClearedBeforeTheDrainLooks: the activity made ready from outside during a "
                     "drain was never run (its inbox flag cleared after the drain's look)");
        x.join();
    });
    rt.run([&] {
        coop::Thread a = coop::spawn([&] {
            sem.acquire();
            done = 1;
        });
    });
    e.join();
    EXPECT_EQ(g_drain_armed.load(), 2);
}

// ---------------------------------------------------------------------------- Timers

// The hook timer_woken reports each entry a poll wakes from the heap's top, numbered from 0
// in that poll: within one poll the deadlines must not decrease.
struct Woken {
    long long deadline_ns;
    int nth;
};
constexpr int kMaxWoken = 256;
Woken g_woken[kMaxWoken];
std::atomic<int> g_woken_count{0};

void record_woken(long long deadline_ns, int nth) {
    const int i = g_woken_count.fetch_add(1);
    if (i < kMaxWoken) g_woken[i] = Woken{deadline_ns, nth};
}

// Two sleepers at P=1, pushed before any poll (the activities run to their sleeps before
// the idle loop polls): a 1 ms one and a 40 ms one, the long one first. With the earlier
// deadline on top, the 1 ms sleeper is woken by a poll of its own; with the later one on
// top (a max-heap), the poll that finds the top not due stops there, and both are woken by
// one poll at 40 ms, the later deadline first.
TEST_F(ProtocolDirected, TimerHeapWakesTheEarliestDeadlineFirst) {
    for (int round = 0; round < 3; ++round) {
        g_woken_count = 0;
        coop::test_hooks::timer_woken = &record_woken;
        coop::Runtime rt(coop::Options{.processors = 1});
        rt.run([] {
            coop::Thread l = coop::spawn([] { coop::sleep_for(40ms); });
            coop::Thread s = coop::spawn([] { coop::sleep_for(1ms); });
            coop::Thread m = coop::spawn([] { coop::sleep_for(20ms); });
        });
        coop::test_hooks::timer_woken = nullptr;
        const int n = g_woken_count.load();
        ASSERT_EQ(n, 3) << "round " << round;
        for (int i = 1; i < n; ++i) {
            if (g_woken[i].nth == g_woken[i - 1].nth + 1) {
                EXPECT_LE(g_woken[i - 1].deadline_ns, g_woken[i].deadline_ns)
                    << "round " << round << ": one poll woke a later deadline before an earlier one "
                    << "(entries " << i - 1 << " and " << i << ")";
            }
        }
    }
}

// Two sleepers at P=1: 1 ms and 200 ms. The poll that wakes the first resets earliest_ns and
// must put back the second's deadline (the heap's new top); otherwise the idle processor
// parks with no timeout and the second sleeper is never woken.
TEST_F(ProtocolDirected, TimerPollRestoresTheNextDeadline) {
    coop_test::Watchdog dog("ProtocolDirected.TimerPollRestoresTheNextDeadline: a sleeper never woken "
                            "(earliest_ns not restored from the heap after a poll)",
                            kStrandedSeconds);
    coop::Runtime rt(coop::Options{.processors = 1});
    std::atomic<int> woken{0};
    rt.run([&] {
        coop::Thread l = coop::spawn([&] {
            coop::sleep_for(200ms);
            woken.fetch_add(1);
        });
        coop::Thread s = coop::spawn([&] {
            coop::sleep_for(1ms);
            woken.fetch_add(1);
        });
    });
    EXPECT_EQ(woken.load(), 2);
}

// 16 sleepers at P=1, deadlines 1..16 ms in a shuffled order, pushed before any poll: the
// first poll's root has many children, and pop_root's pairing must keep every one of them
// (a pair's second heap dropped is never woken: the run hangs). Three rounds.
TEST_F(ProtocolDirected, TimerPopKeepsEverySleeper) {
    coop_test::Watchdog dog("ProtocolDirected.TimerPopKeepsEverySleeper: sleepers never woken "
                            "(lost by the timer heap's pop)",
                            kStrandedSeconds);
    constexpr int kSleepers = 16;
    std::atomic<int> woken{0};
    coop::Runtime rt(coop::Options{.processors = 1});
    rt.run([&] {
        for (int r = 0; r < 3; ++r) {
            std::vector<coop::Thread> ts;
            for (int i = 0; i < kSleepers; ++i) {
                const int ms = 1 + (i * 7) % kSleepers;  // a permutation of 1..16
                ts.push_back(coop::spawn([&woken, ms] {
                    coop::sleep_for(std::chrono::milliseconds(ms));
                    woken.fetch_add(1);
                }));
            }
            for (auto& t : ts) t.join();
        }
    });
    EXPECT_EQ(woken.load(), 3 * kSleepers);
}

// ---------------------------------------------------------------------------- Quiescence

// Runtime::run returns when every activity started so far has finished: quiescent() sums
// `finished`, then `started`. Here the main thread's first look is held between its two
// reads (hook quiescent_between_reads) while M, still running, starts D, and D and C finish.
// Read in the code's order, `started` then counts D and M stays apart; read the other way
// round, the stale `started` (M, C, run's main R) equals the new `finished` (C, D, R) and run
// returns while M runs. M holds its processor without a coop call (so C, D and R end on the
// other one, whose idle loop's look, after their finishes, releases the hold); it ends when
// run has returned or a second after the hold. P=2, global queues.
std::atomic<int> g_q_stage{0}, g_m_running{0}, g_go{0}, g_c_done{0}, g_d_done{0}, g_r_done{0};
std::atomic<int> g_worker_saw{0}, g_hold_done{0}, g_run_returned{0}, g_m_done{0};
std::atomic<std::thread::id> g_main_thread{};

TEST_F(ProtocolDirected, RunWaitsWhileAChildStartsAndEndsBetweenItsReads) {
    for (auto* f : {&g_q_stage, &g_m_running, &g_go, &g_c_done, &g_d_done, &g_r_done, &g_worker_saw,
                    &g_hold_done, &g_run_returned, &g_m_done})
        *f = 0;
    g_main_thread = std::this_thread::get_id();
    coop::Runtime rt(coop::Options{.processors = 2, .scheduling = coop::Scheduling::global});
    coop::test_hooks::quiescent_between_reads = [] {
        if (std::this_thread::get_id() == g_main_thread.load()) {
            int stage = 0;
            if (!g_q_stage.compare_exchange_strong(stage, 1)) return;  // the first look only
            spin_until(g_m_running, 10000);
            g_go = 1;
            spin_until(g_worker_saw, 10000);
            g_hold_done = 1;
        } else if (g_go.load() && g_c_done.load() && g_d_done.load() && g_r_done.load()) {
            g_worker_saw = 1;  // a processor's look after C, D and R finished (and were counted)
        }
    };
    coop::Thread m = coop::spawn([] {
        g_m_running = 1;
        while (g_go.load() == 0) {
        }
        coop::Thread d = coop::spawn([] { g_d_done = 1; });
        spin_until(g_hold_done, 10000);
        const auto end = std::chrono::steady_clock::now() + 1s;
        while (g_run_returned.load() == 0 && std::chrono::steady_clock::now() < end) {
        }
        g_m_done = 1;
    });
    coop::Thread c = coop::spawn([] {
        while (g_d_done.load() == 0) coop::yield();
        g_c_done = 1;
    });
    rt.run([] { g_r_done = 1; });
    const int m_done = g_m_done.load();
    g_run_returned = 1;
    coop::test_hooks::quiescent_between_reads = nullptr;
    m.join();
    c.join();
    EXPECT_EQ(g_worker_saw.load(), 1) << "the window was not reached";
    EXPECT_EQ(m_done, 1) << "Runtime::run returned while an activity it waited for was still running";
}

// ---------------------------------------------------------------------------- errno

// errno belongs to the activity across a switch (docs/implicit.md): at P=1 (no migration,
// so errno's address is the same before and after) two activities set their own errno and
// yield to each other; each must read its own value back. Without the switch's restore,
// each reads the other's.
TEST_F(ProtocolDirected, ErrnoIsTheActivitysAcrossAYield) {
    coop::Runtime rt(coop::Options{.processors = 1});
    std::atomic<int> wrong{0};
    rt.run([&] {
        auto body = [&](int mine) {
            for (int i = 0; i < 200; ++i) {
                errno = mine;
                coop::yield();
                if (errno != mine) wrong.fetch_add(1);
            }
        };
        coop::Thread a = coop::spawn([&] { body(EDOM); });
        coop::Thread b = coop::spawn([&] { body(ERANGE); });
    });
    EXPECT_EQ(wrong.load(), 0) << "an activity read another's errno after a yield";
}

}  // namespace
