// The application workloads (workloads/apps/): every app at its tiny plan on pthreads and
// stdthread (directly through run_point) and on every backend in the registry (through the
// same runners the driver uses), their self-checks (inject_fault must fail the point), the
// paper's Eratosthenes answer, and refused spawns (the point fails cleanly, nothing hangs).
// The apps that pass values (City, Eratosthenes, Producer, TokenRing) run both variants of
// the parameter `via` (workloads/apps/via.hpp) in every plan, so each of the tests above
// covers both; a backend with a channel of its own shows which variant went through it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/support/grid.hpp"
#include "tests/support/watchdog.hpp"
#include "workloads/apps/all.hpp"
#include "workloads/apps/via.hpp"

using namespace coopbench;
using coopbench::test::Watchdog;

namespace {

template <class W>
std::string workload_name() {
    return W::info(Machine{coopbench::test::processors()}).name;
}

template <class W>
std::vector<coopbench::test::GridPoint> tiny_points() {
    const auto info = W::info(Machine{coopbench::test::processors()});
    const auto it = info.plans.find("tiny");
    return it == info.plans.end() ? std::vector<coopbench::test::GridPoint>{} : coopbench::test::expand_grids(it->second);
}

Context context_for(const coopbench::test::GridPoint& p, bool fault = false) {
    Context ctx;
    ctx.params = p.params;
    ctx.options.processors = p.processors;
    ctx.inject_fault = fault;
    return ctx;
}

// RefusingBackend — stdthread whose spawn refuses once `budget` threads were spawned (the
// runtime's own main thread is not counted): a stand-in for a system out of threads.
struct RefusingBackend : StdThreadBackend {
    static inline std::atomic<long> budget{0};
    template <class F>
    static Thread spawn(F&& fn) {
        if (budget.fetch_sub(1) <= 0) throw SpawnError("refused by the test");
        return StdThreadBackend::spawn(std::forward<F>(fn));
    }
};
static_assert(Backend<RefusingBackend>);

// CountingChannelBackend — stdthread with a channel of its own (HasChannel): GenericChannel
// that counts its sends, so a test sees whether a point went through channel_t at all.
struct CountingChannelBackend : StdThreadBackend {
    static inline std::atomic<long> sends{0};
    template <class T>
    class Channel : public apps::GenericChannel<CountingChannelBackend, T> {
      public:
        static constexpr std::string_view kind = "counting (a test's)";
        explicit Channel(std::size_t capacity) : apps::GenericChannel<CountingChannelBackend, T>(capacity) {}
        void send(T v) {
            sends.fetch_add(1, std::memory_order_relaxed);  // a tally read after the joins
            apps::GenericChannel<CountingChannelBackend, T>::send(std::move(v));
        }
    };
};
static_assert(Backend<CountingChannelBackend> && HasChannel<CountingChannelBackend>);
static_assert(std::is_same_v<apps::channel_t<CountingChannelBackend, long>, CountingChannelBackend::Channel<long>>);

// exchanges_values — the apps with the parameter `via`.
template <class W>
constexpr bool exchanges_values() {
    return std::is_same_v<W, City> || std::is_same_v<W, Eratosthenes> || std::is_same_v<W, Producer> ||
           std::is_same_v<W, TokenRing>;
}

template <class W>
class AppTest : public ::testing::Test {};
using Apps = ::testing::Types<City, Eratosthenes, Mandelbrot, Matrix, News, Producer, TokenRing>;
class AppNames {
  public:
    template <class T>
    static std::string GetName(int) {
        return workload_name<T>();
    }
};
TYPED_TEST_SUITE(AppTest, Apps, AppNames);

template <Backend B, class W>
void expect_tiny_plan_passes() {
    const auto points = tiny_points<W>();
    ASSERT_FALSE(points.empty()) << workload_name<W>() << " has no tiny plan";
    for (const auto& p : points) {
        Watchdog dog(std::string(B::name) + "/" + workload_name<W>() + " " + coopbench::test::describe(p.params));
        const Outcome o = run_point<B, W>(context_for(p));
        EXPECT_TRUE(o.ok) << B::name << " " << coopbench::test::describe(p.params) << ": " << o.reason;
        EXPECT_GT(o.seconds, 0.0);
        EXPECT_DOUBLE_EQ(o.value, o.seconds * 1e3);  // unit "ms"
    }
}

template <Backend B, class W>
void expect_fault_detected() {
    for (const auto& p : tiny_points<W>()) {
        Watchdog dog(std::string(B::name) + "/" + workload_name<W>() + " fault");
        const Outcome o = run_point<B, W>(context_for(p, true));
        EXPECT_FALSE(o.ok) << B::name << " " << coopbench::test::describe(p.params)
                           << ": the self-check missed an injected fault";
        EXPECT_NE(o.reason.find("self-check failed"), std::string::npos) << o.reason;
    }
}

}  // namespace

TYPED_TEST(AppTest, InfoDescribesThePaperWorkload) {
    const auto info = TypeParam::info(Machine{coopbench::test::processors()});
    EXPECT_EQ(info.unit, "ms");
    EXPECT_NE(info.origin.find("Negele"), std::string::npos);
    for (const char* plan : {"tiny", "quick", "paper"}) {
        ASSERT_TRUE(info.plans.count(plan)) << plan;
        // Every grid names only declared parameters (or processors) and sets all of them.
        for (const auto& p : coopbench::test::expand_grids(info.plans.at(plan))) {
            EXPECT_EQ(p.params.size(), info.params.size()) << plan << " " << coopbench::test::describe(p.params);
            for (const auto& spec : info.params) {
                ASSERT_TRUE(p.params.count(spec.name)) << plan << " lacks " << spec.name;
                const std::string& v = p.params.at(spec.name);
                if (spec.choices.empty()) {
                    EXPECT_GE(std::stoll(v), spec.min) << plan << " " << spec.name;
                } else {
                    EXPECT_NE(std::find(spec.choices.begin(), spec.choices.end(), v), spec.choices.end())
                        << plan << " " << spec.name << "=" << v;
                }
            }
        }
    }
}

// The apps that pass values declare `via` (default monitor, the paper's program) and run
// both variants in every plan; the others (Mandelbrot, Matrix: no values pass; News: a
// broadcast board, no buffer) have no `via`.
TYPED_TEST(AppTest, EveryPlanRunsBothVariantsOfTheAppsThatPassValues) {
    const auto info = TypeParam::info(Machine{coopbench::test::processors()});
    const auto spec = std::find_if(info.params.begin(), info.params.end(), [](const ParamSpec& s) { return s.name == "via"; });
    if (!exchanges_values<TypeParam>()) {
        EXPECT_EQ(spec, info.params.end()) << info.name << " passes no values through a buffer";
        return;
    }
    ASSERT_NE(spec, info.params.end()) << info.name << " lacks the parameter via";
    EXPECT_EQ(spec->default_value, "monitor");
    EXPECT_EQ(spec->choices, (std::vector<std::string>{"monitor", "channel"}));
    for (const char* plan : {"tiny", "quick", "paper"}) {
        std::set<std::string> seen;
        for (const auto& p : coopbench::test::expand_grids(info.plans.at(plan))) seen.insert(p.params.at("via"));
        EXPECT_EQ(seen, (std::set<std::string>{"monitor", "channel"})) << info.name << " plan " << plan;
    }
}

// via=channel goes through the backend's channel (channel_t), via=monitor never does, and
// both pass their self-checks and catch the injected fault.
TYPED_TEST(AppTest, ViaChannelUsesTheBackendsChannelAndMonitorDoesNot) {
    if constexpr (exchanges_values<TypeParam>()) {
        for (const auto& p : tiny_points<TypeParam>()) {
            const bool channel = p.params.at("via") == "channel";
            for (bool fault : {false, true}) {
                Watchdog dog(workload_name<TypeParam>() + " counting " + coopbench::test::describe(p.params));
                CountingChannelBackend::sends = 0;
                const Outcome o = run_point<CountingChannelBackend, TypeParam>(context_for(p, fault));
                EXPECT_EQ(o.ok, !fault) << coopbench::test::describe(p.params) << ": " << o.reason;
                if (fault) {
                    EXPECT_NE(o.reason.find("self-check failed"), std::string::npos) << o.reason;
                }
                if (channel) {
                    EXPECT_GT(CountingChannelBackend::sends.load(), 0) << coopbench::test::describe(p.params);
                } else {
                    EXPECT_EQ(CountingChannelBackend::sends.load(), 0) << coopbench::test::describe(p.params);
                }
            }
        }
    }
}

// The exact number of values each app sends (per variant, the same program): Producer N*K,
// City N*K, TokenRing N*K + main's first token, Eratosthenes every number the generator
// and each stage passes on plus one terminator per channel.
TEST(AppsVia, ChannelVariantSendsWhatTheMonitorProgramPuts) {
    Watchdog dog("via counts");
    Context ctx;
    ctx.options.processors = coopbench::test::processors();
    const auto sends = [&](auto w, Params params) {
        ctx.params = std::move(params);
        CountingChannelBackend::sends = 0;
        const Outcome o = run_point<CountingChannelBackend, decltype(w)>(ctx);
        EXPECT_TRUE(o.ok) << o.reason;
        return CountingChannelBackend::sends.load();
    };
    EXPECT_EQ(sends(Producer{}, {{"N", "3"}, {"C", "2"}, {"K", "100"}, {"via", "channel"}}), 300);
    EXPECT_EQ(sends(City{}, {{"N", "4"}, {"K", "5"}, {"C", "3"}, {"via", "channel"}}), 20);
    EXPECT_EQ(sends(TokenRing{}, {{"N", "5"}, {"K", "7"}, {"via", "channel"}}), 36);
    // N = 10: the generator sends 2..10 and 0 (10); stage 2 passes 3,5,7,9,0 (5); stage 3
    // 5,7,0 (3); stage 5 7,0 (2); stage 7 0 (1); the last stage sends nothing: 21.
    EXPECT_EQ(sends(Eratosthenes{}, {{"N", "10"}, {"C", "1"}, {"via", "channel"}}), 21);
    EXPECT_EQ(sends(Eratosthenes{}, {{"N", "10"}, {"C", "1"}, {"via", "monitor"}}), 0);
    EXPECT_EQ(sends(Eratosthenes{}, {{"N", "10"}, {"C", "1"}}), 0);  // no via: the paper's program
}

TYPED_TEST(AppTest, TinyPlanOnPthreads) { expect_tiny_plan_passes<PthreadsBackend, TypeParam>(); }
TYPED_TEST(AppTest, TinyPlanOnStdthread) { expect_tiny_plan_passes<StdThreadBackend, TypeParam>(); }
TYPED_TEST(AppTest, InjectedFaultFailsOnPthreads) { expect_fault_detected<PthreadsBackend, TypeParam>(); }
TYPED_TEST(AppTest, InjectedFaultFailsOnStdthread) { expect_fault_detected<StdThreadBackend, TypeParam>(); }

// run_registered — run one point through a registered backend's runner. A backend may
// refuse a runtime configuration in-process (boostfiber/round_robin runs on one processor
// only; boostfiber/work_stealing once per process): run_point reports that as a failure
// whose reason starts with "runtime: ". Then retry on one processor; if the runtime still
// refuses, return nothing (the backend cannot run here again; the driver isolates points)
// — but a backend refusing before it ever ran in this process is a failure.
std::optional<Outcome> run_registered(const BackendEntry& b, RunFn runner, Context ctx) {
    static std::set<std::string> ran_once;  // backends that ran a point in this process
    ctx.options.extra = b.fixed;
    Outcome o = runner(ctx);
    const auto refused = [](const Outcome& x) { return !x.ok && x.reason.rfind("runtime: ", 0) == 0; };
    if (refused(o) && ctx.options.processors != 1) {
        ctx.options.processors = 1;
        o = runner(ctx);
    }
    if (refused(o)) {
        EXPECT_TRUE(ran_once.count(b.name)) << b.name << " refused its runtime on first use: " << o.reason;
        return std::nullopt;
    }
    ran_once.insert(b.name);
    return o;
}

// Every backend linked into this binary (native, boostfiber, ... once they register) runs
// every app's tiny plan through its registered runner, and catches the injected fault.
TYPED_TEST(AppTest, TinyPlanOnEveryRegisteredBackend) {
    const std::string name = workload_name<TypeParam>();
    const auto& backends = Registry::instance().backends();
    ASSERT_NE(Registry::instance().backend("pthreads"), nullptr);
    ASSERT_NE(Registry::instance().backend("stdthread"), nullptr);
    std::string ran;
    for (const auto& b : backends) {
        const auto runner = b.runners.find(name);
        if (runner == b.runners.end()) continue;  // the workload says it does not support b
        if (coopbench::test::tsan && b.family == "boostfiber") {
            // Debian's Boost.Fiber switches stacks without telling TSan (boostorg/fiber#289,
            // #333): TSan reports false races and can crash; tests/boostfiber is no-tsan too.
            std::printf("note: %s skipped under TSan (fiber switches invisible to it)\n", b.name.c_str());
            continue;
        }
        ran += " " + b.name;
        for (const auto& p : tiny_points<TypeParam>()) {
            for (bool fault : {false, true}) {
                Watchdog dog(b.name + "/" + name + " " + coopbench::test::describe(p.params));
                const auto o = run_registered(b, runner->second, context_for(p, fault));
                if (!o) {
                    std::printf("note: %s refused its runtime in this process; not run here\n", b.name.c_str());
                    continue;
                }
                if (fault) {
                    EXPECT_FALSE(o->ok) << b.name << " " << coopbench::test::describe(p.params) << ": fault missed";
                    EXPECT_NE(o->reason.find("self-check failed"), std::string::npos) << b.name << ": " << o->reason;
                } else {
                    EXPECT_TRUE(o->ok) << b.name << " " << coopbench::test::describe(p.params) << ": " << o->reason;
                }
            }
        }
    }
    std::printf("%s ran on:%s\n", name.c_str(), ran.c_str());
}

TEST(AppsRegistry, AllSevenAppsAreListedAndRunnableOnPthreads) {
    const auto* b = Registry::instance().backend("pthreads");
    ASSERT_NE(b, nullptr);
    for (const char* w : {"city", "eratosthenes", "mandelbrot", "matrix", "news", "producer", "tokenring"}) {
        EXPECT_TRUE(Registry::instance().workloads().count(w)) << w;
        EXPECT_TRUE(b->runners.count(w)) << w;
    }
}

// A refused spawn makes the point fail with the backend's reason and never hangs, whichever
// thread is refused (for Eratosthenes also the stages' own spawns: the drain path).
TYPED_TEST(AppTest, RefusedSpawnFailsCleanly) {
    for (const auto& p : tiny_points<TypeParam>()) {
        for (long budget : {0L, 1L, 2L, 3L, 7L}) {
            Watchdog dog(workload_name<TypeParam>() + " refused after " + std::to_string(budget));
            RefusingBackend::budget = budget;
            const Outcome o = run_point<RefusingBackend, TypeParam>(context_for(p));
            if (budget == 0) {
                EXPECT_FALSE(o.ok) << coopbench::test::describe(p.params);
            }
            if (!o.ok) {
                EXPECT_NE(o.reason.find("refused by the test"), std::string::npos) << o.reason;
            }
        }
    }
}

TEST(Eratosthenes, FindsThePapersPrimeCount) {
    EXPECT_EQ(detail::sequential_primes(10000).size(), 1229u);  // Table 1's N
    EXPECT_EQ(detail::sequential_primes(2).size(), 1u);
    EXPECT_TRUE(detail::sequential_primes(1).empty());
    Watchdog dog("eratosthenes N=1000");
    Context ctx;
    ctx.options.processors = coopbench::test::processors();
    ctx.params = {{"N", "1000"}, {"C", "1"}};
    const Outcome o = run_point<PthreadsBackend, Eratosthenes>(ctx);
    ASSERT_TRUE(o.ok) << o.reason;
    EXPECT_EQ(o.counters.at("primes"), 168.0);
    RefusingBackend::budget = 1000;
    ctx.params = {{"N", "100"}, {"C", "3"}};  // larger channels: the same answer
    const Outcome wide = run_point<RefusingBackend, Eratosthenes>(ctx);
    ASSERT_TRUE(wide.ok) << wide.reason;
    EXPECT_EQ(wide.counters.at("primes"), 25.0);
}

TEST(Matrix, SweepScalesWithTheCores) {
    for (unsigned cores : {1u, 2u, 8u, 64u}) {
        const auto info = Matrix::info(Machine{cores});
        const auto& ms = info.plans.at("quick").at(0).at("M");
        std::vector<long> m;
        for (const auto& v : ms) m.push_back(std::stol(v));
        EXPECT_EQ(m.front(), 1);
        EXPECT_GT(m.back(), 2L * cores) << "M must go beyond the cores";
        EXPECT_TRUE(std::is_sorted(m.begin(), m.end()));
        EXPECT_EQ(std::adjacent_find(m.begin(), m.end()), m.end()) << "duplicate M";
        for (long want : {1L, static_cast<long>(cores), static_cast<long>(cores) + 1})
            EXPECT_NE(std::find(m.begin(), m.end(), want), m.end()) << cores << " cores: no M=" << want;
        EXPECT_LE(m.size(), 32u) << "the sweep must stay affordable on many cores";
        EXPECT_EQ(info.plans.at("paper").at(0).at("M"), ms);
    }
}

TEST(Matrix, UnevenRowSplitStillCorrect) {
    Watchdog dog("matrix uneven");
    Context ctx;
    ctx.options.processors = coopbench::test::processors();
    ctx.params = {{"N", "37"}, {"M", "5"}};  // 37 rows over 5 threads, and more threads than rows
    EXPECT_TRUE((run_point<PthreadsBackend, Matrix>(ctx).ok));
    ctx.params = {{"N", "3"}, {"M", "7"}};
    EXPECT_TRUE((run_point<StdThreadBackend, Matrix>(ctx).ok));
}
