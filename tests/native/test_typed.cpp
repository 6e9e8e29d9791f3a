// test_typed.cpp — the harness's native backends run coop's typed entry points
// (coop::Algo<K>: no run-time branch on the algorithm): while activities spawned through
// NativeBackendOf<K> spawn, yield, hand values over an unbuffered channel (park and wake-up)
// and join, no untyped entry point (coop::yield, spawn's start, internal::suspend /
// make_ready, finish: each calls the hook test_hooks::untyped_entry) is reached. The same
// program through the untyped adapter (NativeBackend, scheduling option) reaches them, so
// the count can fail. Linked to coop_hooked (COOP_TEST_HOOKS).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "workloads/all.hpp"

namespace {

std::atomic<std::uint64_t> g_untyped{0};

void count_untyped() { g_untyped.fetch_add(1, std::memory_order_relaxed); }

// exercise — on backend B with `processors` processors: pairs of activities, each pair a
// sender and a receiver over an unbuffered channel (every value a park or a hand-off), the
// sender yielding between sends; a spawn-all-then-join-all. Returns the untyped entries
// counted between the first spawn and the last join, and checks every value arrived.
template <class B>
std::uint64_t exercise(unsigned processors, const std::string& scheduling) {
    coopbench::RuntimeOptions o;
    o.processors = processors;
    o.extra["scheduling"] = scheduling;
    typename B::Runtime rt(o);
    std::uint64_t untyped = 0;
    long received = 0;
    rt.run([&] {
        constexpr int kPairs = 8;
        constexpr long kValues = 200;
        std::vector<std::unique_ptr<typename B::template Channel<long>>> chans;
        for (int i = 0; i < kPairs; ++i) chans.push_back(std::make_unique<typename B::template Channel<long>>(0));
        std::atomic<long> sum{0};
        g_untyped.store(0, std::memory_order_relaxed);
        coop::test_hooks::untyped_entry = &count_untyped;
        {
            std::vector<typename B::Thread> ts;
            for (int i = 0; i < kPairs; ++i) {
                auto* ch = chans[static_cast<std::size_t>(i)].get();
                ts.push_back(B::spawn([ch] {
                    for (long v = 1; v <= kValues; ++v) {
                        ch->send(v);
                        B::yield();
                    }
                    ch->close();
                }));
                ts.push_back(B::spawn([ch, &sum] {
                    while (auto v = ch->recv()) sum.fetch_add(*v, std::memory_order_relaxed);
                }));
            }
            for (auto& t : ts) t.join();
        }
        coop::test_hooks::untyped_entry = nullptr;
        untyped = g_untyped.load(std::memory_order_relaxed);
        received = sum.load(std::memory_order_relaxed);
        EXPECT_EQ(received, kPairs * kValues * (kValues + 1) / 2);
    });
    return untyped;
}

template <coop::Scheduling K>
void typed_reaches_no_untyped_entry(const std::string& scheduling) {
    coop_test::Watchdog dog("typed entry points", 120);
    for (unsigned p : {1u, 2u, 4u}) {
        EXPECT_EQ(exercise<coopbench::NativeBackendOf<K>>(p, scheduling), 0u)
            << scheduling << " P=" << p << ": the typed backend reached an untyped entry point";
        // The control: the same program through the untyped adapter counts its entries.
        EXPECT_GT(exercise<coopbench::NativeBackend>(p, scheduling), 0u) << scheduling << " P=" << p;
    }
}

}  // namespace

TEST(TypedBackend, GlobalReachesNoUntypedEntry) { typed_reaches_no_untyped_entry<coop::Scheduling::global>("global"); }
TEST(TypedBackend, WorkStealingReachesNoUntypedEntry) {
    typed_reaches_no_untyped_entry<coop::Scheduling::work_stealing>("work_stealing");
}
TEST(TypedBackend, ParasailReachesNoUntypedEntry) {
    typed_reaches_no_untyped_entry<coop::Scheduling::parasail>("parasail");
}

// A typed backend refuses another algorithm's option (its entry points assume its own).
TEST(TypedBackend, RefusesAnotherScheduling) {
    coopbench::RuntimeOptions o;
    o.extra["scheduling"] = "parasail";
    EXPECT_THROW((void)coopbench::NativeBackendOf<coop::Scheduling::work_stealing>::options(o), std::invalid_argument);
    o.extra["scheduling"] = "work_stealing";
    EXPECT_EQ(coopbench::NativeBackendOf<coop::Scheduling::work_stealing>::options(o).scheduling,
              coop::Scheduling::work_stealing);
}

// The harness's runner on the typed backends: a workload point completes and checks itself.
template <class B>
void run_point_ok() {
    coopbench::Context ctx;
    ctx.params = {{"T", "4"}, {"K", "2000"}};
    ctx.options.processors = 2;
    const auto out = coopbench::run_point<B, coopbench::Switch>(ctx);
    EXPECT_TRUE(out.ok) << out.reason;
    coopbench::Context c2;
    c2.params = {{"N", "2000"}};
    c2.options.processors = 2;
    const auto out2 = coopbench::run_point<B, coopbench::Create>(c2);
    EXPECT_TRUE(out2.ok) << out2.reason;
}
TEST(TypedBackend, RunsWorkloads) {
    coop_test::Watchdog dog("typed workloads", 120);
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::global>>();
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::work_stealing>>();
    run_point_ok<coopbench::NativeBackendOf<coop::Scheduling::parasail>>();
}
