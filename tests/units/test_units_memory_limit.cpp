// test_units_memory_limit.cpp — the units block pool's first use on a worker with no memory
// left does not abort the process in glibc.
//
// Messages and future states come from a per-thread cache (t_pool, units/units.hpp). As a
// thread_local with a destructor, its first use on a thread registered that destructor
// (__cxa_thread_atexit), which allocates; with no memory left glibc ended the process:
// "Fatal glibc error: failed to register TLS destructor: out of memory". A block freed on a
// worker that never used the pool before is such a first use. Now the pool is trivially
// destructible and flushes at thread exit through a pthread key, which allocates nothing.
//
// Deterministic: in a forked child (tests/support/child.hpp), a block is allocated on the
// test's own thread; on a fresh thread (and on a fresh coop worker), the address space is capped at what is mapped
// (tests/support/memory_cap.hpp), every byte the heap still gives is taken, and only then is
// the block freed there (the pool's first use on that thread). Before the change the child
// died of SIGABRT with glibc's message; now it ends cleanly. A second child checks the
// flush at exit still happens: blocks freed on a worker that exits are handed out again.
// Not under the sanitizers (labels no-asan, no-tsan): they bypass the pool.
#include <gtest/gtest.h>

#include <cstdio>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "tests/support/child.hpp"
#include "tests/support/memory_cap.hpp"
#include "units/units.hpp"

namespace {

using coopbench::test::AddressSpaceCap;
using coopbench::test::Hoard;
using coopbench::test::in_child;

constexpr std::size_t kSize = 128;  // class 1 of the pool
constexpr std::align_val_t kAlign{64};

std::string first_use_on_a_worker_with_no_memory() {
    void* block = units::detail::block_allocate(kSize, kAlign);  // this thread's cache, not the worker's
    std::string result;
    std::size_t hoarded = 0;
    {
        coop::Runtime rt(coop::Options{.processors = 1});
        rt.run([&] {
            AddressSpaceCap cap(0);  // no new mapping from here on
            if (!cap.ok()) result = "setrlimit failed";
            Hoard hoard;
            hoard.take_all();
            hoarded = hoard.bytes;
            units::detail::block_free(block, kSize, kAlign);  // the pool's first use on this worker
        });
    }
    std::fprintf(stderr, "%zu bytes taken from the heap, then the worker's first free\n", hoarded);
    if (result.empty() && hoarded == 0) result = "the heap gave nothing to take: the test tested nothing";
    return result;
}

// The same first use on a plain thread. On a coop worker the registration can already have
// happened at the worker's start, by accident of linking: the "TLS init function" of an inline
// thread_local is a weak symbol, each translation unit's runs the initialisation of all of that
// unit's thread_locals, and the linker keeps one — here worker_main's touch of coop's node
// cache ran this file's, which registered t_pool's destructor too (nm shows one address for
// both). A thread that touches no other thread_local first shows the abort every time: before
// the change 3 of 3 children died of SIGABRT with glibc's message.
std::string first_use_on_a_thread_with_no_memory() {
    void* block = units::detail::block_allocate(kSize, kAlign);
    std::string result;
    std::size_t hoarded = 0;
    std::thread([&] {
        AddressSpaceCap cap(0);
        if (!cap.ok()) result = "setrlimit failed";
        Hoard hoard;
        hoard.take_all();
        hoarded = hoard.bytes;
        units::detail::block_free(block, kSize, kAlign);  // the pool's first use on this thread
    }).join();
    std::fprintf(stderr, "%zu bytes taken from the heap, then the thread's first free\n", hoarded);
    if (result.empty() && hoarded == 0) result = "the heap gave nothing to take: the test tested nothing";
    return result;
}

TEST(UnitsMemoryLimit, ThePoolsFirstUseOnAThreadWithNoMemoryLeftDoesNotAbortInGlibc) {
    if (units::detail::kPoolBypass) GTEST_SKIP() << "the sanitizers' builds bypass the pool";
    for (int run = 0; run < 3; ++run) EXPECT_EQ(in_child(first_use_on_a_thread_with_no_memory, 60), "") << "run " << run;
}

TEST(UnitsMemoryLimit, ThePoolsFirstUseOnAWorkerWithNoMemoryLeftDoesNotAbortInGlibc) {
    if (units::detail::kPoolBypass) GTEST_SKIP() << "the sanitizers' builds bypass the pool";
    for (int run = 0; run < 3; ++run) EXPECT_EQ(in_child(first_use_on_a_worker_with_no_memory, 60), "") << "run " << run;
}

// A thread's free blocks reach the shared list when it exits (the pthread key's destructor):
// a thread frees fewer blocks than its cache keeps, so they stay in its cache until it exits;
// then a new thread's first allocations refill from the shared list and get them back. Fails
// if the flush at exit is lost (the key never set, or its destructor not flushing).
std::string blocks_of_an_exited_thread_are_reused() {
    constexpr int kBlocks = 64;
    std::vector<void*> blocks;
    std::thread([&] {
        for (int i = 0; i < kBlocks; ++i) blocks.push_back(units::detail::block_allocate(kSize, kAlign));
        for (void* b : blocks) units::detail::block_free(b, kSize, kAlign);  // into this thread's cache
    }).join();  // exits: the key's destructor flushes its cache to the shared list
    std::set<void*> freed(blocks.begin(), blocks.end());
    int reused = 0;
    std::vector<void*> again;
    std::thread([&] {
        for (int i = 0; i < kBlocks; ++i) {
            again.push_back(units::detail::block_allocate(kSize, kAlign));
            reused += freed.count(again.back()) != 0 ? 1 : 0;
        }
    }).join();
    if (reused == 0) return "none of the exited thread's " + std::to_string(kBlocks) + " free blocks was handed out again";
    return "";
}

TEST(UnitsMemoryLimit, AnExitingThreadsFreeBlocksAreHandedOutAgain) {
    if (units::detail::kPoolBypass) GTEST_SKIP() << "the sanitizers' builds bypass the pool";
    EXPECT_EQ(in_child(blocks_of_an_exited_thread_are_reused, 60), "");
}

}  // namespace
