// The units workloads through the registry's runner: fib and ddb (lock-free units) on
// native, fib-mutex and ddb-mutex (baseline) on native and pthreads; correct points with
// the documented counters, an injected fault fails the self-check, the variants are named
// and supported where they should be, plans exist.
#include <gtest/gtest.h>

#include <thread>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/native/native.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "tests/locks/sizes.hpp"
#include "workloads/units/all.hpp"

using namespace coopbench;
using namespace std::chrono_literals;

namespace {

unsigned cores() { return std::max(2u, std::thread::hardware_concurrency()); }

Context fib_ctx(long k, long work) {
    Context ctx;
    ctx.options.processors = cores();
    ctx.params = {{"k", std::to_string(k)}, {"work", std::to_string(work)}};
    return ctx;
}
Context ddb_ctx(long rounds) {
    Context ctx;
    ctx.options.processors = cores();
    ctx.params = {{"rounds", std::to_string(rounds)}, {"hot_pct", "50"}, {"work", "50"}};
    return ctx;
}

TEST(UnitsWorkloads, FibOnNative) {
    locks_test::Watchdog wd(120s, "fib");
    auto o = run_point<NativeBackend, FibUnits>(fib_ctx(locks_test::kSanitized ? 12 : 18, 10));
    ASSERT_TRUE(o.ok) << o.reason;
    EXPECT_GT(o.value, 0);
    EXPECT_GT(o.counters.at("cpu_s"), 0);
    EXPECT_EQ(o.counters.at("messages"), static_cast<double>(unitsprog::fib_messages(locks_test::kSanitized ? 12 : 18)));
}

TEST(UnitsWorkloads, FibMutexOnNativeAndPthreads) {
    locks_test::Watchdog wd(120s, "fib-mutex");
    auto o = run_point<NativeBackend, FibMutex>(fib_ctx(12, 10));
    ASSERT_TRUE(o.ok) << o.reason;
    o = run_point<PthreadsBackend, FibMutex>(fib_ctx(locks_test::kSanitized ? 8 : 12, 10));
    ASSERT_TRUE(o.ok) << o.reason;
}

TEST(UnitsWorkloads, DdbOnNative) {
    locks_test::Watchdog wd(120s, "ddb");
    auto o = run_point<NativeBackend, DdbUnits>(ddb_ctx(locks_test::scaled(300, 10)));
    ASSERT_TRUE(o.ok) << o.reason;
    double per_proc = 0;
    for (unsigned i = 0; i < cores(); ++i)
        if (o.counters.count("ops_p" + std::to_string(i))) per_proc += o.counters.at("ops_p" + std::to_string(i));
    EXPECT_EQ(per_proc, o.counters.at("operations"));  // every operation counted on some processor
    EXPECT_GE(o.counters.at("utilisation"), 0);
    EXPECT_LE(o.counters.at("utilisation"), 1);
    EXPECT_TRUE(o.counters.count("migrations_per_1e6"));
    EXPECT_TRUE(o.counters.count("hot_migrations_per_1e6"));
}

TEST(UnitsWorkloads, DdbMutexOnNativeAndPthreads) {
    locks_test::Watchdog wd(120s, "ddb-mutex");
    auto o = run_point<NativeBackend, DdbMutex>(ddb_ctx(30));
    ASSERT_TRUE(o.ok) << o.reason;
    o = run_point<PthreadsBackend, DdbMutex>(ddb_ctx(locks_test::kSanitized ? 5 : 20));
    ASSERT_TRUE(o.ok) << o.reason;
}

TEST(UnitsWorkloads, InjectedFaultsFail) {
    auto c = fib_ctx(10, 0);
    c.inject_fault = true;
    auto o = run_point<NativeBackend, FibUnits>(c);
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.reason.find("self-check"), std::string::npos) << o.reason;
    o = run_point<PthreadsBackend, FibMutex>(c);
    EXPECT_FALSE(o.ok);
    auto d = ddb_ctx(10);
    d.inject_fault = true;
    o = run_point<NativeBackend, DdbUnits>(d);
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.reason.find("self-check"), std::string::npos) << o.reason;
    o = run_point<PthreadsBackend, DdbMutex>(d);
    EXPECT_FALSE(o.ok);
}

TEST(UnitsWorkloads, VariantsAndPlans) {
    static_assert(FibUnits::supports<NativeBackend>());
    static_assert(!FibUnits::supports<PthreadsBackend>());
    static_assert(DdbUnits::supports<NativeBackend>());
    static_assert(!DdbUnits::supports<PthreadsBackend>());
    static_assert(workload_supports<FibMutex, PthreadsBackend>());
    Machine m;
    m.cores = 2;
    for (auto info : {FibUnits::info(m), FibMutex::info(m), DdbUnits::info(m), DdbMutex::info(m)}) {
        EXPECT_TRUE(info.plans.count("tiny")) << info.name;
        EXPECT_TRUE(info.plans.count("quick")) << info.name;
        EXPECT_TRUE(info.plans.count("paper")) << info.name;
        EXPECT_NE(info.description.find("variant"), std::string::npos) << info.name;
    }
    EXPECT_EQ(unitsprog::fib_messages(0), 1);
    EXPECT_EQ(unitsprog::fib_messages(2), 4);   // fib(2): fib(1), fib(0), plus + the root
    EXPECT_EQ(unitsprog::fib_expected(18), 2584);
}

}  // namespace
