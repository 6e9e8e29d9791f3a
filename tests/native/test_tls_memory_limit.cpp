// test_tls_memory_limit.cpp — coop's thread_locals with a destructor are set up when a
// worker starts, so running out of memory later cannot abort the process in glibc.
//
// A thread_local with a destructor registers it (__cxa_thread_atexit) on its thread's first
// use; glibc allocates a small record for that and, when it cannot, ends the process:
// "Fatal glibc error: failed to register TLS destructor: out of memory". coop's node cache
// (t_nodes, coop/include/coop/hazard.hpp) was first used late — a worker's first spawn or
// join — so under an address-space cap the abort came at whatever moment memory ran out
// (6 of 9 runs of 10,000 blocked activities at `ulimit -v 600000`). Now worker_main touches
// it when the worker starts (coop/src/worker.cpp), and a spawn with no memory left throws
// std::bad_alloc to its caller, as documented.
//
// Deterministic: in a forked child (tests/support/child.hpp), the main activity caps the
// address space at what is mapped now (RLIMIT_AS), takes every byte the heap can still give
// (malloc until it refuses, from large blocks down to 16 bytes), and only then makes its
// worker's first spawns (the node cache's first use on this worker). Before the fix the child
// died of SIGABRT with glibc's message in 3 of 3 runs; now the spawn is refused (bad_alloc) and
// the child ends cleanly. Not under the sanitizers (labels no-asan, no-tsan): their shadow
// memory needs far more address space and their allocators replace malloc.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <array>
#include <atomic>
#include <new>
#include <thread>
#include <string>
#include <vector>

#include "coop/coop.hpp"
#include "tests/native/support.hpp"
#include "tests/support/child.hpp"
#include "tests/support/memory_cap.hpp"

namespace {

using coopbench::test::Hoard;
using coopbench::test::in_child;
using coopbench::test::vm_size;

// Forced migration (test_tls_migration.cpp's recipe): the caller, on processor pA, spawns H
// and spins until H runs on the other processor pB; spawns a hog; blocks on a semaphore. pA
// takes the hog, which spins until g_done; H releases the semaphore and ends; pB, the only
// free processor, resumes the caller.
std::atomic<int> g_h_running{0}, g_hog_running{0}, g_done{0};
void spin_until(const std::atomic<int>& f) {
    while (f.load() == 0) std::this_thread::yield();  // yields the OS thread, not the activity
}

// joins_on_another_worker_with_no_memory — spawns 8 activities on pA (its node cache in
// use), moves to pB, takes every byte the heap can still give under an address-space cap
// and joins them there: each join frees a descriptor and its queue node into pB's node cache
// (free_node), the cache's first use on pB in a worker that never spawned or joined before
// — glibc's abort before the fix (the review's gdb trace: free_node <- free_descriptor <-
// join_and_free in the main activity's joins, on the second worker). Freeing needs no memory.
// (A closure larger than a descriptor block is what makes a join free a node: a small one's
// descriptor keeps its node in the processor's descriptor cache.)
std::string joins_on_another_worker_with_no_memory() {
    std::string result;
    std::size_t hoarded = 0;
    unsigned pa = 0, pb = 0;
    {
        coop::Runtime rt(coop::Options{.processors = 2});
        coop::Semaphore sem(0);
        rt.run([&] {
            std::vector<coop::Thread> children;
            children.reserve(8);
            // Closures larger than a descriptor block: their descriptors come from operator new
            // and are given back with their queue node (free_descriptor -> release -> free_node).
            for (int i = 0; i < 8; ++i)
                children.push_back(coop::spawn([pad = std::array<long, 16>{}] { (void)pad; }));
            pa = coop::processor_index();
            coop::Thread h = coop::spawn([&] {
                g_h_running = 1;
                spin_until(g_hog_running);
                sem.release();
            });
            spin_until(g_h_running);
            coop::Thread hog = coop::spawn([] {
                g_hog_running = 1;
                spin_until(g_done);
            });
            sem.acquire();  // pA takes the hog; H releases; pB resumes us
            pb = coop::processor_index();
            rlimit old{};
            getrlimit(RLIMIT_AS, &old);
            rlimit cap = old;
            cap.rlim_cur = vm_size();  // no new mapping from here on
            if (setrlimit(RLIMIT_AS, &cap) != 0) result = "setrlimit failed";
            Hoard hoard;
            hoard.take_all();
            hoarded = hoard.bytes;
            for (auto& c : children) c.join();  // on pB, with no memory left
            h.join();
            hoard.release();
            setrlimit(RLIMIT_AS, &old);
            g_done = 1;
            hog.join();
        });
    }
    std::fprintf(stderr, "moved from processor %u to %u, %zu bytes taken from the heap, then 9 joins\n", pa, pb, hoarded);
    if (result.empty() && pa == pb) result = "the main activity did not move to the other processor";
    if (result.empty() && hoarded == 0) result = "the heap gave nothing to take: the test tested nothing";
    return result;
}

TEST(TlsMemoryLimit, JoinsOnAWorkerWithNoMemoryLeftDoNotAbortInGlibc) {
    for (int run = 0; run < 3; ++run) {
        const std::string r = in_child(joins_on_another_worker_with_no_memory, 60);
        EXPECT_EQ(r, "") << "run " << run;
    }
}

}  // namespace
