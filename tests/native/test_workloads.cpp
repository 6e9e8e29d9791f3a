// test_workloads.cpp — every micro workload at its "tiny" plan sizes through the harness's
// runner (coopbench::run_point<NativeBackend, W>), on 1 and 2+ processors, with the
// self-check passing, and failing when a fault is injected.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "tests/support/grid.hpp"
#include "workloads/micro/all.hpp"

namespace {

template <class W>
void run_tiny(unsigned processors) {
    coop_test::Watchdog dog("micro workloads", 120);
    const auto info = W::info(coopbench::Machine{processors});
    for (const auto& params : coopbench::test::expand_plan(info, "tiny")) {  // the one grid expander
        for (bool fault : {false, true}) {
            coopbench::Context ctx;
            ctx.params = params;
            ctx.options.processors = processors;
            ctx.inject_fault = fault;
            const auto out = coopbench::run_point<coopbench::NativeBackend, W>(ctx);
            std::string where = info.name + " P=" + std::to_string(processors);
            for (const auto& [k, v] : params) where += " " + k + "=" + v;
            if (fault) {
                EXPECT_FALSE(out.ok) << where << ": an injected fault went unnoticed";
            } else {
                EXPECT_TRUE(out.ok) << where << ": " << out.reason;
                EXPECT_GT(out.value, 0) << where;
            }
        }
    }
}

}  // namespace

class MicroP : public ::testing::TestWithParam<unsigned> {};

TEST_P(MicroP, Create) { run_tiny<coopbench::Create>(GetParam()); }
TEST_P(MicroP, Switch) { run_tiny<coopbench::Switch>(GetParam()); }
TEST_P(MicroP, LockLocal) { run_tiny<coopbench::LockLocal>(GetParam()); }
TEST_P(MicroP, LockGlobal) { run_tiny<coopbench::LockGlobal>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Processors, MicroP, ::testing::Values(1u, 2u));

// The options: guard=off works, a wrong value is refused, capacity refuses absurd counts.
TEST(NativeBackend, Options) {
    coopbench::Context ctx;
    ctx.params = {{"N", "1000"}};
    ctx.options.extra["guard"] = "off";
    ctx.options.stack_size = 16384;
    EXPECT_TRUE((coopbench::run_point<coopbench::NativeBackend, coopbench::Create>(ctx).ok));
    ctx.options.extra["guard"] = "maybe";
    const auto bad = coopbench::run_point<coopbench::NativeBackend, coopbench::Create>(ctx);
    EXPECT_FALSE(bad.ok);
    EXPECT_NE(bad.reason.find("guard"), std::string::npos) << bad.reason;
    EXPECT_FALSE(coopbench::NativeBackend::capacity({}, 10'000'000).has_value());
    EXPECT_TRUE(coopbench::NativeBackend::capacity({}, std::size_t{1} << 50).has_value());
}
