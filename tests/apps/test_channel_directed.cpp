// test_channel_directed.cpp — directed interleaving tests of coop::Channel's park / hand-off
// / close protocol (runtimes/native/channel.hpp). Each test stops one activity inside a
// protocol window with a COOP_HOOK (this binary links coop_hooked) and lets an activity on
// the other processor act in it. A lost wake-up hangs the run: the watchdog turns it into a
// failure.
//
// Which protocol step each test catches (each was seen failing with that step removed):
//   ParkReleasesTheLockOnlyAfterTheSwitch   park(): the lock is released by the suspend's
//                                           finalizer, not before the switch (else a sender
//                                           make_ready()s a receiver that still runs)
//   HandOffMovesTheValueBeforeWakingTheWaiter  send(): the value is moved into the parked
//                                           receiver before its state is published and it
//                                           is made ready (else it returns without it)
//   RendezvousSenderWaitsUntilTheReceiverTookTheValue  recv() from a parked sender: the
//                                           sender is woken only after its value was moved
//   CloseMarksTheChannelClosedUnderTheLock  close(): closed_ is set in the same critical
//                                           section that detaches the waiters (else a
//                                           receiver that parks in between sleeps for ever)
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "runtimes/native/channel.hpp"
#include "runtimes/native/coop.hpp"
#include "tests/support/watchdog.hpp"

namespace {

std::atomic<int> g_a{0}, g_b{0}, g_c{0}, g_d{0}, g_e{0};

void reset() { g_a = 0, g_b = 0, g_c = 0, g_d = 0, g_e = 0; }

// spin_until — spins until `f` is non-zero; false after `ms` milliseconds (< 0: never).
bool spin_until(const std::atomic<int>& f, int ms = -1) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (f.load() == 0) {
        if (ms >= 0 && std::chrono::steady_clock::now() > end) return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    return true;
}

// wait_for — an activity waits until `f` is non-zero, yielding (its processor runs the others).
void wait_for(const std::atomic<int>& f) {
    while (f.load() == 0) coop::yield();
}

// kWindowMs — how long a hook holds its window open for a partner that must NOT get
// through it; a correct channel never lets it, however long. (A partner that must get
// through waits without a limit: the watchdog catches a hang.)
constexpr int kWindowMs = coopbench::test::sanitized ? 600 : 200;

coop::Options two() { return coop::Options{.processors = 2}; }

void clear_hooks() {
    namespace h = coop::test_hooks;
    h::channel_park_before_unlock = nullptr;
    h::channel_handoff_dequeued = nullptr;
    h::channel_close_detached = nullptr;
    h::channel_lock_contended = nullptr;
}

class ChannelDirected : public ::testing::Test {
  protected:
    void SetUp() override { reset(); }
    void TearDown() override { clear_hooks(); }

  private:
    coopbench::test::Watchdog dog_{std::string("ChannelDirected.") +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                   20};
};

using Chan = coop::Channel<long>;

// A receiver parks on an empty channel; while its processor runs the parking finalizer (the
// receiver is in the list and switched out, the lock not yet released), a sender on the
// other processor tries to send: it must find the lock held (channel_lock_contended) and
// not get through (it would dequeue and make_ready the receiver, which a lock released
// before the switch would allow while the receiver still runs). The hook waits for either
// outcome, so the test does not depend on timing.
TEST_F(ChannelDirected, ParkReleasesTheLockOnlyAfterTheSwitch) {
    coop::Runtime rt(two());
    static Chan ch(0);
    static std::optional<long> got;
    coop::test_hooks::channel_lock_contended = [] {
        coop::test_hooks::channel_lock_contended = nullptr;
        g_b = 1;  // the sender found the lock held
    };
    coop::test_hooks::channel_park_before_unlock = [] {
        coop::test_hooks::channel_park_before_unlock = nullptr;
        g_a = 1;  // the receiver is parking
        while (g_b.load() == 0 && g_c.load() == 0) {
        }
        g_d = g_c.load();  // the sender got through while the park held the lock
    };
    rt.run([] {
        // The sender spins (never yields) on one processor, so the receiver runs on the
        // other and its park finds nothing else to run: the finalizer runs in that
        // processor's idle loop, not in front of the sender.
        coop::Thread s = coop::spawn([] {
            g_e = 1;
            spin_until(g_a);
            ch.send(7);
            g_c = 1;
        });
        // Spin, not yield: a yield asks no idle processor for help (Negele et al., Fig. 2), so
        // if this processor picked the sender, which never yields, and the other had parked,
        // a yielding main would wait behind it for ever. Spinning keeps this processor, so
        // the sender's spawn, which does wake a parked processor, runs it on the other.
        spin_until(g_e);
        coop::Thread r = coop::spawn([] { got = ch.recv(); });
    });
    EXPECT_EQ(g_d.load(), 0) << "a sender completed while the receiver's park still held the lock";
    EXPECT_EQ(g_b.load(), 1) << "the sender never found the lock held";
    EXPECT_EQ(got, std::optional<long>(7));
}

// A receiver is parked; the sender dequeues it and releases the lock, and stops there (before
// moving the value). The receiver must not return meanwhile, and must then get the value.
TEST_F(ChannelDirected, HandOffMovesTheValueBeforeWakingTheWaiter) {
    for (std::size_t cap : {0u, 1u}) {
        reset();
        coop::Runtime rt(two());
        static Chan* ch;
        Chan chan(cap);
        ch = &chan;
        static std::optional<long> got;
        got.reset();
        coop::test_hooks::channel_park_before_unlock = [] {
            coop::test_hooks::channel_park_before_unlock = nullptr;
            g_a = 1;  // the receiver is parked (the sender then waits for the lock)
        };
        coop::test_hooks::channel_handoff_dequeued = [] {
            coop::test_hooks::channel_handoff_dequeued = nullptr;
            g_d = spin_until(g_c, kWindowMs) ? 1 : 0;  // did the receiver return meanwhile?
        };
        rt.run([] {
            coop::Thread r = coop::spawn([] {
                got = ch->recv();
                g_c = 1;
            });
            coop::Thread s = coop::spawn([] {
                wait_for(g_a);
                ch->send(7);
            });
        });
        EXPECT_EQ(g_d.load(), 0) << "capacity " << cap << ": the receiver returned before the value was moved";
        EXPECT_EQ(got, std::optional<long>(7)) << "capacity " << cap;
        clear_hooks();
    }
}

// Unbuffered: a sender is parked with its value; a receiver dequeues it and stops before
// moving the value. The sender's send must not return meanwhile (its value lives on its
// stack), and the receiver must then get the value.
TEST_F(ChannelDirected, RendezvousSenderWaitsUntilTheReceiverTookTheValue) {
    coop::Runtime rt(two());
    static Chan ch(0);
    static std::optional<long> got;
    coop::test_hooks::channel_park_before_unlock = [] {
        coop::test_hooks::channel_park_before_unlock = nullptr;
        g_a = 1;  // the sender is parked
    };
    coop::test_hooks::channel_handoff_dequeued = [] {
        coop::test_hooks::channel_handoff_dequeued = nullptr;
        g_d = spin_until(g_c, kWindowMs) ? 1 : 0;  // did the sender return meanwhile?
    };
    rt.run([] {
        coop::Thread s = coop::spawn([] {
            long v = 11;
            ch.send(v);
            g_c = 1;
        });
        coop::Thread r = coop::spawn([] {
            wait_for(g_a);
            got = ch.recv();
        });
    });
    EXPECT_EQ(g_d.load(), 0) << "the sender returned before the receiver took its value";
    EXPECT_EQ(got, std::optional<long>(11));
}

// close() has detached the parked waiters and released the lock, and stops before waking
// them. A receiver that arrives now on the other processor must see the channel closed and
// return nullopt (if it parked, nobody would ever wake it: the watchdog fires), and the
// receiver parked before the close must be woken with nullopt too.
TEST_F(ChannelDirected, CloseMarksTheChannelClosedUnderTheLock) {
    coop::Runtime rt(two());
    static Chan ch(1);
    static std::optional<long> early{5}, late{5};
    coop::test_hooks::channel_park_before_unlock = [] {
        coop::test_hooks::channel_park_before_unlock = nullptr;
        g_a = 1;  // the early receiver is parked
    };
    coop::test_hooks::channel_close_detached = [] {
        coop::test_hooks::channel_close_detached = nullptr;
        g_b = 1;          // close is in its window
        spin_until(g_c);  // the late receiver returned (else: hang, the watchdog fires)
    };
    rt.run([] {
        coop::Thread r1 = coop::spawn([] { early = ch.recv(); });
        coop::Thread late_r = coop::spawn([] {
            wait_for(g_b);
            late = ch.recv();
            g_c = 1;
        });
        coop::Thread closer = coop::spawn([] {
            wait_for(g_a);
            ch.close();
        });
    });
    EXPECT_EQ(early, std::nullopt);
    EXPECT_EQ(late, std::nullopt);
}

// A caller outside coop (an OS thread, no activity) parks by polling its record: an
// activity's send reaches it (wake() stores the state and makes no activity ready).
TEST_F(ChannelDirected, ACallerOutsideCoopReceivesFromAnActivity) {
    coop::Runtime rt(two());
    static Chan ch(0);
    std::optional<long> got;
    std::thread outside([&] { got = ch.recv(); });
    rt.run([] { ch.send(3); });
    outside.join();
    EXPECT_EQ(got, std::optional<long>(3));
}

}  // namespace
