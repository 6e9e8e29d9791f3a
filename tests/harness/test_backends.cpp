// Every workload runs on every registered backend at a tiny size, through the registry and
// the driver's own runner (measure(): each point in a child process, as `coopbench run`
// does, so a backend that allows one runtime per process is fine), and every such point's
// self-check catches an injected fault.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/support/grid.hpp"
#include "workloads/all.hpp"

static_assert(coopbench::Backend<coopbench::PthreadsBackend>);
static_assert(coopbench::Backend<coopbench::StdThreadBackend>);

namespace {
using namespace coopbench;

// Boost.Fiber's context switches are invisible to ThreadSanitizer (Debian's Boost is not
// built with its fiber annotations): its multi-threaded schedulers give false races and
// SEGVs inside TSan itself, so tests/boostfiber is labelled no-tsan and this test leaves
// that family out under TSan (it runs in the Release and ASan builds).
#if defined(__SANITIZE_THREAD__)
constexpr bool kTsan = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kTsan = true;
#else
constexpr bool kTsan = false;
#endif
#else
constexpr bool kTsan = false;
#endif

template <class... Ws>
std::set<std::string> names(TypeList<Ws...>) {
    return {Ws::info(Machine{2}).name...};
}

unsigned processors() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}
}  // namespace

TEST(Backends, EveryBackendOfTheBinaryIsRegistered) {
    std::set<std::string> got;
    for (auto& b : Registry::instance().backends()) got.insert(b.name);
    for (const char* want : {"native", "pthreads", "stdthread", "boostfiber/round_robin", "boostfiber/shared_work",
                             "boostfiber/work_stealing"})
        EXPECT_TRUE(got.count(want)) << want << " is not registered";
}

TEST(Backends, EveryWorkloadIsRegisteredAndRunsSomewhere) {
    const auto& reg = Registry::instance();
    for (auto& w : names(AllWorkloads{})) {
        EXPECT_TRUE(reg.workloads().count(w)) << w << " is not registered";
        bool somewhere = false;
        for (auto& b : reg.backends()) somewhere |= b.runners.count(w) > 0;
        EXPECT_TRUE(somewhere) << w << " runs on no backend";
    }
}

// Every capacity check says "cannot fit" as a refusal (status refused, not failed): a count of
// threads no machine holds is refused by every registered backend that checks capacity, and
// the reason is one harness/runner.hpp's is_refusal recognises.
TEST(Backends, EveryCapacityCheckRefusesWhatCannotFitAsARefusal) {
    std::size_t checked = 0;
    for (auto& b : Registry::instance().backends()) {
        if (!b.capacity) continue;
        RuntimeOptions o;
        o.processors = 1;
        o.extra = b.fixed;
        const auto why = b.capacity(o, std::size_t{1} << 50);
        ASSERT_TRUE(why.has_value()) << b.name << " says 2^50 threads fit";
        EXPECT_TRUE(is_refusal(Outcome::failed(*why))) << b.name << ": " << *why;
        ++checked;
    }
    EXPECT_GE(checked, 6u) << "native, pthreads, stdthread and the three boostfiber variants check capacity";
}

// Through the driver's runner: Boost.Fiber with protected stacks (two mappings per fiber)
// asked for more fibers than vm.max_map_count allows is refused before it runs.
TEST(Backends, BoostFiberBeyondTheMappingLimitIsRefusedNotFailed) {
    if (kTsan) GTEST_SKIP() << "Boost.Fiber is left out under TSan (see kTsan)";
    Point p;
    p.backend = "boostfiber/round_robin";
    p.workload = "create";
    p.params = {{"N", "100000"}};  // 200,000 mappings: beyond vm.max_map_count's default 65530
    p.options.processors = 1;
    p.options.extra = Registry::instance().backend(p.backend)->fixed;
    p.options.extra["stack"] = "protected";
    std::ifstream maps("/proc/sys/vm/max_map_count");
    long long max_maps = 0;
    if (maps >> max_maps && max_maps > 180000) GTEST_SKIP() << "vm.max_map_count " << max_maps << " fits them";
    p.warmup = 0;
    p.iterations = 1;
    RunnerOptions run;
    run.timeout_seconds = 120;
    const Measurement m = measure(p, run);
    ASSERT_EQ(m.runs.size(), 1u);
    EXPECT_FALSE(m.runs[0].ok);
    EXPECT_TRUE(is_refusal(m.runs[0])) << m.runs[0].reason;
}

TEST(Backends, EveryWorkloadRunsOnEveryRegisteredBackend) {
    const auto& reg = Registry::instance();
    const Machine m{processors()};
    std::size_t pairs = 0;
    RunnerOptions run;
    run.isolation = Isolation::process;
    run.timeout_seconds = 120;
    for (auto& b : reg.backends()) {
        if (kTsan && b.family == "boostfiber") continue;  // see kTsan
        for (auto& [wname, entry] : reg.workloads()) {
            if (!b.runners.count(wname)) continue;  // the workload does not support this backend
            Point p;
            p.backend = b.name;
            p.workload = wname;
            p.params = test::largest_of_plan(entry.info(m), "tiny");
            p.options.processors = m.cores;
            if (auto it = b.fixed.find("max_processors"); it != b.fixed.end())
                p.options.processors = std::min<unsigned>(m.cores, static_cast<unsigned>(std::stoul(it->second)));
            p.options.extra = b.fixed;
            for (auto& o : b.options)
                if (!o.default_value.empty()) p.options.extra.emplace(o.name, o.default_value);
            // Two runs in the fork's one runtime (a warm-up, then a measured one): a workload
            // must run again inside the same runtime instance (a fork's warm-up and measured
            // iterations share one runtime).
            p.warmup = 1;
            p.iterations = 1;
            run.inject_fault = false;
            const Measurement ok = measure(p, run);
            ASSERT_FALSE(ok.runs.empty()) << p.id();
            EXPECT_EQ(ok.runs.size(), 2u) << p.id() << ": " << ok.runs.back().reason;
            for (auto& o : ok.runs) EXPECT_TRUE(o.ok) << p.id() << ": " << o.reason;
            run.inject_fault = true;
            const Measurement bad = measure(p, run);
            ASSERT_FALSE(bad.runs.empty()) << p.id();
            EXPECT_FALSE(bad.runs.back().ok) << p.id() << ": an injected fault went unnoticed";
            EXPECT_NE(bad.runs.back().reason.find("self-check failed"), std::string::npos) << p.id() << ": " << bad.runs.back().reason;
            ++pairs;
        }
    }
    EXPECT_GE(pairs, reg.workloads().size()) << "fewer (backend, workload) pairs than workloads";
}
