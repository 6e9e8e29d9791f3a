// test_switch_registers.cpp — values live in registers across a switch come back intact.
//
// coop's switch (coop/src/switch.hpp, jump) is, on x86-64 with COOP_CACS, an inline asm that
// saves only %rsp, the resume address and %rbp, and tells the compiler that every other
// register is clobbered; the compiler then keeps across it only what is live there, in the
// caller's frame. A register missing from that clobber list is one the compiler believes
// the jump preserves: a value it keeps there comes back holding whatever the context that
// ran in between left in it. Built at -O2 (tests/native/CMakeLists.txt), where the compiler
// keeps a hot loop's values in registers.
//
// - SwitchJump.LiveValuesSurviveAJumpInAHotLoop: two contexts (the test's thread and one on a
//   stack of its own) bounce with `jump` itself, each in the same loop that keeps 12 integers
//   and 4 doubles live across every jump (each evolves by a step that depends on its old
//   value, so none can be recomputed after the jump), with different seeds; after the loop
//   each side's values must equal the same loop run without jumps. Killed: the mutant
//   tests/mutants/cacs_clobber_r12.patch (%r12 dropped from the clobber list): the loop keeps
//   one of its values in %r12 across the jump, and the other side overwrites it.
// - SwitchRegisters.LiveValuesSurviveYieldsAndParks: the same values in activities that
//   yield, and park on a contended coop::Mutex, on every algorithm at one and many
//   processors: the runtime's own switch sites (yield, suspend, the idle loop) with their
//   frames around the asm; a callee-saved register of the activity's loop must come back
//   from coop::yield() as it was.
// Both pass with Boost.Context's jump_fcontext too (COOP_CACS=OFF, or not x86-64).
// - SwitchImplementation.TheRoundingModeIsCarriedOnlyByJumpFcontext: which jump the library
//   linked in really makes, seen from an activity: the one thing the two differ in that an
//   activity can see (switch.hpp, jump). Activity A sets FE_UPWARD and yields to B, which had
//   yielded with the default mode: jump_fcontext restores B's own mode (its MXCSR and x87
//   control word, saved at B's yield), the context-aware switch leaves the worker's (A's).
//   So the `_jump` twin of this test (tests/native/CMakeLists.txt: linked against coop_jump)
//   fails if coop_jump switches with the context-aware jump, and this binary fails if coop
//   does not; the twin also checks at compile time that this file sees COOP_CACS_ACTIVE 0.
//   x86-64 only (Boost.Context's jump_fcontext elsewhere need not carry the rounding mode).
// - StackColouring.FreshActivitiesStartAtSixteenOffsetsOrOneWhenTurnedOff: the first frames
//   of 16 activities alive at once (P=1: consecutive colours) sit at 16 different offsets
//   within a page by default (stack.hpp kStackColours), at one with COOP_STACK_COLOURS=1 (the
//   switch the colouring's measurement turns off with, docs/scheduler-roadmap.md).
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cfenv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "coop/coop.hpp"
#include "coop/src/stack.hpp"
#include "coop/src/switch.hpp"
#include "tests/native/support.hpp"

// COOPBENCH_EXPECT_JUMP_FCONTEXT: set on the `_jump` twin (tests/native/CMakeLists.txt).
#if defined(COOPBENCH_EXPECT_JUMP_FCONTEXT)
static_assert(!COOP_CACS_ACTIVE, "the _jump twin must see Boost.Context's jump_fcontext (coop_jump: COOP_CACS=0)");
#endif

namespace {

namespace ci = coop::internal;

constexpr int kWatchdogSeconds = 60;

// Values — what one loop keeps live: 12 integers (more than the callee-saved registers) and
// 4 doubles.
struct Values {
    std::uint64_t v[12];
    double d[4];
};

// step — one round of the loop's values (a multiply-add per integer, per double).
[[gnu::always_inline]] inline void step(std::uint64_t& a, std::uint64_t k) { a = a * 6364136223846793005ull + (2 * k + 1); }
[[gnu::always_inline]] inline void step(double& a, double k) { a = a * 0.9990234375 + k; }

// reference — the loop without switches.
[[gnu::noinline]] Values reference(std::uint64_t seed, long rounds) {
    Values x;
    for (int k = 0; k < 12; ++k) x.v[k] = seed + 977u * static_cast<unsigned>(k);
    for (int k = 0; k < 4; ++k) x.d[k] = static_cast<double>(seed % 1000) + k;
    std::uint64_t v0 = x.v[0], v1 = x.v[1], v2 = x.v[2], v3 = x.v[3], v4 = x.v[4], v5 = x.v[5], v6 = x.v[6],
                  v7 = x.v[7], v8 = x.v[8], v9 = x.v[9], v10 = x.v[10], v11 = x.v[11];
    double d0 = x.d[0], d1 = x.d[1], d2 = x.d[2], d3 = x.d[3];
    for (long i = 0; i < rounds; ++i) {
        asm volatile("" ::: "memory");  // the same shape as the loops below: a barrier per round
        step(v0, 0), step(v1, 1), step(v2, 2), step(v3, 3), step(v4, 4), step(v5, 5);
        step(v6, 6), step(v7, 7), step(v8, 8), step(v9, 9), step(v10, 10), step(v11, 11);
        step(d0, 1.0), step(d1, 2.0), step(d2, 3.0), step(d3, 4.0);
    }
    return Values{{v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11}, {d0, d1, d2, d3}};
}

bool same(const Values& a, const Values& b) {
    for (int k = 0; k < 12; ++k)
        if (a.v[k] != b.v[k]) return false;
    for (int k = 0; k < 4; ++k)
        if (a.d[k] != b.d[k]) return false;  // the same operations in the same order: exact
    return true;
}

// ---- SwitchJump: two contexts and the jump alone -------------------------------------------

// Side — one of the two contexts: its stack's bounds and TSan fiber (the sanitizers are told
// of every jump, as switch_to tells them).
struct Side {
    void* bottom = nullptr;
    std::size_t size = 0;
    void* tsan_fiber = nullptr;
};

struct Bounce {
    Side sides[2];  // 0: the test's thread, 1: the context on `stack`
    long rounds = 0;
    std::uint64_t seed[2] = {0x1234567, 0x7654321};
    Values out[2] = {};
    std::vector<char> stack;
};

// bounce — jump to the other side (`to`); `finishing`: the caller is never resumed (ASan
// frees its fake stack).
[[gnu::always_inline]] inline ci::Transfer bounce(void* to, const Side& other, bool finishing = false) {
#if COOP_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(finishing ? nullptr : &fake, other.bottom, other.size);
#else
    (void)finishing;
#endif
#if COOP_TSAN
    __tsan_switch_to_fiber(other.tsan_fiber, 0);
#else
    (void)other;
#endif
    ci::Transfer t = ci::jump(to, nullptr);
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    return t;
}

// hot_loop — the reference loop with a jump to the other side in every round; `t.fctx`: the
// other side's context (each jump returns the one that resumed us).
[[gnu::noinline]] Values hot_loop(ci::Transfer& t, const Side& other, std::uint64_t seed, long rounds) {
    Values x;
    for (int k = 0; k < 12; ++k) x.v[k] = seed + 977u * static_cast<unsigned>(k);
    for (int k = 0; k < 4; ++k) x.d[k] = static_cast<double>(seed % 1000) + k;
    std::uint64_t v0 = x.v[0], v1 = x.v[1], v2 = x.v[2], v3 = x.v[3], v4 = x.v[4], v5 = x.v[5], v6 = x.v[6],
                  v7 = x.v[7], v8 = x.v[8], v9 = x.v[9], v10 = x.v[10], v11 = x.v[11];
    double d0 = x.d[0], d1 = x.d[1], d2 = x.d[2], d3 = x.d[3];
    for (long i = 0; i < rounds; ++i) {
        t = bounce(t.fctx, other);
        step(v0, 0), step(v1, 1), step(v2, 2), step(v3, 3), step(v4, 4), step(v5, 5);
        step(v6, 6), step(v7, 7), step(v8, 8), step(v9, 9), step(v10, 10), step(v11, 11);
        step(d0, 1.0), step(d1, 2.0), step(d2, 3.0), step(d3, 4.0);
    }
    return Values{{v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11}, {d0, d1, d2, d3}};
}

Bounce* g_bounce = nullptr;  // the one test's state, for the other side's entry

// other_side — the second context's first function: its loop, then back for good.
void other_side(ci::Transfer t) noexcept {
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    Bounce& b = *g_bounce;
    b.out[1] = hot_loop(t, b.sides[0], b.seed[1], b.rounds);
    bounce(t.fctx, b.sides[0], /*finishing=*/true);
    // Never resumed: the test's thread jumps here once more than this side's loop jumps back
    // only if a jump lost the loop's state (its counter in a register the jump did not keep).
    std::fprintf(stderr, "SwitchJump: the second context was resumed after its end: a jump lost a live register\n");
    std::abort();
}

TEST(SwitchJump, LiveValuesSurviveAJumpInAHotLoop) {
    coop_test::Watchdog dog("SwitchJump", kWatchdogSeconds);
    Bounce b;
    g_bounce = &b;
    b.rounds = coop_test::scaled(200000, 20);
    b.stack.resize(256 * 1024);
#if COOP_ASAN
    pthread_attr_t attr;
    ASSERT_EQ(pthread_getattr_np(pthread_self(), &attr), 0);
    pthread_attr_getstack(&attr, &b.sides[0].bottom, &b.sides[0].size);
    pthread_attr_destroy(&attr);
#endif
#if COOP_TSAN
    b.sides[0].tsan_fiber = __tsan_get_current_fiber();
    b.sides[1].tsan_fiber = __tsan_create_fiber(0);
#endif
    b.sides[1].bottom = b.stack.data();
    b.sides[1].size = b.stack.size();
    ci::Transfer t{ci::make_context(b.stack.data() + b.stack.size(), b.stack.size(), &other_side), nullptr};
    b.out[0] = hot_loop(t, b.sides[1], b.seed[0], b.rounds);
    bounce(t.fctx, b.sides[1]);  // the other side's last round, and its end
#if COOP_TSAN
    __tsan_destroy_fiber(b.sides[1].tsan_fiber);
#endif
    g_bounce = nullptr;
    EXPECT_TRUE(same(b.out[0], reference(b.seed[0], b.rounds))) << "the test thread's values changed across a jump";
    EXPECT_TRUE(same(b.out[1], reference(b.seed[1], b.rounds))) << "the second context's values changed across a jump";
}

// ---- SwitchRegisters: the runtime's switch sites -------------------------------------------

struct Param {
    coop::Scheduling scheduling;
    unsigned processors;
};

// activity_loop — the reference loop with a coop::yield() in every round, and every 8th
// round a lock of `m` held across a yield (so the others park on it).
[[gnu::noinline]] Values activity_loop(coop::Mutex& m, std::uint64_t seed, long rounds) {
    Values x;
    for (int k = 0; k < 12; ++k) x.v[k] = seed + 977u * static_cast<unsigned>(k);
    for (int k = 0; k < 4; ++k) x.d[k] = static_cast<double>(seed % 1000) + k;
    std::uint64_t v0 = x.v[0], v1 = x.v[1], v2 = x.v[2], v3 = x.v[3], v4 = x.v[4], v5 = x.v[5], v6 = x.v[6],
                  v7 = x.v[7], v8 = x.v[8], v9 = x.v[9], v10 = x.v[10], v11 = x.v[11];
    double d0 = x.d[0], d1 = x.d[1], d2 = x.d[2], d3 = x.d[3];
    for (long i = 0; i < rounds; ++i) {
        if ((i & 7) == 0) {
            m.lock();
            coop::yield();
            m.unlock();
        } else {
            coop::yield();
        }
        step(v0, 0), step(v1, 1), step(v2, 2), step(v3, 3), step(v4, 4), step(v5, 5);
        step(v6, 6), step(v7, 7), step(v8, 8), step(v9, 9), step(v10, 10), step(v11, 11);
        step(d0, 1.0), step(d1, 2.0), step(d2, 3.0), step(d3, 4.0);
    }
    return Values{{v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11}, {d0, d1, d2, d3}};
}

class SwitchRegisters : public ::testing::TestWithParam<Param> {};

TEST_P(SwitchRegisters, LiveValuesSurviveYieldsAndParks) {
    coop_test::Watchdog dog("SwitchRegisters", kWatchdogSeconds);
    constexpr int kActivities = 8;
    const long rounds = coop_test::scaled(4000, 10);
    coop::Options o{.processors = GetParam().processors};
    o.scheduling = GetParam().scheduling;
    std::vector<Values> out(kActivities);
    {
        coop::Runtime rt(o);
        rt.run([&] {
            coop::Mutex m;
            std::vector<coop::Thread> ts;
            for (int a = 0; a < kActivities; ++a)
                ts.push_back(coop::spawn([&, a] { out[a] = activity_loop(m, 1000003u * (a + 1), rounds); }));
            for (auto& t : ts) t.join();
        });
    }
    for (int a = 0; a < kActivities; ++a)
        EXPECT_TRUE(same(out[a], reference(1000003u * (a + 1), rounds))) << "activity " << a;
}

std::vector<Param> params() {
    std::vector<Param> v;
    for (auto s : {coop::Scheduling::global, coop::Scheduling::work_stealing, coop::Scheduling::parasail})
        for (unsigned p : {1u, coop_test::many_processors()}) v.push_back({s, p});
    return v;
}
std::string name(const ::testing::TestParamInfo<Param>& info) {
    const Param& p = info.param;
    std::string s = p.scheduling == coop::Scheduling::global           ? "global"
                    : p.scheduling == coop::Scheduling::work_stealing ? "work_stealing"
                                                                       : "parasail";
    return s + "_P" + std::to_string(p.processors);
}
INSTANTIATE_TEST_SUITE_P(Policies, SwitchRegisters, ::testing::ValuesIn(params()), name);

// ---- SwitchImplementation: which jump the library makes ------------------------------------

TEST(SwitchImplementation, TheRoundingModeIsCarriedOnlyByJumpFcontext) {
#if !defined(__x86_64__)
    GTEST_SKIP() << "x86-64 only: where coop has both jumps";
#else
    coop_test::Watchdog dog("SwitchImplementation", kWatchdogSeconds);
    ASSERT_EQ(std::fegetround(), FE_TONEAREST);
    int seen_by_a = -1, seen_by_b = -1;
    {
        coop::Runtime rt(coop::Options{.processors = 1});  // one worker: A and B share its registers
        rt.run([&] {
            bool b_started = false, a_set = false, b_seen = false;  // P=1: one activity at a time
            coop::Thread b = coop::spawn([&] {
                b_started = true;
                while (!a_set) coop::yield();  // suspended with the default mode
                seen_by_b = std::fegetround();
                b_seen = true;
            });
            coop::Thread a = coop::spawn([&] {
                while (!b_started) coop::yield();  // B's context exists: not made from A's mode
                std::fesetround(FE_UPWARD);
                a_set = true;
                while (!b_seen) coop::yield();
                seen_by_a = std::fegetround();
                std::fesetround(FE_TONEAREST);  // the worker's mode under CACS: put back
            });
            a.join();
            b.join();
        });
    }
    EXPECT_EQ(seen_by_a, FE_UPWARD) << "A's own mode after its yields, with either jump";
    EXPECT_EQ(seen_by_b, COOP_CACS_ACTIVE ? FE_UPWARD : FE_TONEAREST)
        << (COOP_CACS_ACTIVE ? "expected the context-aware switch (the worker's mode, A's), got B's own: jump_fcontext?"
                             : "expected jump_fcontext (B's own mode), got A's: the context-aware switch?");
#endif
}

// ---- StackColouring ------------------------------------------------------------------------

// page_offset_of_a_local — where this activity's frame lies within its page (every activity
// calls it at the same depth from its trampoline).
[[gnu::noinline]] std::uintptr_t page_offset_of_a_local() {
    volatile char here = 0;
    return reinterpret_cast<std::uintptr_t>(&here) % 4096;
}

// offsets — the distinct page offsets of 16 activities' frames, all alive at once (each
// yields until every one has recorded its own, so none reuses another's stack).
std::size_t distinct_offsets() {
    constexpr int kN = 16;
    std::vector<std::uintptr_t> at(kN);
    coop::Runtime rt(coop::Options{.processors = 1});
    rt.run([&] {
        int recorded = 0;
        std::vector<coop::Thread> ts;
        for (int a = 0; a < kN; ++a)
            ts.push_back(coop::spawn([&, a] {
                at[a] = page_offset_of_a_local();
                ++recorded;  // P=1: one activity at a time
                while (recorded < kN) coop::yield();
            }));
        for (auto& t : ts) t.join();
    });
    std::sort(at.begin(), at.end());
    return static_cast<std::size_t>(std::unique(at.begin(), at.end()) - at.begin());
}

TEST(StackColouring, FreshActivitiesStartAtSixteenOffsetsOrOneWhenTurnedOff) {
    coop_test::Watchdog dog("StackColouring", kWatchdogSeconds);
    EXPECT_EQ(distinct_offsets(), ci::kStackColours);
    coop_test::ScopedEnv off("COOP_STACK_COLOURS", "1");
    EXPECT_EQ(distinct_offsets(), 1u);
}

}  // namespace
