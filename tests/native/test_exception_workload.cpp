// test_exception_workload.cpp — workloads/apps/eratosthenes.hpp's failed stage, on coop:
// a stage whose spawn of the next one is refused catches the SpawnError and, inside the
// handler, records it under a coop::Mutex and drains its input channel (a park in the
// handler, which may resume on another worker). The exception state is the activity's
// across that park (coop/src/switch.hpp); test_exception_state.cpp is the directed test of
// the mechanism. This one checks the workload itself on coop (tests/apps covers its failure
// path on stdthread only): the point fails with the refusal's reason, on every algorithm at
// P=1 and P=2, and (asan build) nothing leaks.
// It did NOT fail on the code before the fix (3 runs under ASan with leak checking): only
// one stage at a time is inside a handler, and no other activity there throws or catches,
// so the wrong exception state was not observed by this workload.
#include <gtest/gtest.h>

#include <atomic>
#include <exception>
#include <string>
#include <utility>

#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "workloads/all.hpp"

namespace {

// RefusingNative — coop's typed backend K whose spawn refuses once `budget` activities were
// spawned (a stand-in for a system out of memory for activities).
template <coop::Scheduling K>
struct RefusingNative : coopbench::NativeBackendOf<K> {
    using Base = coopbench::NativeBackendOf<K>;
    static inline std::atomic<long> budget{0};
    template <class F>
    static typename Base::Thread spawn(F&& fn) {
        if (budget.fetch_sub(1) <= 0) throw coopbench::SpawnError("refused by the test");
        return Base::spawn(std::forward<F>(fn));
    }
};

template <coop::Scheduling K>
void failed_stages_end_with_the_reason(const char* what) {
    for (unsigned p : {1u, 2u}) {
        for (long budget : {3L, 10L, 40L}) {
            coop_test::Watchdog dog(std::string("eratosthenes refused on ") + what, 60);
            coopbench::Context ctx;
            ctx.options.processors = p;
            ctx.params = {{"N", "2000"}, {"C", "1"}};
            RefusingNative<K>::budget = budget;
            const coopbench::Outcome o = coopbench::run_point<RefusingNative<K>, coopbench::Eratosthenes>(ctx);
            EXPECT_FALSE(o.ok) << what << " P=" << p << " budget " << budget;
            EXPECT_NE(o.reason.find("refused by the test"), std::string::npos) << o.reason;
            EXPECT_EQ(std::current_exception(), nullptr);
        }
    }
}

TEST(ExceptionWorkload, EratosthenesFailedStageParksInItsHandlerOnGlobal) {
    failed_stages_end_with_the_reason<coop::Scheduling::global>("global");
}
TEST(ExceptionWorkload, EratosthenesFailedStageParksInItsHandlerOnWorkStealing) {
    failed_stages_end_with_the_reason<coop::Scheduling::work_stealing>("work_stealing");
}
TEST(ExceptionWorkload, EratosthenesFailedStageParksInItsHandlerOnParasail) {
    failed_stages_end_with_the_reason<coop::Scheduling::parasail>("parasail");
}

}  // namespace
