// The locks/ workloads (abortable-lock, owner-access) through the registry's runner on
// the preemptive backends: every lock and guard gives a correct point, an injected fault
// fails the self-check, the plans exist and scale with the machine, and cooperative
// backends are left out.
#include <gtest/gtest.h>

#include <thread>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/locks/sizes.hpp"
#include "workloads/locks/all.hpp"

using namespace coopbench;
using namespace std::chrono_literals;

namespace {

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

Context abortable_ctx(const std::string& lock, const std::string& patience_us) {
    Context ctx;
    ctx.options.processors = cores();
    ctx.params = {{"lock", lock}, {"T", std::to_string(cores() + 1)}, {"A", std::to_string(locks_test::scaled(300, 4))},
                  {"patience_us", patience_us}, {"cs_ns", "300"}, {"ncs_ns", "300"}, {"C", "4"}};
    return ctx;
}

TEST(AbortableLockWorkload, EveryLockOnPthreadsAndStdthread) {
    locks_test::Watchdog wd(240s, "abortable-lock workload");
    for (const auto& lock : locks::AllLocks::names()) {
        for (const char* patience : {"0", "20"}) {
            auto ctx = abortable_ctx(lock, patience);
            auto o = run_point<PthreadsBackend, AbortableLockWorkload>(ctx);
            ASSERT_TRUE(o.ok) << lock << " W=" << patience << ": " << o.reason;
            EXPECT_GT(o.value, 0) << lock;
            EXPECT_EQ(o.value, o.counters.at("throughput"));
            EXPECT_GE(o.counters.at("timeouts_pct"), 0);
            EXPECT_LE(o.counters.at("timeouts_pct"), 100);
            if (std::string(patience) == "0") {
                EXPECT_EQ(o.counters.at("timeouts_pct"), 0) << lock;
            }
            EXPECT_TRUE(o.counters.count("fairness_stddev"));
        }
        auto o = run_point<StdThreadBackend, AbortableLockWorkload>(abortable_ctx(lock, "50"));
        EXPECT_TRUE(o.ok) << lock << ": " << o.reason;
    }
}

TEST(AbortableLockWorkload, InjectedFaultFails) {
    auto ctx = abortable_ctx("cal", "0");
    ctx.inject_fault = true;
    auto o = run_point<PthreadsBackend, AbortableLockWorkload>(ctx);
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.reason.find("self-check"), std::string::npos) << o.reason;
}

TEST(AbortableLockWorkload, UnknownLockFails) {
    auto o = run_point<PthreadsBackend, AbortableLockWorkload>(abortable_ctx("no-such-lock", "0"));
    EXPECT_FALSE(o.ok);
}

Context owner_ctx(const std::string& guard, const std::string& share) {
    Context ctx;
    ctx.options.processors = cores();
    ctx.params = {{"guard", guard}, {"W", "2"}, {"share_permille", share}, {"N", std::to_string(locks_test::scaled(20000))}};
    return ctx;
}

TEST(OwnerAccessWorkload, EveryGuard) {
    locks_test::Watchdog wd(240s, "owner-access workload");
    for (const auto& guard : detail::OwnerGuards::names()) {
        for (const char* share : {"500", "990", "1000"}) {
            auto o = run_point<PthreadsBackend, OwnerAccessWorkload>(owner_ctx(guard, share));
            ASSERT_TRUE(o.ok) << guard << " share=" << share << ": " << o.reason;
            EXPECT_GT(o.counters.at("owner_ns"), 0);
            if (std::string(share) != "1000") {
                EXPECT_GT(o.counters.at("nonowner_ns"), 0) << guard;
            } else {
                EXPECT_EQ(o.counters.at("nonowner_accesses"), 0);
            }
        }
    }
}

TEST(OwnerAccessWorkload, InjectedFaultFails) {
    auto ctx = owner_ctx("owner-guard", "900");
    ctx.inject_fault = true;
    auto o = run_point<PthreadsBackend, OwnerAccessWorkload>(ctx);
    EXPECT_FALSE(o.ok);
}

TEST(LockWorkloadPlans, NamedPlansScaleWithTheMachine) {
    for (unsigned c : {2u, 30u}) {
        Machine m{c};
        auto a = AbortableLockWorkload::info(m);
        for (const char* p : {"tiny", "quick", "paper", "fig3_scalability", "fig4_preemption", "fig5_degradation"})
            EXPECT_TRUE(a.plans.count(p)) << p;
        const auto& t3 = a.plans.at("fig3_scalability")[0].at("T");
        EXPECT_EQ(t3.front(), "1");
        EXPECT_EQ(t3.back(), std::to_string(c));
        const auto& t4 = a.plans.at("fig4_preemption")[0].at("T");
        EXPECT_EQ(t4.front(), std::to_string(c));
        EXPECT_EQ(t4.back(), std::to_string(8 * c));
        auto o = OwnerAccessWorkload::info(m);
        for (const char* p : {"tiny", "quick", "paper", "owner_access"}) EXPECT_TRUE(o.plans.count(p)) << p;
    }
}

// A cooperative backend (not preemptive) gets neither workload.
struct CoopFake {
    struct Runtime {
        explicit Runtime(const RuntimeOptions&) {}
        template <class F>
        void run(F&& f) { f(); }
    };
    struct Thread {
        void join() {}
    };
    template <class F>
    static Thread spawn(F&&) { return {}; }
    static void yield() {}
    struct Mutex {
        void lock() {}
        bool try_lock() { return true; }
        void unlock() {}
    };
    struct CondVar {
        void wait(Mutex&) {}
        void notify_one() {}
        void notify_all() {}
    };
    struct Semaphore {
        explicit Semaphore(std::ptrdiff_t) {}
        void acquire() {}
        void release() {}
    };
};
static_assert(Backend<CoopFake>);
static_assert(!workload_supports<AbortableLockWorkload, CoopFake>());
static_assert(!workload_supports<OwnerAccessWorkload, CoopFake>());
static_assert(workload_supports<AbortableLockWorkload, PthreadsBackend>());

}  // namespace
