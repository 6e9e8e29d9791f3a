// test_sync_directed.cpp — directed interleaving tests for the wake-up paths of coop's
// Mutex, CondVar and Semaphore (sync.cpp) and for destroying a primitive right after its
// last waiter was woken. Each test stops a thread inside a protocol window with a COOP_HOOK
// (config.hpp; this binary links coop_hooked) and lets another processor act in it. A lost
// wake-up hangs the run: the watchdog turns that into a failure within seconds.
//
// Which deleted line each test catches (see docs/native-runtime.md):
//   MutexUnlockBeforeTheWaiterIsQueued   Mutex::park's `s == 0 -> wake_one()` re-check
//   MutexRelockBeforeTheWaiterRechecks   Mutex::park's CAS 1 -> 2 (holder told of waiters)
//   SemaphoreReleaseBeforeTheWaiterIsQueued  Semaphore::park's settle() after the enqueue
//   SemaphoreSettleMissesTheWaiter       settle()'s re-check of the queue after giving back
//   CondVarNotifyWhileTheWaiterParks     CondVar::park's enqueue before the unlock
//   CondVarDestroyedRightAfterBroadcast  the wait queue's guard in CondVar (defect 3; ASan)
//   MutexSpinnerGivesTheCoreBackOnlyWhenProcessorsOutnumberCpus  Mutex::lock_slow's
//                                        sched_yield for the long waits of its backoff when
//                                        processors outnumber the usable CPUs (a holder
//                                        preempted by the OS needs the core), and pauses
//                                        otherwise
#include <gtest/gtest.h>

#include <sched.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"

namespace {

std::atomic<int> g_a{0}, g_b{0}, g_c{0}, g_d{0};
// g_partner — the activity that acts inside the window is running (on the other processor:
// the waiter blocks only after this, so the hook, which runs on the waiter's processor,
// never holds up the partner).
std::atomic<int> g_partner{0};

void reset() {
    g_a = 0, g_b = 0, g_c = 0, g_d = 0, g_partner = 0;
}

// spin_until — spins until `f` is non-zero; false after `ms` milliseconds (< 0: never).
bool spin_until(const std::atomic<int>& f, int ms = -1) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (f.load() == 0) {
        if (ms >= 0 && std::chrono::steady_clock::now() > end) return false;
        __builtin_ia32_pause();
    }
    return true;
}

constexpr int kWatchdogSeconds = 15;  // a pass takes well under a second

coop::Options two() { return coop::Options{.processors = 2}; }

// clear_hooks — every hook these tests set, unset (a hook that did not fire stays set).
void clear_hooks() {
    namespace h = coop::test_hooks;
    h::mutex_park_before_enqueue = nullptr;
    h::mutex_park_done = nullptr;
    h::semaphore_park_before_enqueue = nullptr;
    h::semaphore_park_done = nullptr;
    h::semaphore_settle_missed = nullptr;
    h::condvar_park_before_enqueue = nullptr;
    h::enqueue_before_tail_cas = nullptr;
    h::mutex_spin_yielded = nullptr;
}

// SyncDirected — each test under a watchdog named after it, with the flags reset before
// and every hook unset after it (also when it fails).
class SyncDirected : public ::testing::Test {
  protected:
    void SetUp() override { reset(); }
    void TearDown() override { clear_hooks(); }

  private:
    coop_test::Watchdog dog_{std::string("SyncDirected.") +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                             kWatchdogSeconds};
};

// Mutex: the holder unlocks (2 -> 0, finds no waiter in the queue) while the waiter is
// between its exchange(2) and its enqueue; only the waiter's re-check (word 0: wake one
// itself) keeps it from sleeping for ever.
TEST_F(SyncDirected, MutexUnlockBeforeTheWaiterIsQueued) {
    coop::Runtime rt(two());
    static coop::Mutex m;
    coop::test_hooks::mutex_park_before_enqueue = [] {
        coop::test_hooks::mutex_park_before_enqueue = nullptr;
        g_b = 1;         // the waiter is parking
        spin_until(g_c);  // the holder has unlocked
    };
    rt.run([] {
        coop::Thread h = coop::spawn([] {
            m.lock();
            g_a = 1;
            spin_until(g_b);
            m.unlock();
            g_c = 1;
        });
        coop::Thread w = coop::spawn([] {
            spin_until(g_a);
            m.lock();
            m.unlock();
        });
    });
}

// Mutex: the holder unlocks and a third activity locks (0 -> 1, a holder that knows of no
// waiter) before the waiter enqueues; the waiter's re-check must CAS the word 1 -> 2 so
// that this holder's unlock wakes it.
TEST_F(SyncDirected, MutexRelockBeforeTheWaiterRechecks) {
    coop::Runtime rt(two());
    static coop::Mutex m;
    coop::test_hooks::mutex_park_before_enqueue = [] {
        coop::test_hooks::mutex_park_before_enqueue = nullptr;
        g_b = 1;          // the waiter is parking
        spin_until(g_c);  // the holder unlocked and the new holder locked
    };
    coop::test_hooks::mutex_park_done = [] {
        coop::test_hooks::mutex_park_done = nullptr;
        g_d = 1;  // the waiter's park (enqueue + re-check) is over
    };
    rt.run([] {
        coop::Thread h = coop::spawn([] {
            m.lock();
            g_a = 1;
            spin_until(g_b);
            m.unlock();
            if (!m.try_lock()) std::abort();  // the new holder (word 1); we run on, uncontended
            g_c = 1;
            spin_until(g_d);  // unlock only after the waiter has re-checked
            m.unlock();
        });
        coop::Thread w = coop::spawn([] {
            spin_until(g_a);
            m.lock();
            m.unlock();
        });
    });
}

// Semaphore: the release finds no queued waiter (its token goes back to pending_) while
// the committed waiter is between its fetch_sub and its enqueue; the waiter's settle()
// after the enqueue must take the token.
TEST_F(SyncDirected, SemaphoreReleaseBeforeTheWaiterIsQueued) {
    coop::Runtime rt(two());
    static coop::Semaphore s(0);
    coop::test_hooks::semaphore_park_before_enqueue = [] {
        coop::test_hooks::semaphore_park_before_enqueue = nullptr;
        g_a = 1;
        spin_until(g_b);  // the release is over
    };
    rt.run([] {
        coop::Thread w = coop::spawn([] {
            spin_until(g_partner);
            s.acquire();
        });
        coop::Thread r = coop::spawn([] {
            g_partner = 1;
            spin_until(g_a);
            s.release();
            g_b = 1;
        });
    });
}

// Semaphore: the releaser claimed the token and found no waiter; meanwhile the waiter
// enqueues and its own settle() finds no token (the releaser holds it). The releaser gives
// the token back and must look at the queue again.
TEST_F(SyncDirected, SemaphoreSettleMissesTheWaiter) {
    coop::Runtime rt(two());
    static coop::Semaphore s(0);
    coop::test_hooks::semaphore_park_before_enqueue = [] {
        coop::test_hooks::semaphore_park_before_enqueue = nullptr;
        g_a = 1;          // the waiter is parking
        spin_until(g_b);  // the releaser claimed the token and missed us
    };
    coop::test_hooks::semaphore_settle_missed = [] {
        coop::test_hooks::semaphore_settle_missed = nullptr;
        g_b = 1;
        spin_until(g_c);  // the waiter's park (enqueue + settle without a token) is over
    };
    coop::test_hooks::semaphore_park_done = [] {
        coop::test_hooks::semaphore_park_done = nullptr;
        g_c = 1;
    };
    rt.run([] {
        coop::Thread w = coop::spawn([] {
            spin_until(g_partner);
            s.acquire();
        });
        coop::Thread r = coop::spawn([] {
            g_partner = 1;
            spin_until(g_a);
            s.release();
        });
    });
}

// CondVar: a notifier that locks the mutex after the waiter began waiting must find the
// waiter queued: park enqueues before it unlocks. The hook holds the waiter just before
// its enqueue and gives the notifier time to take the mutex (it cannot while park holds
// it; if park unlocked first, it would, and its notify would find nobody).
TEST_F(SyncDirected, CondVarNotifyWhileTheWaiterParks) {
    coop::Runtime rt(two());
    static coop::Mutex m;
    static coop::CondVar cv;
    static bool ready = false;
    ready = false;
    coop::test_hooks::condvar_park_before_enqueue = [] {
        coop::test_hooks::condvar_park_before_enqueue = nullptr;
        g_a = 1;
        spin_until(g_b);
        spin_until(g_c, 200);  // the notifier notified (only if it got the mutex)
    };
    rt.run([] {
        coop::Thread w = coop::spawn([] {
            spin_until(g_partner);
            std::unique_lock<coop::Mutex> lock(m);
            cv.wait(m, [] { return ready; });
        });
        coop::Thread n = coop::spawn([] {
            g_partner = 1;
            spin_until(g_a);
            g_b = 1;
            {
                std::lock_guard<coop::Mutex> lock(m);
                ready = true;
                cv.notify_one();
            }
            g_c = 1;
        });
    });
}

// Defect 3: destroying a condition variable right after a broadcast (allowed, as POSIX
// allows). A second waiter's park has linked itself into the wait queue (the enqueue's
// linearisation point) but not yet swung the queue's tail when the notifier dequeues it
// and deletes the condition variable; the rest of the enqueue must not touch freed memory
// (ASan: heap-use-after-free WRITE in Queue::enqueue without the wait queue's guard). The
// first waiter, fully queued before, makes the queue non-empty for notify_all's look
// (Queue::empty() compares head and tail, and a lone waiter that has not swung the tail
// is not yet seen by it: a notify without the mutex may miss it), so the broadcast goes
// on to dequeue both.
coop::CondVar* g_cv = nullptr;
TEST_F(SyncDirected, CondVarDestroyedRightAfterBroadcast) {
    coop::Runtime rt(two());
    static coop::Mutex m;
    g_cv = new coop::CondVar;
    rt.run([] {
        // The first waiter: its park has enqueued it (and swung the tail) once its unlock
        // lets us take the mutex.
        coop::Thread first = coop::spawn([] {
            std::unique_lock<coop::Mutex> lock(m);
            g_d = 1;
            g_cv->wait(m);
        });
        while (g_d.load() == 0) coop::yield();
        { std::lock_guard<coop::Mutex> lock(m); }
        coop::test_hooks::enqueue_before_tail_cas = [](const void* tail, const void*) {
            const auto* lo = reinterpret_cast<const char*>(g_cv);
            const auto* p = static_cast<const char*>(tail);
            if (p < lo || p >= lo + sizeof(coop::CondVar)) return;  // another queue
            coop::test_hooks::enqueue_before_tail_cas = nullptr;
            g_a = 1;  // linked: a notifier can dequeue us now
            // Until the notifier deleted the condition variable, or gave up: with the guard
            // the delete waits for this park, so after the notifier began deleting, wait a
            // little.
            spin_until(g_b);
            spin_until(g_c, 200);
        };
        coop::Thread w = coop::spawn([] {
            spin_until(g_partner);
            std::unique_lock<coop::Mutex> lock(m);
            g_cv->wait(m);
        });
        coop::Thread n = coop::spawn([] {
            g_partner = 1;
            spin_until(g_a);
            g_cv->notify_all();
            g_b = 1;
            delete g_cv;
            g_c = 1;
        });
    });
}

// usable_cpus — the CPUs this process may run on (its affinity mask), as coop counts them.
unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::thread::hardware_concurrency();
    return static_cast<unsigned>(CPU_COUNT(&set));
}

// Mutex: a holder that keeps the lock and its core (it spins, as a holder that the OS
// preempted keeps the lock without running) and a waiter on another processor. When
// processors outnumber the usable CPUs the waiter's spin must give its core back
// (sched_yield: the hook fires) rather than only pause, since the holder may need that very
// core; when they do not, it must only pause (a yield there costs a system call and was
// measured slower). The holder releases the lock once the hook fired or after a window.
TEST_F(SyncDirected, MutexSpinnerGivesTheCoreBackOnlyWhenProcessorsOutnumberCpus) {
    const unsigned cpus = usable_cpus();
    for (bool over : {false, true}) {
        if (!over && cpus < 2) continue;  // two processors on two CPUs at least
        reset();
        const unsigned processors = over ? cpus + 1 : 2;
        static int window_ms;
        // Oversubscribed: the yield must come (within ~1 us of spinning; a generous bound, so
        // that a slow sanitized run does not fail). Not: it must not come within the window.
        window_ms = over ? 5000 : 200;
        coop::Runtime rt(coop::Options{.processors = processors});
        static coop::Mutex m;
        coop::test_hooks::mutex_spin_yielded = [] { g_b = 1; };
        rt.run([] {
            coop::Thread h = coop::spawn([] {
                m.lock();
                g_a = 1;
                g_d = spin_until(g_b, window_ms) ? 1 : 0;  // did the waiter yield its core?
                m.unlock();
            });
            coop::Thread w = coop::spawn([] {
                spin_until(g_a);
                m.lock();
                m.unlock();
            });
        });
        clear_hooks();
        EXPECT_EQ(g_d.load(), over ? 1 : 0)
            << processors << " processors on " << cpus << " CPUs: the waiter "
            << (over ? "never gave its core back" : "gave its core back although every processor has one");
    }
}

}  // namespace
