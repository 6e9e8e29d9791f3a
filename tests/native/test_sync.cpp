// test_sync.cpp — coop::Mutex, CondVar, Semaphore and join under contention: mutual
// exclusion, nothing lost, no lost wake-up (every wait under a watchdog).
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <vector>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"

using coop_test::scaled;
using coop_test::Watchdog;

class SyncP : public ::testing::TestWithParam<unsigned> {};

// Many more activities than processors hammer one mutex; the critical section checks that
// it is alone (an occupancy counter) and increments a plain counter.
TEST_P(SyncP, MutexHeavyContention) {
    Watchdog dog("MutexHeavyContention", 120);
    const int threads = 64;
    const long iters = scaled(20000, 40);
    coop::Mutex m;
    long counter = 0;
    std::atomic<int> inside{0};
    std::atomic<long> violations{0};
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int t = 0; t < threads; ++t)
            ts.push_back(coop::spawn([&, t] {
                for (long i = 0; i < iters; ++i) {
                    if ((i + t) % 3 == 0) {
                        while (!m.try_lock()) coop::yield();
                    } else {
                        m.lock();
                    }
                    if (inside.fetch_add(1) != 0) violations.fetch_add(1);
                    ++counter;
                    if (i % 64 == 0) coop::yield();  // hold it across a switch now and then
                    inside.fetch_sub(1);
                    m.unlock();
                }
            }));
    });
    EXPECT_EQ(violations.load(), 0);
    EXPECT_EQ(counter, threads * iters);
}

// Bounded buffer ping-pong with Mutex + CondVar: every item arrives exactly once, in order
// per producer.
TEST_P(SyncP, BoundedBufferMutexCondVar) {
    Watchdog dog("BoundedBufferMutexCondVar", 120);
    const long items = scaled(1000000, 50);
    const int producers = 2, consumers = 3;
    const std::size_t cap = 4;
    coop::Mutex m;
    coop::CondVar not_full, not_empty;
    std::deque<long> buf;
    std::vector<long> last_seen(producers, -1);
    long received = 0, sum = 0;
    bool order_ok = true;
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int p = 0; p < producers; ++p)
            ts.push_back(coop::spawn([&, p] {
                for (long i = p; i < items; i += producers) {
                    std::unique_lock<coop::Mutex> lock(m);
                    not_full.wait(m, [&] { return buf.size() < cap; });
                    buf.push_back(i);
                    not_empty.notify_one();
                }
            }));
        for (int c = 0; c < consumers; ++c)
            ts.push_back(coop::spawn([&] {
                for (;;) {
                    std::unique_lock<coop::Mutex> lock(m);
                    not_empty.wait(m, [&] { return !buf.empty() || received == items; });
                    if (buf.empty()) {
                        not_empty.notify_all();  // let the other consumers see the end
                        return;
                    }
                    const long v = buf.front();
                    buf.pop_front();
                    const int p = int(v % producers);
                    if (v <= last_seen[p]) order_ok = false;
                    last_seen[p] = v;
                    ++received;
                    sum += v;
                    if (received == items) not_empty.notify_all();
                    not_full.notify_one();
                }
            }));
    });
    EXPECT_EQ(received, items);
    EXPECT_EQ(sum, items * (items - 1) / 2);
    EXPECT_TRUE(order_ok);
}

// Ping-pong of a token between two activities with two Semaphores, plus a bounded buffer
// guarded by counting semaphores.
TEST_P(SyncP, SemaphorePingPongAndBuffer) {
    Watchdog dog("SemaphorePingPongAndBuffer", 120);
    const long rounds = scaled(1000000, 50);
    coop::Semaphore ping(0), pong(0);
    long a = 0, b = 0;
    bool alternated = true;
    {
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        coop::Thread t1 = coop::spawn([&] {
            for (long i = 0; i < rounds; ++i) {
                ping.acquire();
                ++a;
                pong.release();
            }
        });
        coop::Thread t2 = coop::spawn([&] {
            for (long i = 0; i < rounds; ++i) {
                ping.release();
                pong.acquire();
                ++b;
                if (a != b) alternated = false;  // strict alternation
            }
        });
    });
    }
    EXPECT_EQ(a, rounds);
    EXPECT_EQ(b, rounds);
    EXPECT_TRUE(alternated);

    // Counting semaphores: slots/items around a ring of 8, 4 producers, 4 consumers.
    const long per = scaled(100000, 50);
    coop::Semaphore slots(8), filled(0);
    coop::Mutex ring_m;
    std::deque<long> ring;
    std::atomic<long> got{0}, total{0};
    coop::Runtime rt2({.processors = GetParam()});
    rt2.run([&] {
        std::vector<coop::Thread> ts;
        for (int p = 0; p < 4; ++p)
            ts.push_back(coop::spawn([&] {
                for (long i = 1; i <= per; ++i) {
                    slots.acquire();
                    {
                        std::lock_guard<coop::Mutex> g(ring_m);
                        ring.push_back(i);
                    }
                    filled.release();
                }
            }));
        for (int c = 0; c < 4; ++c)
            ts.push_back(coop::spawn([&] {
                for (long i = 0; i < per; ++i) {
                    filled.acquire();
                    long v;
                    {
                        std::lock_guard<coop::Mutex> g(ring_m);
                        v = ring.front();
                        ring.pop_front();
                    }
                    slots.release();
                    got.fetch_add(1);
                    total.fetch_add(v);
                }
            }));
    });
    EXPECT_EQ(got.load(), 4 * per);
    EXPECT_EQ(total.load(), 4 * per * (per + 1) / 2);
}

// notify_all wakes every waiter (repeatedly: a waiter left behind hangs the watchdog).
TEST_P(SyncP, NotifyAllWakesEveryWaiter) {
    Watchdog dog("NotifyAllWakesEveryWaiter", 120);
    const int waiters = 100;
    const int rounds = int(scaled(200, 10));
    coop::Mutex m;
    coop::CondVar cv, arrived_cv;
    int generation = 0, arrived = 0;
    std::atomic<long> wakeups{0};
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int w = 0; w < waiters; ++w)
            ts.push_back(coop::spawn([&] {
                for (int r = 1; r <= rounds; ++r) {
                    std::unique_lock<coop::Mutex> lock(m);
                    if (++arrived == waiters) arrived_cv.notify_one();
                    cv.wait(m, [&] { return generation >= r; });
                    wakeups.fetch_add(1);
                }
            }));
        for (int r = 1; r <= rounds; ++r) {
            std::unique_lock<coop::Mutex> lock(m);
            arrived_cv.wait(m, [&] { return arrived == waiters; });  // all are waiting
            arrived = 0;
            generation = r;
            cv.notify_all();
        }
    });
    EXPECT_EQ(wakeups.load(), long(waiters) * rounds);
}

// join from many activities at once on many targets, with targets finishing before and
// after the join starts.
TEST_P(SyncP, JoinRaces) {
    Watchdog dog("JoinRaces", 120);
    const int n = int(scaled(20000, 20));
    std::atomic<int> done{0};
    coop::Runtime rt({.processors = GetParam()});
    rt.run([&] {
        std::vector<coop::Thread> joiners;
        for (int i = 0; i < n; ++i) {
            coop::Thread target = coop::spawn([&, i] {
                for (int k = 0; k < i % 3; ++k) coop::yield();
                done.fetch_add(1);
            });
            joiners.push_back(coop::spawn([t = std::move(target), i]() mutable {
                if (i % 2) coop::yield();
                t.join();
            }));
        }
    });
    EXPECT_EQ(done.load(), n);
}

// A thread that is not a worker (here the test's main thread) unlocks a mutex that
// activities are parked on, and notifies a condition they wait for: it has no hazard-pointer
// slot of its own (this aborted: "a queue was used by a thread that did not call
// bind_processor()").
TEST_P(SyncP, WakeFromANonWorkerThread) {
    Watchdog dog("WakeFromANonWorkerThread", 120);
    coop::Runtime rt({.processors = GetParam()});
    coop::Mutex m;
    coop::CondVar cv;
    std::atomic<int> parked{0};
    int entered = 0;
    bool go = false;
    for (int round = 0; round < 20; ++round) {
        m.lock();  // outside any activity
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 4; ++i)
            ts.push_back(coop::spawn([&] {
                parked.fetch_add(1);
                m.lock();  // parks: main holds it
                ++entered;
                while (!go) cv.wait(m);
                m.unlock();
            }));
        while (parked.load() < 4 * (round + 1)) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));  // let them park
        m.unlock();  // wakes a parked activity from this thread
        while (true) {  // all four entered and wait on cv (or passed it)
            m.lock();
            const bool all = entered == 4 * (round + 1);
            if (all) go = true;
            m.unlock();
            if (all) break;
            std::this_thread::yield();
        }
        m.lock();
        cv.notify_all();  // from this thread too
        m.unlock();
        for (auto& t : ts) t.join();
        m.lock();
        go = false;
        m.unlock();
    }
    EXPECT_EQ(entered, 80);
}

// 1 processor, one per core, and four per core (processors outnumbering CPUs: Mutex's spin
// gives the core back there, sync.cpp; the invariants must hold all the same).
INSTANTIATE_TEST_SUITE_P(Processors, SyncP,
                         ::testing::Values(1u, coop_test::many_processors(), 4 * coop_test::many_processors()));
