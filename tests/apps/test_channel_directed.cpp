// test_channel_directed.cpp — directed interleaving tests of coop::Channel's park / hand-off
// / close protocol (coop/include/coop/channel.hpp). Each test stops one activity inside a
// protocol window with a COOP_HOOK (this binary links coop_hooked) and lets an activity on
// the other processor act in it. A lost wake-up hangs the run: the watchdog turns it into a
// failure.
//
// Which protocol step each test catches (each was seen failing with that step removed):
//   AWakerBeforeTheSwitchLeavesTheWakeUpToTheFinalizer  park() / wake(): the lock is not
//                                           held across the switch; a waker that finds the
//                                           waiter not yet published as parked (kWaiting)
//                                           only stores the outcome, and the parking
//                                           finalizer, whose CAS then fails, makes the
//                                           waiter ready (without the finalizer's wake-up:
//                                           a hang; with a waker that always makes it
//                                           ready: it runs before its finalizer is done)
//   HandOffMovesTheValueBeforeWakingTheWaiter  send(): the value is moved into the parked
//                                           receiver before its state is published and it
//                                           is made ready (else it returns without it)
//   RendezvousSenderWaitsUntilTheReceiverTookTheValue  recv() from a parked sender: the
//                                           sender is woken only after its value was moved
//   CloseMarksTheChannelClosedUnderTheLock  close(): closed_ is set in the same critical
//                                           section that detaches the waiters (else a
//                                           receiver that parks in between sleeps for ever)
// and one stress test, EveryValueOnceWithManyParkedPeersOnOversubscribedProcessors: many
// parked senders and receivers at four processors per core, every value exactly once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "coop/channel.hpp"
#include "coop/coop.hpp"
#include "tests/support/watchdog.hpp"

namespace {

std::atomic<int> g_a{0}, g_b{0}, g_c{0}, g_d{0}, g_e{0}, g_f{0};

void reset() { g_a = 0, g_b = 0, g_c = 0, g_d = 0, g_e = 0, g_f = 0; }

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
    h::channel_park_switched = nullptr;
    h::channel_handoff_dequeued = nullptr;
    h::channel_close_detached = nullptr;
    h::channel_lock_contended = nullptr;
}

using Chan = coop::Channel<long>;

// The channel of a test's current round and what its receiver got (the hooks and the
// activities are capture-less lambdas, so they reach them here).
Chan* g_ch = nullptr;
std::optional<long> g_got;

class ChannelDirected : public ::testing::Test {
  protected:
    void SetUp() override { reset(); }
    void TearDown() override { clear_hooks(); }

    // each_capacity — runs `round(rt, capacity)` for capacities 0 and 1, each with fresh
    // flags and hooks, an empty g_got, a new two-processor runtime and g_ch pointing at a
    // new channel of that capacity.
    template <class Round>
    void each_capacity(Round round) {
        for (std::size_t cap : {0u, 1u}) {
            reset();
            clear_hooks();
            g_got.reset();
            coop::Runtime rt(two());
            Chan chan(cap);
            g_ch = &chan;
            round(rt, cap);
            clear_hooks();
        }
    }

  private:
    coopbench::test::Watchdog dog_{std::string("ChannelDirected.") +
                                       ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                                   20};
};

// A receiver parks on an empty channel; its processor runs the parking finalizer and stops
// in it before publishing kParked (the receiver is in the list and switched out). A sender
// on the other processor sends meanwhile: it must get through (the lock is not held across
// the switch; else: a hang, the watchdog fires), must not make the receiver ready (it is not
// published as parked: the receiver must not return while the finalizer is held), and the
// finalizer, whose CAS then fails, must make the receiver ready with the value (else: a
// hang).
TEST_F(ChannelDirected, AWakerBeforeTheSwitchLeavesTheWakeUpToTheFinalizer) {
    each_capacity([](coop::Runtime& rt, std::size_t cap) {
        coop::test_hooks::channel_park_switched = [] {
            coop::test_hooks::channel_park_switched = nullptr;
            g_a = 1;          // the receiver is in the list and switched out
            spin_until(g_c);  // the sender's send returned (a held lock: hang, the watchdog)
            g_d = spin_until(g_f, kWindowMs) ? 1 : 0;  // did the receiver return meanwhile?
        };
        rt.run([] {
            // The sender spins (never yields) on one processor, so the receiver runs on the
            // other and its park finds nothing else to run: the finalizer runs in that
            // processor's idle loop, not in front of the sender.
            coop::Thread s = coop::spawn([] {
                g_e = 1;
                spin_until(g_a);
                g_ch->send(7);
                g_c = 1;
            });
            // Spin, not yield: a yield asks no idle processor for help (Negele et al.,
            // Fig. 2), so if this processor picked the sender, which never yields, and the
            // other had parked, a yielding main would wait behind it for ever. Spinning keeps
            // this processor, so the sender's spawn, which does wake a parked processor, runs
            // it on the other.
            spin_until(g_e);
            coop::Thread r = coop::spawn([] {
                g_got = g_ch->recv();
                g_f = 1;
            });
        });
        EXPECT_EQ(g_d.load(), 0) << "capacity " << cap
                                 << ": the receiver ran before its parking finalizer published it";
        EXPECT_EQ(g_got, std::optional<long>(7)) << "capacity " << cap;
    });
}

// A receiver is parked; the sender dequeues it and releases the lock, and stops there (before
// moving the value). The receiver must not return meanwhile, and must then get the value.
TEST_F(ChannelDirected, HandOffMovesTheValueBeforeWakingTheWaiter) {
    each_capacity([](coop::Runtime& rt, std::size_t cap) {
        coop::test_hooks::channel_park_switched = [] {
            coop::test_hooks::channel_park_switched = nullptr;
            g_a = 1;  // the receiver is in the list and switched out
        };
        coop::test_hooks::channel_handoff_dequeued = [] {
            coop::test_hooks::channel_handoff_dequeued = nullptr;
            g_d = spin_until(g_c, kWindowMs) ? 1 : 0;  // did the receiver return meanwhile?
        };
        rt.run([] {
            coop::Thread r = coop::spawn([] {
                g_got = g_ch->recv();
                g_c = 1;
            });
            coop::Thread s = coop::spawn([] {
                wait_for(g_a);
                g_ch->send(7);
            });
        });
        EXPECT_EQ(g_d.load(), 0) << "capacity " << cap << ": the receiver returned before the value was moved";
        EXPECT_EQ(g_got, std::optional<long>(7)) << "capacity " << cap;
    });
}

// Unbuffered: a sender is parked with its value; a receiver dequeues it and stops before
// moving the value. The sender's send must not return meanwhile (its value lives on its
// stack), and the receiver must then get the value.
TEST_F(ChannelDirected, RendezvousSenderWaitsUntilTheReceiverTookTheValue) {
    coop::Runtime rt(two());
    static Chan ch(0);
    static std::optional<long> got;
    coop::test_hooks::channel_park_switched = [] {
        coop::test_hooks::channel_park_switched = nullptr;
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
    coop::test_hooks::channel_park_switched = [] {
        coop::test_hooks::channel_park_switched = nullptr;
        g_a = 1;  // the early receiver is parked
    };
    coop::test_hooks::channel_close_detached = [] {
        coop::test_hooks::channel_close_detached = nullptr;
        g_b = 1;          // close is in its window
        spin_until(g_c);  // the late receiver returned (else: hang, the watchdog fires)
    };
    rt.run([] {
        // The late receiver waits by spinning, on the other processor: the close stops in its
        // hook (spinning, never yielding) until the late receiver returned, so the two must
        // not share a processor. Main spins until it runs (a yield would wake no parked
        // processor: Negele et al., Fig. 2), so the spawn's wake-up puts it on the other.
        coop::Thread late_r = coop::spawn([] {
            g_e = 1;
            spin_until(g_b);
            late = ch.recv();
            g_c = 1;
        });
        spin_until(g_e);
        // The early receiver runs on main's processor: main yields to it until it parked
        // (it is in this processor's queue, so the yield runs it), then closes.
        coop::Thread r1 = coop::spawn([] { early = ch.recv(); });
        wait_for(g_a);
        ch.close();
    });
    EXPECT_EQ(early, std::nullopt);
    EXPECT_EQ(late, std::nullopt);
}

// ChannelLock: many OS threads (four per core) and then many activities on processors
// outnumbering the cores (its oversubscribed path: long waits yield the core) increment a
// plain counter under the lock: nothing is lost (a broken exclusion loses increments, and
// TSan reports the race), and every contended caller gets through (else: the watchdog).
TEST_F(ChannelDirected, ChannelLockExcludesUnderContention) {
    const unsigned cores = std::thread::hardware_concurrency() < 2 ? 2 : std::thread::hardware_concurrency();
    constexpr long kRounds = coopbench::test::sanitized ? 2000 : 20000;
    static coop::internal::ChannelLock lock;
    static long counter;
    static std::atomic<int> contended;
    counter = 0;
    contended = 0;
    coop::test_hooks::channel_lock_contended = [] { contended.fetch_add(1, std::memory_order_relaxed); };
    // critical — a critical section long enough (a few pauses) for callers to meet in it.
    static constexpr auto critical = [] {
        lock.lock();
        const long c = counter;
        for (int k = 0; k < 8; ++k) coop::cpu_relax();
        counter = c + 1;
        lock.unlock();
    };
    // The lock is held until a caller found it held (the hook), so the slow path runs at
    // least once whatever the OS's scheduling.
    lock.lock();
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4 * cores; ++t)
        threads.emplace_back([] {
            for (long i = 0; i < kRounds; ++i) critical();
        });
    while (contended.load() == 0) std::this_thread::yield();
    lock.unlock();
    for (auto& t : threads) t.join();
    EXPECT_EQ(counter, static_cast<long>(4 * cores) * kRounds) << "OS threads";
    EXPECT_GT(contended.load(), 0) << "OS threads never met in the lock: the slow path was not tested";
    contended = 0;

    counter = 0;
    coop::Runtime rt(coop::Options{.processors = 4 * cores});
    rt.run([cores] {
        lock.lock();  // held until an activity on another processor found it held (as above)
        std::vector<coop::Thread> activities;
        for (unsigned t = 0; t < 8 * cores; ++t)
            activities.push_back(coop::spawn([] {
                for (long i = 0; i < kRounds; ++i) {
                    critical();
                    if (i % 64 == 0) coop::yield();
                }
            }));
        spin_until(contended);  // spin, not yield: the others run on the other processors
        lock.unlock();
        for (auto& a : activities) a.join();
    });
    EXPECT_EQ(counter, static_cast<long>(8 * cores) * kRounds) << "activities on oversubscribed processors";
    EXPECT_GT(contended.load(), 0) << "activities never met in the lock: the slow path was not tested";
}

// ChannelLock: the holder keeps the lock far longer than the contended caller's backoff
// (which then waits by yielding its OS thread); once released, the caller gets it.
TEST_F(ChannelDirected, ChannelLockContendedCallerGetsItAfterALongHold) {
    static coop::internal::ChannelLock lock;
    coop::test_hooks::channel_lock_contended = [] { g_a = 1; };
    lock.lock();
    std::thread contender([] {
        lock.lock();
        g_b = 1;
        lock.unlock();
    });
    spin_until(g_a);  // the contender is in lock_slow
    std::this_thread::sleep_for(std::chrono::milliseconds(kWindowMs));
    EXPECT_EQ(g_b.load(), 0) << "the contender got a held lock";
    lock.unlock();
    contender.join();
    EXPECT_EQ(g_b.load(), 1);
}

// Channel: the buffer's indices wrap around (head_ + count_ past the capacity) in FIFO
// order, for capacities 1 to 5, with the buffer full and refilled from parked senders.
TEST_F(ChannelDirected, BufferWrapsAroundInFifoOrder) {
    for (std::size_t cap = 1; cap <= 5; ++cap) {
        coop::Runtime rt(two());
        static Chan* ch;
        static std::vector<long> got;
        Chan chan(cap);
        ch = &chan;
        got.clear();
        rt.run([] {
            coop::Thread s = coop::spawn([] {
                for (long i = 0; i < 100; ++i) ch->send(i);
                ch->close();
            });
            coop::Thread r = coop::spawn([] {
                while (std::optional<long> v = ch->recv()) {
                    got.push_back(*v);
                    if (got.size() % 7 == 0) coop::yield();  // let the buffer fill and senders park
                }
            });
        });
        ASSERT_EQ(got.size(), 100u) << "capacity " << cap;
        for (long i = 0; i < 100; ++i) EXPECT_EQ(got[static_cast<std::size_t>(i)], i) << "capacity " << cap;
    }
}

// Channel: a capacity its 32-bit indices cannot hold is refused.
TEST(ChannelCapacity, AboveTheIndexRangeIsRefused) {
    if constexpr (sizeof(std::size_t) > 4) {
        EXPECT_THROW(coop::Channel<char>(std::size_t{1} << 33), std::length_error);
    }
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

// A stress test of the park / wake race: many senders and receivers park on one channel
// while processors outnumber the cores (four per core), so a waker often reaches a waiter
// that is still switching out (the state word's kWaiting case, which the directed test
// above stops in) or whose processor's OS thread the OS preempted. Every value must arrive
// exactly once (a waiter made ready twice runs twice; a lost wake-up hangs: the watchdog).
TEST_F(ChannelDirected, EveryValueOnceWithManyParkedPeersOnOversubscribedProcessors) {
    const unsigned cores = std::thread::hardware_concurrency() < 2 ? 2 : std::thread::hardware_concurrency();
    constexpr int kSenders = 24, kReceivers = 24;
    constexpr long kPerSender = coopbench::test::sanitized ? 300 : 3000;
    constexpr long kTotal = kSenders * kPerSender;
    for (coop::Scheduling scheduling :
         {coop::Scheduling::global, coop::Scheduling::work_stealing, coop::Scheduling::parasail}) {
        for (std::size_t cap : {0u, 1u, 4u}) {
            static Chan* ch;
            static std::atomic<int>* seen;
            std::unique_ptr<std::atomic<int>[]> counts(new std::atomic<int>[kTotal]());
            seen = counts.get();
            Chan chan(cap);
            ch = &chan;
            coop::Runtime rt(coop::Options{.processors = 4 * cores, .scheduling = scheduling});
            rt.run([] {
                std::vector<coop::Thread> threads;
                for (int r = 0; r < kReceivers; ++r)
                    threads.push_back(coop::spawn([] {
                        while (std::optional<long> v = ch->recv()) seen[*v].fetch_add(1, std::memory_order_relaxed);
                    }));
                std::vector<coop::Thread> senders;
                for (int s = 0; s < kSenders; ++s)
                    senders.push_back(coop::spawn([s] {
                        for (long i = 0; i < kPerSender; ++i) ch->send(s * kPerSender + i);
                    }));
                for (auto& t : senders) t.join();
                ch->close();
                for (auto& t : threads) t.join();
            });
            long wrong = 0;
            for (long v = 0; v < kTotal; ++v) wrong += counts[v].load() != 1;
            EXPECT_EQ(wrong, 0) << "scheduling " << static_cast<int>(scheduling) << ", capacity " << cap
                                << ": values not received exactly once";
        }
    }
}

}  // namespace
