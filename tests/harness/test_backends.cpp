// Every workload runs on every registered backend at a tiny size, through the registry and
// the driver's own runner (measure(): each point in a child process, as `coopbench run`
// does, so a backend that allows one runtime per process is fine), and every such point's
// self-check catches an injected fault.
#include <gtest/gtest.h>

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
