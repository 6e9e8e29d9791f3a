// test_errno_migration.cpp — errno's value belongs to the activity across a switch, also one
// that moves it to another worker; what code compiled without the plugin must do about
// errno's address (docs/native-runtime.md, "errno and the C++ exception state").
//
// glibc declares __errno_location `const`, so at -O1 and above a compiler keeps errno's
// address across any call, a coop call included: a function that used errno before a call
// that may switch and reads it after reads, after a migration, the PREVIOUS worker's errno
// (the docs' old example `errno = 0; strtol(); m.lock(); if (errno)` was wrong in 150 of 150
// forced migrations at -O2). coop cannot follow an address kept in the caller's register;
// what it does is carry errno's VALUE: the switch writes the activity's errno into the errno
// of the worker it resumes on (coop/src/switch.hpp). So the documented rule is: take errno
// into a local before a coop call that may switch; errno read afresh after the call (by code
// that did not keep its address) is the activity's. This file checks both, built at -O2
// (the level where the address is kept), with the migration forced as in
// test_tls_migration.cpp: A blocks on a semaphore, a helper H (which sets ITS errno on the
// other processor pB) releases it, and pB, the only free processor, resumes A.
//
// Seen failing without the restore (switch.hpp's restore_errno removed):
// TheValueIsCarriedToTheWorkerItResumesOn (errno afresh after the migration was H's EBADF)
// and TheValueIsKeptAcrossAYieldOnOneWorker (the other activity's EDOM).
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <thread>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"

namespace {

constexpr int kWatchdogSeconds = 60;
constexpr int kRounds = 20;

// The truth about the calling OS thread, through functions the compiler cannot see through
// (volatile pointers: loaded at every call), so nothing is cached across a switch here.
[[gnu::noinline]] unsigned truth_index() { return coop::processor_index(); }
unsigned (*volatile g_truth_index)() = &truth_index;
[[gnu::noinline]] int errno_afresh() { return *__errno_location(); }
int (*volatile g_errno_afresh)() = &errno_afresh;

void spin_until(const std::atomic<int>& f) {
    while (f.load() == 0) std::this_thread::yield();  // yields the OS thread, not the activity
}

std::atomic<int> g_h_running{0}, g_hog_running{0}, g_done{0};
coop::Semaphore* g_sem = nullptr;
coop::Thread g_helpers[2];

// block_and_migrate — blocks so that the calling activity resumes on the other processor
// (test_tls_migration.cpp's recipe); before releasing it, H sets errno on pB to EBADF, the
// hog sets errno on pA to EDOM: both are what that worker's errno holds when A leaves pA /
// reaches pB, unless the switch carries A's.
[[gnu::noinline]] void block_and_migrate(unsigned& pa, unsigned& pb) {
    g_h_running = 0, g_hog_running = 0, g_done = 0;
    pa = g_truth_index();
    g_helpers[0] = coop::spawn([] {
        g_h_running = 1;
        spin_until(g_hog_running);
        errno = EBADF;  // H's errno, on pB
        g_sem->release();
    });
    spin_until(g_h_running);
    g_helpers[1] = coop::spawn([] {
        errno = EDOM;  // the hog's errno, on pA
        g_hog_running = 1;
        spin_until(g_done);
    });
    g_sem->acquire();  // pA takes the hog; H releases; pB resumes us
    pb = g_truth_index();
}

struct Seen {
    int kept = 0;     // errno taken into a local before the blocking call (the docs' recipe)
    int afresh = 0;   // errno read afresh after it
    unsigned pa = 0, pb = 0;
};

// round — the docs' example as the docs now write it, straight-line and inlined as user
// code around a blocking call is.
[[gnu::flatten, gnu::noinline]] Seen round() {
    Seen s;
    errno = 0;
    volatile long v = std::strtol("999999999999999999999999", nullptr, 10);  // ERANGE
    (void)v;
    s.kept = errno;
    block_and_migrate(s.pa, s.pb);
    s.afresh = g_errno_afresh();
    g_done = 1;
    for (auto& t : g_helpers) t.join();
    return s;
}

TEST(ErrnoMigration, TheValueIsCarriedToTheWorkerItResumesOn) {
    coop_test::Watchdog dog("ErrnoMigration.TheValueIsCarriedToTheWorkerItResumesOn", kWatchdogSeconds);
    coop::Options o;
    o.processors = 2;
    coop::Runtime rt(o);
    coop::Semaphore sem(0);
    g_sem = &sem;
    int migrated = 0, kept_wrong = 0, afresh_wrong = 0;
    rt.run([&] {
        for (int r = 0; r < kRounds; ++r) {
            const Seen s = round();
            if (s.pa != s.pb) ++migrated;
            if (s.kept != ERANGE) ++kept_wrong;
            if (s.afresh != ERANGE) ++afresh_wrong;
        }
    });
    g_sem = nullptr;
    EXPECT_EQ(migrated, kRounds);   // the recipe forces a migration every round
    EXPECT_EQ(kept_wrong, 0);       // the value taken before the call
    EXPECT_EQ(afresh_wrong, 0);     // errno on the new worker is the activity's, not H's EBADF
}

// On one worker: two activities set their own errno and yield to each other; each finds its
// own value after every yield (read afresh and through errno, whose address is the same
// thread's here).
TEST(ErrnoMigration, TheValueIsKeptAcrossAYieldOnOneWorker) {
    coop_test::Watchdog dog("ErrnoMigration.TheValueIsKeptAcrossAYieldOnOneWorker", kWatchdogSeconds);
    coop::Options o;
    o.processors = 1;
    coop::Runtime rt(o);
    std::atomic<int> wrong{0};
    rt.run([&] {
        auto body = [&](int mine) {
            for (int i = 0; i < 1000; ++i) {
                errno = mine;
                coop::yield();
                if (errno != mine || g_errno_afresh() != mine) ++wrong;
            }
        };
        coop::Thread a = coop::spawn([&] { body(ERANGE); });
        coop::Thread b = coop::spawn([&] { body(EDOM); });
        a.join();
        b.join();
    });
    EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
