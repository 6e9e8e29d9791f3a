// A refused spawn, in every workload (typed over workloads/all.hpp): the point fails with the
// backend's reason, at once, and nothing hangs or touches a destroyed gate — whichever
// spawn is refused (the first, or one after threads already wait at the start gate).
#include <gtest/gtest.h>

#include <atomic>

#include "harness/registry.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "tests/support/grid.hpp"
#include "tests/support/watchdog.hpp"
#include "workloads/all.hpp"

namespace {
using namespace coopbench;

// Refusing — pthreads whose spawn refuses once `budget` threads were spawned.
struct Refusing : PthreadsBackend {
    static inline std::atomic<long> budget{0};
    template <class F>
    static Thread spawn(F&& fn) {
        if (budget.fetch_sub(1) <= 0) throw SpawnError("refused by the test: EAGAIN");
        return PthreadsBackend::spawn(std::forward<F>(fn));
    }
};
static_assert(Backend<Refusing>);

template <class L>
struct ToTypes;
template <class... Ws>
struct ToTypes<TypeList<Ws...>> {
    using type = ::testing::Types<Ws...>;
};

template <class W>
class RefusedSpawn : public ::testing::Test {};
TYPED_TEST_SUITE(RefusedSpawn, ToTypes<AllWorkloads>::type);

TYPED_TEST(RefusedSpawn, FailsWithTheReasonAndNeverHangs) {
    using W = TypeParam;
    if constexpr (!workload_supports<W, Refusing>()) {
        GTEST_SKIP() << "the workload does not run on OS threads";
    } else {
        const WorkloadInfo info = W::info(Machine{2});
        Context ctx;
        ctx.params = test::largest_of_plan(info, "tiny");
        ctx.options.processors = 2;
        for (long budget : {0L, 1L, 2L, 3L}) {
            test::Watchdog dog(info.name + " with spawn " + std::to_string(budget + 1) + " refused", 30);
            Refusing::budget = budget;
            const Outcome o = run_point<Refusing, W>(ctx);
            if (o.ok) {
                // Only possible when no spawn was refused (the workload needs <= budget threads).
                EXPECT_GE(Refusing::budget.load(), 0) << info.name << ": a spawn was refused, yet the point is ok";
            } else {
                EXPECT_NE(o.reason.find("refused by the test: EAGAIN"), std::string::npos)
                    << info.name << " budget " << budget << ": " << o.reason;
            }
        }
        Refusing::budget = 0;
    }
}

// A passed capacity check reserves the group's handles, so a workload's first spawn, inside
// its measured interval, does not allocate them (the Go and tokio programs allocate theirs
// before their clocks too); a refused check reserves nothing.
TEST(Group, APassedCapacityCheckReservesTheHandlesBeforeTheFirstSpawn) {
    Context ctx;
    Group<PthreadsBackend> group(3);
    EXPECT_EQ(group.reserved(), 0u);
    ASSERT_TRUE(group.check_capacity(ctx, 3)) << group.error();
    EXPECT_GE(group.reserved(), 3u);

    Group<PthreadsBackend> huge(std::size_t{1} << 50);
    EXPECT_FALSE(huge.check_capacity(ctx, std::size_t{1} << 50));
    EXPECT_EQ(huge.reserved(), 0u);
}

}  // namespace
