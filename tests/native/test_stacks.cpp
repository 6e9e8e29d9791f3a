// test_stacks.cpp — coop's stacks at scale (coop/src/stack.hpp): more activities
// alive at once than guarded stacks fit in vm.max_map_count, guarded stacks only within the
// mapping budget and carved ones beyond it, surplus stacks given back and their slots
// reused, a stack supply that fails without an abort (the activity never runs, its closure
// is destroyed, its join says so), and an overflow of an unguarded stack caught by its
// canary.
#include <gtest/gtest.h>

#include <alloca.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "coop/coop.hpp"
#include "coop/src/processor.hpp"
#include "coop/src/stack.hpp"
#include "tests/native/support.hpp"

namespace {

using coop::internal::Stack;
using coop::internal::StackPool;

using coop_test::ScopedEnv;

long mappings_now() {
    std::ifstream f("/proc/self/maps");
    long lines = 0;
    std::string line;
    while (std::getline(f, line)) ++lines;
    return lines;
}

long max_map_count() {
    std::ifstream f("/proc/sys/vm/max_map_count");
    long n = 0;
    return f >> n ? n : 65530;
}

// Every byte of a stack is usable and its canary (if unguarded) survives that.
void touch_all(Stack* s) {
    auto* p = static_cast<volatile unsigned char*>(s->bottom);
    for (std::size_t i = 0; i < s->size; i += 512) p[i] = 1;
    coop::internal::check_canary(s);
}

// kSlack — mappings the test's own allocations may add (ASan's allocator maps its own).
constexpr long kSlack = coop_test::kSanitized ? 64 : 8;

// The guard budget: guarded stacks first, carved ones past it, all usable; the mappings used
// stay far below the limit; stacks given back are all reused before anything new is mapped.
TEST(StackPool, GuardedWithinTheMappingBudgetCarvedBeyond) {
    const long used = mappings_now();
    ScopedEnv env("COOP_MAX_MAP_COUNT", std::to_string(used + 400));  // budget: 400 / 4 = 100
    std::vector<Stack*> stacks;
    {
        StackPool pool(16384, true);
        EXPECT_GE(pool.guard_budget(), 95u);
        EXPECT_LE(pool.guard_budget(), 100u);
        const std::size_t n = pool.guard_budget() + 3 * StackPool::kRegionSlots;
        const std::size_t regions = 3;
        for (std::size_t i = 0; i < n; ++i) {
            Stack* s = pool.allocate();
            ASSERT_NE(s, nullptr) << i;
            EXPECT_EQ(s->guarded, i < pool.guard_budget()) << i;
            EXPECT_GE(s->size, 16384u);
            touch_all(s);
            stacks.push_back(s);
        }
        // Two mappings per guarded stack, about one per region (neighbours may merge).
        EXPECT_LE(mappings_now() - used, static_cast<long>(2 * pool.guard_budget() + regions + kSlack));
        std::set<Stack*> all(stacks.begin(), stacks.end());
        for (Stack* s : stacks) {
            s->next = nullptr;
            pool.give(s);
        }
        stacks.clear();
        const long before = mappings_now();
        Stack* list = pool.take(n);
        std::size_t reused = 0;
        for (Stack* s = list; s != nullptr; s = s->next) {
            reused += all.count(s);
            touch_all(s);
        }
        EXPECT_EQ(reused, n) << "every stack given back is taken again";
        EXPECT_EQ(mappings_now(), before);
        pool.give(list);
    }  // the destructor unmaps everything
    EXPECT_LE(mappings_now(), used + kSlack);
}

// Without guard pages every stack is carved: two mappings per kRegionSlots stacks.
TEST(StackPool, UnguardedStacksAreCarvedFromRegions) {
    StackPool pool(8192, false);
    EXPECT_EQ(pool.guard_budget(), 0u);
    std::vector<Stack*> stacks;
    stacks.reserve(2 * StackPool::kRegionSlots);  // before counting: the vector maps nothing later
    const long used = mappings_now();
    for (std::size_t i = 0; i < 2 * StackPool::kRegionSlots; ++i) {
        Stack* s = pool.allocate();
        ASSERT_NE(s, nullptr);
        EXPECT_FALSE(s->guarded);
        touch_all(s);
        stacks.push_back(s);
    }
    // Two regions: four mappings (two each: the PROT_NONE first page and the rest; fewer if
    // they merged), far below one mapping per stack (512). Under the sanitizers their
    // own allocators map memory as the test runs (ASan's shadow and allocator regions: 9 new
    // mappings seen in CI): kSlack there.
    EXPECT_LE(mappings_now() - used, 4 + (coop_test::kSanitized ? kSlack : 0));
    for (Stack* s : stacks) {
        s->next = nullptr;
        pool.give(s);
    }
}

// More activities blocked at once than guarded stacks fit in vm.max_map_count (two mappings
// each): on one processor with the FIFO queue every activity runs (and takes a stack)
// before main resumes. Before carved stacks, the allocation past ~max_map_count/2 stacks
// aborted the process ("coop: cannot allocate a ...-byte activity stack").
TEST(Stacks, MoreLiveActivitiesThanTheMappingLimitAllowsGuardedStacks) {
    coop_test::Watchdog dog("Stacks.MoreLiveActivitiesThanTheMappingLimitAllowsGuardedStacks", 300);
    // Under the sanitizers (256 KiB stacks, slow), a lowered limit takes the same path.
    std::unique_ptr<ScopedEnv> env;
    long limit = max_map_count();
    if (coop_test::kSanitized) {
        limit = mappings_now() + 4000;
        env = std::make_unique<ScopedEnv>("COOP_MAX_MAP_COUNT", std::to_string(limit));
    }
    const long n = limit / 2 + (coop_test::kSanitized ? 1000 : 5000);
    std::atomic<long> started{0};
    long peak = 0;
    std::size_t joined_ok = 0;
    coop::Runtime rt(coop::Options{.processors = 1});
    rt.run([&] {
        coop::Semaphore go(0);
        std::vector<coop::Thread> ts;
        ts.reserve(static_cast<std::size_t>(n));
        for (long i = 0; i < n; ++i)
            ts.push_back(coop::spawn([&] {
                started.fetch_add(1, std::memory_order_relaxed);
                go.acquire();
            }));
        // relaxed: a count polled on the one processor that also runs the incrementers.
        while (started.load(std::memory_order_relaxed) < n) coop::yield();
        peak = mappings_now();
        for (long i = 0; i < n; ++i) go.release();
        for (auto& t : ts) joined_ok += t.join() ? 1 : 0;
    });
    EXPECT_EQ(joined_ok, static_cast<std::size_t>(n));
    // Against the real limit only: TSan maps memory of its own for every fiber (~4.7
    // mappings each here), which the lowered limit under the sanitizers does not allow for.
    if (!coop_test::kSanitized) {
        EXPECT_LT(peak, limit) << "mappings in use with " << n << " live activities";
    }
    EXPECT_EQ(rt.stats().at("stack_failures"), 0u);
}

// No stack to be had (the stack memory limit, reached after ~300 stacks): the activities that
// get none never run, their closures are destroyed, their joins return false, the runtime
// counts them and says why; the others run normally. Nothing aborts.
TEST(Stacks, AFailedStackSupplyIsReportedToTheJoinerNotAnAbort) {
    coop_test::Watchdog dog("Stacks.AFailedStackSupplyIsReportedToTheJoinerNotAnAbort", 120);
    // 300 guarded stacks, or one region of carved ones (kRegionSlots = 256) but not two.
    static_assert(StackPool::kRegionSlots == 256);
    ScopedEnv env("COOP_STACK_MEMORY_LIMIT", std::to_string(300 * (coop::kDefaultStackSize + 8192)));
    for (bool guard : {true, false}) {
        constexpr long kThreads = 600;
        auto token = std::make_shared<int>(0);  // held by every closure
        std::atomic<long> started{0};
        long ran = 0, failed = 0;
        coop::Runtime rt(coop::Options{.processors = 1, .guard = guard});
        rt.run([&] {
            coop::Semaphore go(0);
            std::vector<coop::Thread> ts;
            for (long i = 0; i < kThreads; ++i)
                ts.push_back(coop::spawn([&, token] {
                    started.fetch_add(1, std::memory_order_relaxed);
                    go.acquire();
                }));
            coop::yield();  // FIFO on one processor: every activity has had its first run
            const long n = started.load(std::memory_order_relaxed);  // one processor: no race
            for (long i = 0; i < n; ++i) go.release();
            for (auto& t : ts) (t.join() ? ran : failed) += 1;
        });
        EXPECT_EQ(ran, started.load()) << "guard=" << guard;
        EXPECT_GT(failed, 0) << "guard=" << guard << ": the stack limit should refuse some of " << kThreads;
        EXPECT_EQ(ran + failed, kThreads);
        EXPECT_EQ(token.use_count(), 1) << "every closure is destroyed, run or not";
        EXPECT_EQ(rt.stats().at("stack_failures"), static_cast<std::uint64_t>(failed));
        EXPECT_NE(rt.stack_failure().find("COOP_STACK_MEMORY_LIMIT"), std::string::npos) << rt.stack_failure();
    }
}

// Not even main gets a stack: Runtime::run says so (an exception), nothing aborts, and a
// next runtime works.
TEST(Stacks, MainWithoutAStackMakesRunThrow) {
    coop_test::Watchdog dog("Stacks.MainWithoutAStackMakesRunThrow", 60);
    bool ran = false;
    {
        ScopedEnv env("COOP_STACK_MEMORY_LIMIT", "1");
        coop::Runtime rt(coop::Options{.processors = 1, .guard = false});
        try {
            rt.run([&] { ran = true; });
            ADD_FAILURE() << "run returned normally";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("COOP_STACK_MEMORY_LIMIT"), std::string::npos) << e.what();
        }
    }
    EXPECT_FALSE(ran);
    coop::Runtime rt(coop::Options{.processors = 1});
    rt.run([&] { ran = true; });
    EXPECT_TRUE(ran);
}

// overflow — uses `bytes` of stack below the caller's frame.
[[gnu::noinline]] void overflow(std::size_t bytes) {
    auto* p = static_cast<volatile char*>(alloca(bytes));
    for (std::size_t i = 0; i < bytes; i += 8) p[i] = 1;  // every word: the canary's among them
}

// An unguarded (carved) stack overflowed into its neighbour: the canary at its bottom is
// found changed when the activity ends (or switches away), and the process ends with a
// message that says so, instead of running on with a corrupted neighbour.
TEST(StacksDeathTest, AnOverflowOfAnUnguardedStackIsCaughtByItsCanary) {
    if (coop_test::kSanitized) GTEST_SKIP() << "the sanitizers' own frames and fake stacks";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            coop::Runtime rt(coop::Options{.processors = 1, .stack_size = 16384, .guard = false});
            rt.run([] {
                coop::Semaphore hold(0);
                // `a` holds the carved slot below b's, which b's overflow runs into.
                coop::Thread a = coop::spawn([&] { hold.acquire(); });
                coop::yield();
                coop::Thread b = coop::spawn([] { overflow(24576); });
                b.join();
                hold.release();
            });
        },
        "canary");
}

// zero_below — `bytes` of stack below the caller zeroed by one memset (as a zero-initialised
// local array does), from the lowest address up.
[[gnu::noinline]] void zero_below(std::size_t bytes) {
    char* buf = static_cast<char*>(alloca(bytes));
    std::memset(buf, 0, bytes);
    asm volatile("" ::"r"(buf) : "memory");
}

// overflow_beside_a_running_neighbour — the death test's statement (below).
[[gnu::noinline]] void overflow_beside_a_running_neighbour() {
    static std::atomic<bool> stop{false};
    static std::atomic<int> started{0};
    static std::atomic<long> switches[2];
    static std::atomic<coop::internal::Stack*> stacks[2];
    auto placement_failed = [](const char* why) {
        std::fprintf(stderr, "placement failed: %s\n", why);
        std::_Exit(3);
    };
    // The global queue: the pingers ping-pong on whichever processor main leaves free.
    coop::Runtime rt(coop::Options{.processors = 2, .stack_size = 16384, .guard = false});
    rt.run([&] {
        // Stacks are carved upwards in first-run order: main, N1, N2, then O, whose
        // slot sits directly above one of the pingers'.
        auto pinger = [&](int k) {
            stacks[k] = coop::internal::this_processor()->current->stack;
            started.fetch_add(1);
            while (!stop.load()) {
                coop::yield();  // a switch-away: this pinger's canary is checked
                switches[k].fetch_add(1);
            }
        };
        coop::Thread n1 = coop::spawn([&] { pinger(0); });
        coop::Thread n2 = coop::spawn([&] { pinger(1); });
        const auto t0 = std::chrono::steady_clock::now();
        while (started.load() < 2)  // main keeps its processor: the other runs them
            if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(20))
                placement_failed("the pingers did not start");
        coop::Thread o = coop::spawn([&] {
            coop::internal::Stack* me = coop::internal::this_processor()->current->stack;
            // The pinger whose stack ends just below this one's bottom (within the slot's rooms).
            int k = -1;
            for (int i = 0; i < 2; ++i) {
                const auto gap = static_cast<char*>(me->bottom) - static_cast<char*>(stacks[i].load()->top());
                if (gap > 0 && gap <= 4096) k = i;
            }
            if (k < 0) placement_failed("no pinger's slot is directly below this one");
            // The pingers must be running elsewhere while this activity does not switch.
            auto wait_for = [&](long n) {
                const long before = switches[k].load();
                const auto t = std::chrono::steady_clock::now();
                while (switches[k].load() < before + n)
                    if (std::chrono::steady_clock::now() - t > std::chrono::seconds(20))
                        placement_failed("the neighbour does not run beside this activity");
            };
            wait_for(100);
            char here;
            // Past this stack's bottom by 64 bytes: the canary, then the room below it (once,
            // the neighbour's whole Stack header). Not deeper: past that room an overflow
            // reaches the neighbour's frames, which may then crash before any check.
            zero_below(static_cast<std::size_t>(&here - static_cast<char*>(me->bottom)) + 64);
            wait_for(1000);  // the neighbour switches away (and is checked) meanwhile
            // This activity's switch-away (a sleep always switches): must end the process.
            coop::sleep_for(std::chrono::milliseconds(1));
            std::fprintf(stderr, "the overflow was not reported at the switch-away\n");
            std::_Exit(4);
        });
        o.join();
        stop = true;
    });
}

// A carved stack's overflow beside a neighbour that keeps running on the other processor:
// the neighbour switches away (its own canary checked, through its own Stack header) many
// times after the overflow, and the overflowing activity then switches away and must be
// stopped there, with the documented message. Two defects would fail it: headers in the
// overflow's path (the neighbour's check read its zeroed header: SIGSEGV, no message), and
// no canary check at the switch-away (the activity returns from its yield and says so).
TEST(StacksDeathTest, AnOverflowBesideARunningNeighbourIsReportedAtTheSwitchAway) {
    if (coop_test::kSanitized) GTEST_SKIP() << "the sanitizers' own frames and fake stacks";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(overflow_beside_a_running_neighbour(),
                 "coop: activity stack overflow: the canary at the bottom of a [0-9]+-byte unguarded stack was overwritten");
}

}  // namespace
