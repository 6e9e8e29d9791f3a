// test_memory.cpp — "nothing aborts for lack of memory" (docs/native-runtime.md, "When no
// stack can be had"), with the memory really gone: each scenario runs in a forked child
// (tests/support/child.hpp: a crash or a hang past its limit is reported, never taken for
// success) whose address space is capped with RLIMIT_AS, or whose operator new refuses.
// Not under ASan or TSan (labels no-asan, no-tsan): their shadow memory needs terabytes of
// address space, and their allocators replace operator new.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/hazard.hpp"
#include "coop/src/stack.hpp"
#include "tests/native/support.hpp"
#include "tests/support/child.hpp"
#include "tests/support/memory_cap.hpp"

// While set, this binary's operator new refuses every request (std::bad_alloc), as it does
// when the heap cannot grow; the runtime's failure paths must then not allocate.
static std::atomic<bool> g_refuse_new{false};

void* operator new(std::size_t n) {
    if (g_refuse_new.load(std::memory_order_relaxed)) throw std::bad_alloc();
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void* operator new(std::size_t n, std::align_val_t al) {
    if (g_refuse_new.load(std::memory_order_relaxed)) throw std::bad_alloc();
    const auto a = static_cast<std::size_t>(al);
    if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

using coop::internal::Stack;
using coop::internal::StackPool;
using coop_test::ScopedEnv;
using coopbench::test::AddressSpaceCap;
using coopbench::test::in_child;

// A stack supply that fails while the heap is gone too: the reason kept for the runtime
// (the first failure's) is built without allocating, and the activity that got no stack is
// reported to its joiner. Before, the reason was a std::string built on the failure path:
// its allocation threw inside take_reserve (noexcept): "terminate called after throwing
// an instance of 'std::bad_alloc'".
TEST(Memory, AStackFailureWithNoHeapLeftIsReportedNotAnAbort) {
    const std::string r = in_child(
        [] {
            // Room for 4 guarded 16 KiB stacks (each with its guard page and header page),
            // none for a region of carved ones: main and 3 others get one, the rest fail.
            ScopedEnv env("COOP_STACK_MEMORY_LIMIT", std::to_string(4 * (16384 + 2 * 4096)));
            constexpr int kThreads = 10;
            int ran = 0, failed = 0;
            std::string why;
            {
                coop::Runtime rt(coop::Options{.processors = 1, .stack_size = 16384, .guard = true});
                rt.run([&] {
                    coop::Semaphore go(0);
                    std::vector<coop::Thread> ts;
                    ts.reserve(kThreads);
                    std::atomic<int> started{0};
                    for (int i = 0; i < kThreads; ++i) ts.push_back(coop::spawn([&] {
                        started.fetch_add(1);
                        go.acquire();
                    }));
                    g_refuse_new = true;
                    coop::yield();  // FIFO on one processor: every activity has its first run
                    g_refuse_new = false;
                    for (int i = 0; i < started.load(); ++i) go.release();
                    for (auto& t : ts) (t.join() ? ran : failed) += 1;
                });
                why = rt.stack_failure();
            }
            if (failed == 0) return std::string("no activity failed: the test did not test anything");
            if (ran + failed != kThreads) return std::string("lost activities");
            if (why.empty()) return std::string("no reason kept");
            return std::string();
        },
        60);
    EXPECT_EQ(r, "");
}

// A mapping that failed is not retried for every activity that asks for a stack after it:
// with the address space exhausted, thousands of failed stack requests cost a few failed
// mmaps, not two each (a guarded mapping, then a region) plus malloc's own failing arena
// reservations. Before, 10^6 blocked activities under `ulimit -v 300000` spent minutes in
// failing mmaps with the pool's mutex held, workers queued on it.
TEST(Memory, AFailedMappingIsNotRetriedForEveryRequest) {
    const std::string r = in_child(
        [] {
            constexpr int kRequests = 20000;
            StackPool pool(65536, true);
            std::vector<Stack*> got;
            got.reserve(kRequests);
            int failed = 0;
            std::uint64_t failed_maps = 0;
            {
                AddressSpaceCap cap(64u << 20);
                if (!cap.ok()) return std::string("setrlimit failed");
                for (int i = 0; i < kRequests; ++i) {
                    if (Stack* s = pool.allocate()) got.push_back(s);
                    else ++failed;
                }
                failed_maps = pool.failed_maps();
            }
            for (Stack* s : got) {
                s->next = nullptr;
                pool.give(s);
            }
            if (failed < kRequests / 2) return "only " + std::to_string(failed) + " requests failed under the cap";
            if (failed_maps > static_cast<std::uint64_t>(failed) / 100 + 64)
                return std::to_string(failed_maps) + " failed mappings for " + std::to_string(failed) + " failed requests";
            return std::string();
        },
        120);
    EXPECT_EQ(r, "");
}

// The program: 10,000 activities blocked at once (64 KiB guarded stacks: 680 MB of
// address space) in a process capped at 600 MB, then 10^5 capped at 300 MB. Whatever runs out
// first (stacks, descriptors, queue nodes), the run ends: activities that got no stack are
// reported to their joiners, a spawn refused for lack of memory throws std::bad_alloc to
// its caller; nothing aborts and nothing hangs (the child is killed after 240 s).
TEST(Memory, ManyBlockedActivitiesUnderAnAddressSpaceCapEnd) {
    for (const auto& [n, cap_bytes] : {std::pair<long, std::size_t>{10000, 600000ul << 10},
                                       std::pair<long, std::size_t>{100000, 300000ul << 10}}) {
        const std::string r = in_child(
            [n = n, cap_bytes = cap_bytes] {
                rlimit lim{};
                getrlimit(RLIMIT_AS, &lim);
                lim.rlim_cur = cap_bytes;
                if (setrlimit(RLIMIT_AS, &lim) != 0) return std::string("setrlimit failed");
                long spawned = 0, failed = 0;
                bool spawn_refused = false;
                {
                    coop::Runtime rt(coop::Options{.processors = 2});
                    rt.run([&] {
                        coop::Semaphore go(0);
                        std::vector<coop::Thread> ts;
                        ts.reserve(static_cast<std::size_t>(n));
                        try {
                            for (long i = 0; i < n; ++i, ++spawned) ts.push_back(coop::spawn([&] { go.acquire(); }));
                        } catch (const std::bad_alloc&) {
                            spawn_refused = true;
                        }
                        for (int k = 0; k < 100; ++k) coop::yield();
                        for (long i = 0; i < spawned; ++i) go.release();
                        for (auto& t : ts) failed += t.join() ? 0 : 1;
                    });
                }
                std::fprintf(stderr, "n=%ld: spawned %ld, %ld without a stack%s\n", n, spawned, failed,
                             spawn_refused ? ", then a spawn was refused" : "");
                return std::string();
            },
            240);
        EXPECT_EQ(r, "") << n << " activities";
    }
}

}  // namespace

namespace {

// The three allocations the scheduler's noexcept paths used to make, each made to fail: a
// `terminate called after throwing std::bad_alloc` (SIGABRT in the child) is the failure.

// A fresh activity's queue node. A descriptor carved from a slab has no node; its first
// enqueue (start -> awakened, noexcept) took one from the processor's node cache and, when the
// cache needed a new slab with operator new refusing, threw through noexcept. Now spawn takes
// the node with the descriptor and throws std::bad_alloc to its caller. The node cache of
// the worker is exhausted first (allocate_node until it throws), so the next fresh
// descriptor's node must come from a refused operator new.
TEST(Memory, ASpawnWhoseQueueNodeCannotBeHadThrowsToItsCaller) {
    const std::string r = in_child(
        [] {
            int refused = 0, spawned = 0;
            {
                coop::Runtime rt(coop::Options{.processors = 1});
                rt.run([&] {
                    coop::spawn([] {}).join();  // the descriptor slab exists (operator new allowed)
                    std::vector<coop::Thread> ts;
                    ts.reserve(64);
                    std::vector<coop::Node*> held;
                    held.reserve(1 << 16);
                    g_refuse_new = true;
                    try {
                        while (held.size() < held.capacity()) held.push_back(coop::detail::allocate_node());
                    } catch (const std::bad_alloc&) {
                    }
                    for (int i = 0; i < 8; ++i) {
                        try {
                            ts.push_back(coop::spawn([] {}));
                            ++spawned;
                        } catch (const std::bad_alloc&) {
                            ++refused;
                        }
                    }
                    g_refuse_new = false;
                    for (coop::Node* n : held) coop::detail::free_node(n);
                    for (auto& t : ts) t.join();
                });
            }
            if (refused == 0) return std::string("no spawn was refused: the test did not test anything");
            return std::string();
        },
        60);
    EXPECT_EQ(r, "");
}

// The timer heap's growth: the poller moved pushed entries into a std::vector heap
// (poll_timers, noexcept); its first push_back allocates. Now the heap is intrusive.
TEST(Memory, TimersArePolledWithNoHeapLeft) {
    const std::string r = in_child(
        [] {
            {
                coop::Runtime rt(coop::Options{.processors = 1});
                rt.run([&] {
                    std::vector<coop::Thread> ts;
                    ts.reserve(8);
                    for (int i = 0; i < 8; ++i) ts.push_back(coop::spawn([] {
                        coop::sleep_for(std::chrono::milliseconds(1));
                    }));
                    g_refuse_new = true;
                    coop::sleep_for(std::chrono::milliseconds(5));  // the idle loop polls the timers
                    g_refuse_new = false;
                    for (auto& t : ts) t.join();
                });
            }
            return std::string();
        },
        60);
    EXPECT_EQ(r, "");
}

// The inbox: a thread that is not a worker making an activity ready (here: releasing a
// semaphore the activity waits on) appended it to a std::vector under a mutex (make_ready,
// noexcept); after a drain the vector has no capacity, so that append allocates. Now the
// activity goes through its own queue node.
TEST(Memory, AThreadOutsideTheRuntimeWakesAnActivityWithNoHeapLeft) {
    const std::string r = in_child(
        [] {
            {
                coop::Runtime rt(coop::Options{.processors = 1});
                coop::Semaphore go(0);
                std::atomic<bool> waiting{false};
                std::thread outside([&] {
                    while (!waiting.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // it has blocked
                    g_refuse_new = true;
                    go.release();
                    g_refuse_new = false;
                });
                rt.run([&] {
                    waiting = true;
                    go.acquire();
                });
                outside.join();
            }
            return std::string();
        },
        60);
    EXPECT_EQ(r, "");
}

}  // namespace
