// test_oversubscribed.cpp — processors outnumbering cores: with P = 8 x the CPUs this process
// may use, every micro and application workload of the "quick" plan ("tiny" under a
// sanitizer) completes (with its self-check) on each scheduling (native, native-ws, native-parasail), and the scheduler's
// counters show that no idle processor held its core while the others had work:
// - spin_hogs == 0: no spinner polled more than kSpinHogPolls times in a row without giving
//   its core back (sched_yield);
// - spin_overcap == 0: never more spinners than the spinning rule allows with the running
//   processors capped by the usable CPUs (2 * spinning < cpus).
// Behaviour, not time: the watchdog turns a hang into a failure, nothing asserts on speed.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <string>
#include <thread>

#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "tests/support/grid.hpp"
#include "workloads/all.hpp"

namespace {

unsigned usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

struct Totals {
    double yields = 0;
    int points = 0;
};

template <class W>
void run_quick(const std::string& scheduling, unsigned processors, Totals& totals) {
    const auto info = W::info(coopbench::Machine{processors});
    // Under a sanitizer (10-20x slower) the "tiny" plan's sizes: the same workloads and
    // code paths, at sizes that finish within the test's limit.
    auto points = coopbench::test::expand_plan(info, coop_test::kSanitized ? "tiny" : "quick");
    for (const auto& params : points) {
        coopbench::Context ctx;
        ctx.params = params;
        ctx.options.processors = processors;
        ctx.options.extra["scheduling"] = scheduling;
        const auto out = coopbench::run_point<coopbench::NativeBackend, W>(ctx);
        std::string where = info.name + " " + scheduling + " P=" + std::to_string(processors);
        for (const auto& [k, v] : params) where += " " + k + "=" + v;
        ASSERT_TRUE(out.ok) << where << ": " << out.reason;
        auto counter = [&](const char* name) {
            auto it = out.counters.find(name);
            return it == out.counters.end() ? -1.0 : it->second;
        };
        EXPECT_EQ(counter("spin_hogs"), 0) << where << ": a spinner kept its core without yielding";
        EXPECT_EQ(counter("spin_overcap"), 0) << where << ": more spinners than half the usable CPUs";
        totals.yields += std::max(0.0, counter("spin_yields"));
        ++totals.points;
    }
}

template <class... Ws>
void run_all(coopbench::TypeList<Ws...>, const std::string& scheduling, unsigned processors, Totals& totals) {
    (run_quick<Ws>(scheduling, processors, totals), ...);
}

class Oversubscribed : public ::testing::TestWithParam<const char*> {};

TEST_P(Oversubscribed, QuickPlanCompletesAndSpinnersYield) {
    const unsigned processors = 8 * usable_cpus();
    coop_test::Watchdog dog("oversubscribed quick plan", 540);
    Totals totals;
    using Workloads = coopbench::Concat<coopbench::MicroWorkloads, coopbench::AppWorkloads>::type;
    run_all(Workloads{}, GetParam(), processors, totals);
    EXPECT_GT(totals.points, 0);
    // Not asserted (timing-dependent): how often spinners gave their core back.
    std::printf("%s P=%u: %d points, %.0f spin yields\n", GetParam(), processors, totals.points, totals.yields);
}

INSTANTIATE_TEST_SUITE_P(Scheduling, Oversubscribed, ::testing::Values("global", "work_stealing", "parasail"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
