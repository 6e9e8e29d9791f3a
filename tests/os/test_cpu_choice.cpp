// test_cpu_choice.cpp — one CPU choice for every backend: coop's pinned workers
// (coop::internal::choose_cpus) and the OS-thread backends (coopbench::os::choose_cpus,
// which reads the topology once per process) pick the same CPUs for every P, from the
// process's affinity mask, one per physical core first; pinning a thread to a set leaves it
// on exactly that set.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "coop/cpus.hpp"
#include "runtimes/os/os_threads.hpp"

namespace {

std::vector<int> affinity_of_this_thread() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

// P from 1 to past the machine's CPUs (users run on 64+ cores; the oversubscribed runs ask
// for more processors than there are CPUs).
std::vector<unsigned> processor_counts(std::size_t cpus) {
    std::vector<unsigned> ps;
    for (unsigned p = 1; p <= 2 * cpus + 3; ++p) ps.push_back(p);
    return ps;
}

TEST(CpuChoice, OrderIsEveryAllowedCpuOnce) {
    const std::vector<int> allowed = coop::internal::allowed_cpus();
    ASSERT_FALSE(allowed.empty());
    EXPECT_TRUE(std::is_sorted(allowed.begin(), allowed.end()));
    EXPECT_EQ(coopbench::os::available_cpus(), allowed);
    std::vector<int> order = coop::internal::cpus_by_core();
    std::sort(order.begin(), order.end());
    EXPECT_EQ(order, allowed) << "cpus_by_core must be a permutation of the allowed CPUs";
}

TEST(CpuChoice, CoopAndTheOsBackendsChooseTheSameCpus) {
    const std::vector<int> allowed = coop::internal::allowed_cpus();
    for (unsigned p : processor_counts(allowed.size())) {
        const std::vector<int> coop_cpus = coop::internal::choose_cpus(p);
        EXPECT_EQ(coopbench::os::choose_cpus(p), coop_cpus) << "P=" << p;
        EXPECT_EQ(coop_cpus.size(), std::min<std::size_t>(p, allowed.size())) << "P=" << p;
        EXPECT_TRUE(std::is_sorted(coop_cpus.begin(), coop_cpus.end())) << "P=" << p;
        EXPECT_EQ(std::adjacent_find(coop_cpus.begin(), coop_cpus.end()), coop_cpus.end()) << "P=" << p;
        for (int c : coop_cpus)
            EXPECT_TRUE(std::find(allowed.begin(), allowed.end(), c) != allowed.end()) << "P=" << p << " cpu " << c;
        // The mask of the pthreads backend is the same set.
        const cpu_set_t mask = coopbench::os::cpu_mask(p);
        EXPECT_EQ(static_cast<std::size_t>(CPU_COUNT(&mask)), coop_cpus.size()) << "P=" << p;
        for (int c : coop_cpus) EXPECT_TRUE(CPU_ISSET(c, &mask)) << "P=" << p << " cpu " << c;
    }
}

TEST(CpuChoice, FirstCpusTakesThePrefixSorted) {
    const std::vector<int> by_core = {6, 2, 4, 0, 7, 3, 5, 1};  // as one PU per core, then the siblings
    EXPECT_EQ(coop::internal::first_cpus(by_core, 0), std::vector<int>{});
    EXPECT_EQ(coop::internal::first_cpus(by_core, 1), std::vector<int>{6});
    EXPECT_EQ(coop::internal::first_cpus(by_core, 3), (std::vector<int>{2, 4, 6}));
    EXPECT_EQ(coop::internal::first_cpus(by_core, 8), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(coop::internal::first_cpus(by_core, 64), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(CpuChoice, PinningRestrictsAThreadToTheSet) {
    const std::vector<int> allowed = coop::internal::allowed_cpus();
    const std::vector<int> one = {allowed.back()};
    std::vector<int> seen_one, seen_all, seen_unchanged;
    std::thread t([&] {
        coop::internal::pin_current_thread(one.front());
        seen_one = affinity_of_this_thread();
        coopbench::os::pin_current_thread(allowed);
        seen_all = affinity_of_this_thread();
        coopbench::os::pin_current_thread({});  // empty: no change
        seen_unchanged = affinity_of_this_thread();
    });
    t.join();
    EXPECT_EQ(seen_one, one);
    EXPECT_EQ(seen_all, allowed);
    EXPECT_EQ(seen_unchanged, allowed);
}

}  // namespace
