// The concept holds for every backend, and every workload runs on every registered backend
// at a tiny size through the registry (the same runner the driver's points use).
#include <gtest/gtest.h>

#include "harness/registry.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"

static_assert(coopbench::Backend<coopbench::PthreadsBackend>);
static_assert(coopbench::Backend<coopbench::StdThreadBackend>);

TEST(Backends, PthreadsCreate) {
    coopbench::Context ctx;
    ctx.options.processors = 2;
    ctx.params = {{"N", "100"}};
    auto o = coopbench::run_point<coopbench::PthreadsBackend, coopbench::Create>(ctx);
    EXPECT_TRUE(o.ok) << o.reason;
}
