// test_doc_workload.cpp — docs/adding-a-workload.md, followed as written: the example
// workload (docs/examples/counter.hpp) in an area's list (docs/examples/workload_list.hpp)
// gets a runner per backend through the registry's own code, its plans expand to valid
// points, every tiny point runs ok on pthreads and stdthread, and an injected fault fails
// its self-check.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "docs/examples/workload_list.hpp"
#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/support/grid.hpp"
#include "tests/support/watchdog.hpp"

using namespace coopbench;

TEST(DocWorkload, TheListGivesItARunner) {
    BackendEntry e;
    detail::add_runners<PthreadsBackend>(e, example::MicroWorkloads{});
    ASSERT_TRUE(e.runners.count("counter"));
    ASSERT_TRUE(e.runners.count("create"));  // the list's other workloads are still there
    Context ctx;
    ctx.params = {{"T", "2"}, {"K", "100"}};
    ctx.options.processors = test::processors();
    test::Watchdog dog("counter through its runner");
    const Outcome o = e.runners.at("counter")(ctx);
    EXPECT_TRUE(o.ok) << o.reason;
}

TEST(DocWorkload, PlansAreValid) {
    const WorkloadInfo info = Counter::info(Machine{test::processors()});
    for (const char* plan : {"tiny", "quick", "paper"}) {
        ASSERT_TRUE(info.plans.count(plan)) << plan;
        for (const auto& p : test::expand_plan(info, plan))
            for (const auto& spec : info.params) EXPECT_GE(std::stoll(p.at(spec.name)), spec.min) << plan;
    }
}

template <class B>
void tiny_points_pass() {
    const WorkloadInfo info = Counter::info(Machine{test::processors()});
    for (const auto& p : test::expand_grids(info.plans.at("tiny"))) {
        test::Watchdog dog("counter " + test::describe(p.params));
        Context ctx;
        ctx.params = p.params;
        ctx.options.processors = p.processors;
        const Outcome ok = run_point<B, Counter>(ctx);
        EXPECT_TRUE(ok.ok) << test::describe(p.params) << ": " << ok.reason;
        EXPECT_GT(ok.value, 0.0);
        ctx.inject_fault = true;
        const Outcome bad = run_point<B, Counter>(ctx);
        EXPECT_FALSE(bad.ok) << "the self-check missed an injected fault";
        EXPECT_NE(bad.reason.find("counter"), std::string::npos) << bad.reason;
    }
}

TEST(DocWorkload, TinyPointsPassOnPthreads) { tiny_points_pass<PthreadsBackend>(); }
TEST(DocWorkload, TinyPointsPassOnStdthread) { tiny_points_pass<StdThreadBackend>(); }
