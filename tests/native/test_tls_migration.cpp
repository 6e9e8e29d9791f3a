// test_tls_migration.cpp — coop's thread_locals and activities that migrate between OS threads.
//
// An activity that blocks may resume on another processor (OS thread). A compiler may compute
// a thread_local's address once per function and keep it across a call (clang -O3 does), so
// a function that does queue work, blocks and does queue work again would, with the queue's
// thread_locals read inline, use the FIRST thread's hazard-pointer slot and node cache after
// migrating: two processors on one hazard slot, a non-atomic node cache written by two
// threads (units' fib/ddb aborted 5 of 5 at P=2 before units/ added its own noinline
// accessors). These tests force the migration deterministically with two processors:
//
//   A (on processor pA): queue work; spawns H and spins until H runs (on the other
//   processor, pB); spawns Hog; blocks on a semaphore. pA, now free, takes Hog, which spins
//   (never yields) until A is done. H sees Hog running, releases the semaphore and ends:
//   pB, the only free processor, resumes A. A checks it is on pB and does queue work again.
//
// How the compiler is made to cache: this file is compiled as code of a shared library would
// be (-fPIC: global-dynamic TLS, whose __tls_get_addr result both g++ and clang keep across
// calls; in a non-PIC executable both address TLS %fs-relative at each access), and the
// migrating functions are [[gnu::flatten]] (everything inlined into them, as a compiler may
// choose to do anyway).
//
// Checks: the queue's hooks (this binary links coop_hooked) verify, inside every enqueue and
// dequeue, that the hazard pointer just published is in the slot of the processor the call
// runs on (read through an opaque function pointer, which no compiler can cache); and the
// accessors of the runtime's thread_locals, called in the migrating function, return the
// resuming thread's objects.
//
// Seen failing before the fix (hazard.hpp reading t_index / t_nodes inline), 3 of 3 runs:
// ProcessorIndexAfterMigrationIsTheNewThreads with g++ -O3 (preset release: the index and the
// slot after the migration were the first processor's) and clang -O3 (preset clang: the
// index). The two queue tests (hook checks inside every enqueue/dequeue) did not fail on this
// code with either compiler (the queue operations were not inlined into the migrating
// function, or each basic block recomputed the address); they guard the runtime's own paths.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"

namespace {

constexpr int kWatchdogSeconds = 30;

struct Item : coop::QueueItem {
    int value = 0;
};

// The truth about the calling OS thread, through function pointers the compiler cannot see
// through (volatile: loaded at every call), so nothing is cached across a switch here.
[[gnu::noinline]] unsigned truth_index() { return coop::processor_index(); }
unsigned (*volatile g_truth_index)() = &truth_index;
// The calling thread's processor, through the out-of-line accessor (a call no compiler sees
// into), for the inline this_processor() to be compared with.
coop::internal::Processor* (*volatile g_truth_processor)() = &coop::internal::this_processor_slow;

std::atomic<int> g_wrong_hp{0};   // hazard pointers published in another processor's slot
std::atomic<int> g_checked{0};    // queue operations checked by the hooks

void check_hp1(const void*, const void* tail) {
    const unsigned i = g_truth_index();
    // relaxed: the slot's owner is this thread (if the queue used the right slot).
    if (coop::detail::g_processors[i].hp1.load(std::memory_order_relaxed) != tail) ++g_wrong_hp;
    ++g_checked;
}
void check_hp2(const void* next) {
    const unsigned i = g_truth_index();
    if (coop::detail::g_processors[i].hp2.load(std::memory_order_relaxed) != next) ++g_wrong_hp;
    ++g_checked;
}

void spin_until(const std::atomic<int>& f) {
    while (f.load() == 0) std::this_thread::yield();  // yields the OS thread, not the activity
}

// migrate — runs `before`, blocks so that the activity resumes on the other processor, then
// runs `after`; pa and pb as seen through g_truth_index. The caller calls join_helpers()
// after its last check.
std::atomic<int> g_h_running{0}, g_hog_running{0}, g_done{0};
coop::Semaphore* g_sem = nullptr;

// The helpers' handles: joined by join_helpers() only after the caller's last check, since a
// join may block and move the activity again.
coop::Thread g_helpers[2];
void join_helpers() {
    for (auto& t : g_helpers) t.join();
}

template <class Before, class After>
[[gnu::always_inline]] inline void migrate(Before&& before, After&& after, unsigned& pa, unsigned& pb) {
    before();
    pa = g_truth_index();
    g_helpers[0] = coop::spawn([] {
        g_h_running = 1;
        spin_until(g_hog_running);
        g_sem->release();
    });
    spin_until(g_h_running);
    g_helpers[1] = coop::spawn([] {
        g_hog_running = 1;
        spin_until(g_done);
    });
    g_sem->acquire();  // pA takes Hog; H releases; pB resumes us
    pb = g_truth_index();
    after();
    g_done = 1;
}

void reset_flags() { g_h_running = 0, g_hog_running = 0, g_done = 0; }
void reset() {
    reset_flags();
    g_wrong_hp = 0, g_checked = 0;
}

// block_and_migrate — migrate() as one opaque call: the caller's code around it is straight-line
// (one basic block), where both compilers reuse a TLS address computed before a call.
[[gnu::noinline]] void block_and_migrate(unsigned& pa, unsigned& pb) {
    reset_flags();
    migrate([] {}, [] {}, pa, pb);
}

// index_body — reads the calling thread's processor index (the hazard slot every queue
// operation uses: detail::slot() reads the same thread_local), blocks and migrates, reads it
// again.
struct Seen {
    unsigned index_before = 0, index_after = 0, pa = 0, pb = 0;
    const void* slot_before = nullptr;
    const void* slot_after = nullptr;
    unsigned slot_pa = 0, slot_pb = 0;
};
// index_body — the index alone: straight-line code around the blocking call.
[[gnu::noinline]] void index_body(Seen& seen) {
    seen.index_before = coop::processor_index();
    block_and_migrate(seen.pa, seen.pb);
    seen.index_after = coop::processor_index();
    join_helpers();
}
// slot_body — the hazard slot every queue operation uses.
[[gnu::noinline]] void slot_body(Seen& seen) {
    seen.slot_before = &coop::detail::slot();
    block_and_migrate(seen.slot_pa, seen.slot_pb);
    seen.slot_after = &coop::detail::slot();
    join_helpers();
}

// processor_body — the inline this_processor() (a volatile asm that reads %fs itself, so
// neither a value nor an address from before a switch is reused after it) before and after
// a migration, in straight-line code around one opaque blocking call, everything inlined.
struct SeenProcessor {
    coop::internal::Processor* before = nullptr;
    coop::internal::Processor* after = nullptr;
    coop::internal::Processor* truth_before = nullptr;
    coop::internal::Processor* truth_after = nullptr;
    unsigned pa = 0, pb = 0;
};
[[gnu::flatten, gnu::noinline]] void processor_body(SeenProcessor& seen) {
    seen.before = coop::internal::this_processor();
    seen.truth_before = g_truth_processor();
    block_and_migrate(seen.pa, seen.pb);
    seen.after = coop::internal::this_processor();
    seen.truth_after = g_truth_processor();
    join_helpers();
}

// queue_body — the first test's activity: queue work, migrate, queue work, in one function.
[[gnu::flatten, gnu::noinline]] void queue_body(unsigned& pa, unsigned& pb, int& got) {
    coop::Queue<Item> q;
    Item x, y;
    x.value = 1, y.value = 2;
    migrate(
        [&] {
            q.enqueue(&x);
            q.enqueue(&y);
            got += q.dequeue()->value;
        },
        [&] {
            q.enqueue(&x);
            got += q.dequeue()->value;  // y
            got += q.dequeue()->value;  // x
            coop::release(&x);
            coop::release(&y);
        },
        pa, pb);
    join_helpers();
}

// primitives_body — the second test's activity: a loop that migrates on every round.
[[gnu::flatten, gnu::noinline]] int primitives_body() {
    int migrations = 0;
    coop::Mutex m;
    coop::Queue<Item> q;
    Item x;
    for (int round = 0; round < 4; ++round) {
        reset_flags();
        unsigned pa = 0, pb = 0;
        migrate([&] { q.enqueue(&x); }, [&] {
            m.lock();
            (void)q.dequeue();
            m.unlock();
        }, pa, pb);
        join_helpers();
        migrations += pa != pb;
        if (g_wrong_hp.load() != 0) break;
    }
    coop::release(&x);
    return migrations;
}

// One function (the activity body, everything inlined into it) enqueues and dequeues, blocks,
// migrates, and enqueues and dequeues again on a queue that lives on its stack.
TEST(TlsMigration, QueueOperationsAfterMigrationUseTheNewThreadsHazardSlot) {
    coop_test::Watchdog dog("TlsMigration.QueueOperations", kWatchdogSeconds);
    reset();
    coop::Runtime rt(coop::Options{.processors = 2});
    coop::Semaphore sem(0);
    g_sem = &sem;
    coop::test_hooks::enqueue_before_tail_cas = &check_hp1;
    coop::test_hooks::dequeue_read_item = &check_hp2;
    unsigned pa = 0, pb = 0;
    int got = 0;
    rt.run([&] { queue_body(pa, pb, got); });
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
    coop::test_hooks::dequeue_read_item = nullptr;
    EXPECT_NE(pa, pb) << "the activity did not migrate: the test did not test anything";
    EXPECT_EQ(got, 4);
    EXPECT_GE(g_checked.load(), 6);  // and the runtime's own queue operations
    EXPECT_EQ(g_wrong_hp.load(), 0) << "a queue operation after the migration published its hazard "
                                       "pointers in the slot of the processor it ran on before";
}

// Semaphore, Mutex and CondVar used in a loop by one function that migrates on every wait
// (their inline fast paths and out-of-line slow paths reach the queue): the hooks check
// every queue operation of the wait queues.
TEST(TlsMigration, BlockingPrimitivesInALoopAcrossMigrations) {
    coop_test::Watchdog dog("TlsMigration.BlockingPrimitives", kWatchdogSeconds);
    reset();
    coop::Runtime rt(coop::Options{.processors = 2});
    coop::Semaphore sem(0);
    g_sem = &sem;
    coop::test_hooks::enqueue_before_tail_cas = &check_hp1;
    coop::test_hooks::dequeue_read_item = &check_hp2;
    int migrations = 0;
    rt.run([&] { migrations = primitives_body(); });
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
    coop::test_hooks::dequeue_read_item = nullptr;
    EXPECT_EQ(migrations, 4);
    EXPECT_EQ(g_wrong_hp.load(), 0);
}

// The hazard-slot index and the hazard slot used after a migration are the resuming thread's.
TEST(TlsMigration, ProcessorIndexAfterMigrationIsTheNewThreads) {
    coop_test::Watchdog dog("TlsMigration.ProcessorIndex", kWatchdogSeconds);
    reset();
    coop::Runtime rt(coop::Options{.processors = 2});
    coop::Semaphore sem(0);
    g_sem = &sem;
    Seen seen;
    rt.run([&] {
        index_body(seen);
        slot_body(seen);
    });
    ASSERT_NE(seen.pa, seen.pb) << "the activity did not migrate: the test did not test anything";
    ASSERT_NE(seen.slot_pa, seen.slot_pb) << "the activity did not migrate: the test did not test anything";
    EXPECT_EQ(seen.index_before, seen.pa);
    EXPECT_EQ(seen.index_after, seen.pb) << "processor_index() after the migration named the processor the "
                                            "activity ran on before it blocked";
    EXPECT_EQ(seen.slot_before, &coop::detail::g_processors[seen.slot_pa]);
    EXPECT_EQ(seen.slot_after, &coop::detail::g_processors[seen.slot_pb])
        << "the hazard slot used after the migration is another processor's";
}

// this_processor(), inlined into the migrating function, names the resuming thread's
// processor. Seen failing (3 of 3 runs, g++ -O3) with the mutant
// tests/mutants/this_processor_cached.patch: this_processor() through an accessor declared
// [[gnu::const]] (as glibc declares __errno_location), so the compiler reuses the value from
// before the blocking call. (The asm without `volatile` and "memory" is no such mutant
// under g++: it reloads the offset, a global, after the call and reads %fs again.)
TEST(TlsMigration, ThisProcessorAfterMigrationIsTheNewThreads) {
    coop_test::Watchdog dog("TlsMigration.ThisProcessor", kWatchdogSeconds);
    reset();
    coop::Runtime rt(coop::Options{.processors = 2});
    coop::Semaphore sem(0);
    g_sem = &sem;
    SeenProcessor seen;
    rt.run([&] { processor_body(seen); });
    ASSERT_NE(seen.pa, seen.pb) << "the activity did not migrate: the test did not test anything";
    ASSERT_NE(seen.truth_before, seen.truth_after);
    EXPECT_EQ(seen.before, seen.truth_before);
    EXPECT_EQ(seen.after, seen.truth_after) << "this_processor() after the migration named the processor the "
                                              "activity ran on before it blocked";
}

}  // namespace
