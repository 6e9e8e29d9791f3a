// test_policies.cpp — the processor-local policies (ws_ring.hpp, parasail_deque.hpp) at
// the runtime's ring size (kRingCapacity), driven without the runtime: single-thread
// behaviour (round robin for yields, runnext first and
// inheriting, fairness of the global queue every 61 picks, a ping-pong pair cannot starve a
// yielding activity, priorities) and an OS-thread stress where each thread plays one
// processor: every activity runs exactly R times, never on two processors at once, none is
// lost (watchdog).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "coop/src/ws/parasail_deque.hpp"
#include "coop/src/ws/ws_ring.hpp"
#include "tests/native_ws/ws_test_util.hpp"

using coop::Priority;
using coop::internal::Activity;
using coop::ws::kGlobalCheckInterval;
using coop::ws::kMaxRunnextStreak;

namespace {

struct TA : Activity {
    int id = 0;
    std::atomic<bool> running{false};
    std::atomic<int> runs{0};
};

template <class Alg>
class PolicyTest : public ::testing::Test {};
using Policies = ::testing::Types<coop::ws::WsRingAlgorithm, coop::ws::ParasailDequeAlgorithm>;
TYPED_TEST_SUITE(PolicyTest, Policies);

// A yield goes behind the processor's other ready activities (round robin).
TYPED_TEST(PolicyTest, YieldIsRoundRobin) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA a, b, c;
    policy.yielded(self, &a);
    policy.yielded(self, &b);
    policy.yielded(self, &c);
    std::vector<Activity*> order;
    for (int k = 0; k < 9; ++k) {
        Activity* x = policy.pick_next(self, Priority::Idle).activity;
        ASSERT_NE(x, nullptr);
        order.push_back(x);
        policy.yielded(self, x);
    }
    Activity* const expected[3] = {&a, &b, &c};
    for (int k = 0; k < 9; ++k) EXPECT_EQ(order[k], expected[k % 3]) << k;
    for (int k = 0; k < 3; ++k) policy.pick_next(self, Priority::Idle);
    EXPECT_FALSE(policy.has_ready());
}

// The summary word's clear/re-check window (local_algorithm.hpp, GlobalQueues::take): a take
// that found the High queue empty is stopped (the hook) before it clears High's bit, and an
// activity is pushed into that queue meanwhile (its bit-set finds the bit still set). The
// take's look at the queue after its clear sets the bit again; without it (the mutant
// -DCOOP_SUMMARY_NO_RECHECK) the bit stays clear over the queued activity and no pick finds
// it (seen: the third pick returned nullptr).
template <class Alg>
struct ClearWindow {
    static inline Alg* policy = nullptr;
    static inline Activity* pending = nullptr;
    static void push_in_window(int p) {
        if (p != static_cast<int>(Priority::High) || pending == nullptr) return;
        policy->push_global(Priority::High, std::exchange(pending, nullptr));
    }
};
TYPED_TEST(PolicyTest, SummaryBitSurvivesAPushInTheClearWindow) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA h1, h2;
    h1.priority = Priority::High;
    h2.priority = Priority::High;
    policy.push_global(Priority::High, &h1);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &h1);  // High's bit stays set
    using W = ClearWindow<TypeParam>;
    W::policy = &policy;
    W::pending = &h2;
    coop::test_hooks::global_take_before_clear = &W::push_in_window;
    // Finds High empty, the hook pushes h2, then the take clears the bit and looks again.
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, nullptr);
    coop::test_hooks::global_take_before_clear = nullptr;
    EXPECT_EQ(W::pending, nullptr) << "the hook did not run: the window was not reached";
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &h2) << "h2 queued, its summary bit lost";
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, nullptr);
    coop::release(&h1);
    coop::release(&h2);
}

// The same with the push between the take's clear of the bit and its look at the queue: the
// look must come after the clear (look first, then clear: the bit of h2 is cleared over it).
TYPED_TEST(PolicyTest, SummaryBitSurvivesAPushBetweenTheClearAndTheLook) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA h1, h2;
    h1.priority = Priority::High;
    h2.priority = Priority::High;
    policy.push_global(Priority::High, &h1);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &h1);  // High's bit stays set
    using W = ClearWindow<TypeParam>;
    W::policy = &policy;
    W::pending = &h2;
    coop::test_hooks::global_take_clear_window = &W::push_in_window;
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, nullptr);
    coop::test_hooks::global_take_clear_window = nullptr;
    EXPECT_EQ(W::pending, nullptr) << "the hook did not run: the window was not reached";
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &h2) << "h2 queued, its summary bit lost";
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, nullptr);
    coop::release(&h1);
    coop::release(&h2);
}

// A woken activity runs next (before earlier yields).
TYPED_TEST(PolicyTest, WokenRunsNext) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA a, w;
    policy.yielded(self, &a);
    policy.awakened(self, &w);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &w);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &a);
}

// The global queue is looked at every kGlobalCheckInterval picks even when the local
// queue never empties (fails without the periodic check).
TYPED_TEST(PolicyTest, GlobalQueueNotStarvedByBusyLocalQueue) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA x, y, g;
    policy.yielded(self, &x);
    policy.yielded(self, &y);
    policy.push_global(Priority::Default, &g);
    int seen_at = -1;
    for (int k = 0; k < 2 * static_cast<int>(kGlobalCheckInterval); ++k) {
        Activity* a = policy.pick_next(self, Priority::Idle).activity;
        ASSERT_NE(a, nullptr);
        if (a == &g) {
            seen_at = k;
            break;
        }
        policy.yielded(self, a);
    }
    EXPECT_GE(seen_at, 0);
    EXPECT_LT(seen_at, static_cast<int>(kGlobalCheckInterval));
    while (Activity* a = policy.pick_next(self, Priority::Idle).activity) (void)a;
    coop::release(&g);
}

// A ping-pong pair (each wakes the other, then blocks) cannot starve a yielding activity
// on its processor (fails without the streak bound: runnext / LIFO would win forever).
TYPED_TEST(PolicyTest, PingPongCannotStarveYielder) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA a, b, c;
    policy.awakened(self, &a);
    policy.yielded(self, &c);
    int c_runs = 0;
    constexpr int kPicks = 1000;
    for (int k = 0; k < kPicks; ++k) {
        Activity* x = policy.pick_next(self, Priority::Idle).activity;
        ASSERT_NE(x, nullptr);
        if (x == &c) {
            ++c_runs;
            policy.yielded(self, &c);
        } else {
            policy.awakened(self, x == &a ? &b : &a);
        }
    }
    EXPECT_GE(c_runs, kPicks / static_cast<int>(kMaxRunnextStreak + 1) - 1);
    while (policy.pick_next(self, Priority::Idle).activity) {
    }
}

// native-ws: a processor whose ring ran empty takes one activity from the global Default
// queue and moves a batch more into its ring (Go's globrunqget), in the global queue's
// order. So an activity that becomes ready meanwhile behind the ready ones (a joiner woken
// by a finishing child, joiner_awakened) runs after the batch, not between every two
// activities of the global queue: with one-at-a-time takes `j` runs second (fails without
// WsRingAlgorithmT::refill). A ring of 8 (batch 4) so that the whole order fits between two
// fairness checks (every kGlobalCheckInterval picks the global queue is looked at first, which
// would interleave its next activity into the expected order); the runtime's size moves the
// same code 128 at a time (the stress below and test_runtime_ws.cpp run it there).
TEST(WsPolicy, EmptyRingRefillsABatchFromTheGlobalQueue) {
    coop::bind_processor(0);
    using Small = coop::ws::WsRingAlgorithmT<8>;
    static_assert(Small::kGlobalBatch == 4);
    Small policy(2);
    auto& self = policy.local(0);
    constexpr int kN = 20;
    std::vector<TA> g(kN);
    for (int i = 0; i < kN; ++i) {
        g[i].id = i;
        policy.push_global(Priority::Default, &g[i]);
    }
    TA j;
    j.id = -1;
    std::vector<int> order;
    for (int k = 0; k <= kN; ++k) {
        Activity* x = policy.pick_next(self, Priority::Idle).activity;
        ASSERT_NE(x, nullptr) << k;
        order.push_back(static_cast<TA*>(x)->id);
        if (k == 0) policy.yielded(self, &j);  // becomes ready behind the ready ones
    }
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, nullptr);
    // 0 from the global queue, 1..4 refilled into the ring, then j, then the rest in order.
    std::vector<int> expected{0, 1, 2, 3, 4, -1};
    for (int i = 5; i < kN; ++i) expected.push_back(i);
    EXPECT_EQ(order, expected);
    EXPECT_EQ(static_cast<std::uint64_t>(self.counters.refilled), 16u);  // 4 per global pick
    EXPECT_EQ(static_cast<std::uint64_t>(self.counters.global_picks), 4u);  // 0, 5, 10, 15
    for (auto& t : g) coop::release(&t);
}

// native-ws, overflow against a concurrent global take (the directed form of the
// interleaving in queue.hpp empty()/append): processor 2 took A from the global Default
// queue while processor 1's take had passed empty() (A was there) and not yet dequeued;
// processor 0's full ring overflows 4+1 activities as one chain, and inside its append
// (linked, tail CAS not yet made: the hook enqueue_before_tail_cas) processor 1's dequeue
// moves the tail onto the chain's first node and takes it. Processor 0's tail CAS fails.
// Every activity must stay visible: has_ready() (the parker's re-check) and pick_next (the
// empty()-gated takes) must find the other 4, on any processor. Without the help in append
// all of them say "nothing" while 4 activities sit in the global queue.
// At the runtime's ring size C (kRingCapacity): the full ring moves its C/2 oldest and the
// pushed one, C/2+1 activities, as one chain.
std::atomic<int> g_overflow_phase{0};
TEST(WsPolicy, OverflowChainRacingAGlobalTakeHidesNothing) {
    constexpr int C = static_cast<int>(coop::ws::kRingCapacity);
    wstest::Watchdog dog("WsPolicy.OverflowChainRacingAGlobalTakeHidesNothing", 60);
    coop::ws::WsRingAlgorithm policy(3);
    std::vector<TA> acts(C + 1);
    TA a;
    for (int i = 0; i <= C; ++i) acts[static_cast<std::size_t>(i)].id = i;
    a.id = 100;
    g_overflow_phase = 0;
    std::thread([&] {  // processor 2: A in the global queue; it takes A
        coop::bind_processor(2);
        policy.push_global(Priority::Default, &a);
        EXPECT_EQ(policy.pick_next(policy.local(2), Priority::Idle).activity, &a);
    }).join();
    Activity* x_got = nullptr;
    std::thread x([&] {  // processor 1: the rest of a take() that passed empty() before
        coop::bind_processor(1);
        wstest::spin_until([] { return g_overflow_phase.load() == 1; });
        x_got = policy.global(Priority::Default).dequeue();
        g_overflow_phase = 2;
    });
    std::thread e([&] {  // processor 0: a full ring overflows
        coop::bind_processor(0);
        for (int i = 0; i < C; ++i) policy.yielded(policy.local(0), &acts[static_cast<std::size_t>(i)]);
        coop::test_hooks::enqueue_before_tail_cas = [](const void*, const void*) {
            coop::test_hooks::enqueue_before_tail_cas = nullptr;  // once
            g_overflow_phase = 1;
            wstest::spin_until([] { return g_overflow_phase.load() == 2; });
        };
        policy.yielded(policy.local(0), &acts[C]);
        coop::test_hooks::enqueue_before_tail_cas = nullptr;
        EXPECT_EQ(static_cast<std::uint64_t>(policy.local(0).counters.overflowed), static_cast<std::uint64_t>(C / 2 + 1));
    });
    e.join();
    x.join();
    ASSERT_EQ(x_got, &acts[0]) << "processor 1 should have taken the chain's first activity";
    // Processor 1 (its ring is empty): the C/2 chained activities and the C/2 left on
    // processor 0's ring must all be found, by the re-check and by pick_next/find_work.
    coop::bind_processor(1);
    EXPECT_TRUE(policy.has_ready());
    std::vector<int> seen;
    for (;;) {
        Activity* got = policy.pick_next(policy.local(1), Priority::Idle).activity;
        if (got == nullptr) got = policy.find_work(policy.local(1), Priority::Idle).activity;
        if (got == nullptr) break;
        seen.push_back(static_cast<TA*>(got)->id);
    }
    std::sort(seen.begin(), seen.end());
    std::vector<int> expected;
    for (int i = 1; i <= C; ++i) expected.push_back(i);
    EXPECT_EQ(seen, expected);
    EXPECT_FALSE(policy.has_ready());
    EXPECT_EQ(policy.global(Priority::Default).dequeue(), nullptr) << "activities hidden in the global queue";
    coop::release(&a);
    for (auto& t : acts) coop::release(&t);
}

// native-ws: a pick that refilled the ring reports how many it moved (Pick::refilled), so the
// runtime notifies a parker that may have missed them in the window (scheduler.cpp); a pick
// that moved none reports 0.
TEST(WsPolicy, RefillIsReportedForTheNotify) {
    coop::bind_processor(0);
    coop::ws::WsRingAlgorithm policy(2);  // the runtime's ring size
    auto& self = policy.local(0);
    TA g, x;
    policy.push_global(Priority::Default, &g);
    policy.push_global(Priority::Default, &x);
    const auto first = policy.pick_next(self, Priority::Idle);
    EXPECT_EQ(first.activity, &g);
    EXPECT_EQ(first.refilled, 1u);
    const auto second = policy.pick_next(self, Priority::Idle);
    EXPECT_EQ(second.activity, &x);
    EXPECT_EQ(second.refilled, 0u);
    coop::release(&g);
    coop::release(&x);
}

// Higher priorities (global queues) first; `min` filters.
TYPED_TEST(PolicyTest, PrioritiesHighestFirst) {
    coop::bind_processor(0);
    TypeParam policy(2);
    auto& self = policy.local(0);
    TA lo, def, hi;
    lo.priority = Priority::Low;
    hi.priority = Priority::High;
    policy.awakened(self, &lo);
    policy.awakened(self, &def);
    EXPECT_EQ(policy.pick_next(self, Priority::High).activity, nullptr);
    policy.awakened(self, &hi);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &hi);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &def);
    EXPECT_EQ(policy.pick_next(self, Priority::Idle).activity, &lo);
    for (TA* t : {&lo, &def, &hi}) coop::release(t);
}

// An idle processor steals (whether it may look at all is the runtime's spinning rule,
// SchedulerCore::start_spinning, tested in tests/native_ws/test_oversubscribed.cpp).
TYPED_TEST(PolicyTest, IdleProcessorSteals) {
    coop::bind_processor(0);
    TypeParam policy(2);
    TA a, b;
    policy.yielded(policy.local(0), &a);
    policy.yielded(policy.local(0), &b);
    Activity* s = policy.find_work(policy.local(1), Priority::Idle).activity;
    // The end the owner serves last: the oldest of the ring; the latest yield of the deque.
    Activity* const last_served = std::is_same_v<TypeParam, coop::ws::WsRingAlgorithm> ? &a : &b;
    EXPECT_EQ(s, last_served);
    EXPECT_EQ(policy.pick_next(policy.local(0), Priority::Idle).activity, s == &a ? &b : &a);
}

// With cache groups (a pinned runtime, cpus.hpp cache_groups), the first steal pass visits
// only the thief's own group: processor 0 of groups {0,0,1,1} always steals from
// processor 1 while it has work, though processor 2 has work too. The control, without
// groups, shows the random start does reach processor 2 (so the first half can fail).
TYPED_TEST(PolicyTest, NearVictimsFirst) {
    coop::bind_processor(0);
    auto steal_sources = [](bool grouped) {
        TypeParam policy(4);
        if (grouped) policy.set_groups({0, 0, 1, 1});
        TA a1, b1, a2, b2;
        policy.yielded(policy.local(1), &a1);
        policy.yielded(policy.local(1), &b1);
        policy.yielded(policy.local(2), &a2);
        policy.yielded(policy.local(2), &b2);
        int from1 = 0, from2 = 0;
        for (int k = 0; k < 40; ++k) {
            Activity* x = policy.find_work(policy.local(0), Priority::Idle).activity;
            EXPECT_NE(x, nullptr);
            if (x == nullptr) break;
            const bool one = x == &a1 || x == &b1;
            ++(one ? from1 : from2);
            policy.yielded(policy.local(one ? 1 : 2), x);  // back where it came from
        }
        for (unsigned p = 0; p < 4; ++p)
            while (policy.pick_next(policy.local(p), Priority::Idle).activity != nullptr) {
            }
        return std::pair{from1, from2};
    };
    const auto [g1, g2] = steal_sources(true);
    EXPECT_EQ(g1, 40);
    EXPECT_EQ(g2, 0);
    const auto [u1, u2] = steal_sources(false);
    EXPECT_GT(u2, 0) << "without groups every victim is as likely";
    EXPECT_EQ(u1 + u2, 40);
}

// A group without work does not hide the others' work: the later passes visit everyone.
TYPED_TEST(PolicyTest, FarVictimStolenWhenNearHaveNone) {
    coop::bind_processor(0);
    TypeParam policy(4);
    policy.set_groups({0, 0, 1, 1});
    TA a, b;
    policy.yielded(policy.local(3), &a);
    policy.yielded(policy.local(3), &b);
    Activity* x = policy.find_work(policy.local(0), Priority::Idle).activity;
    EXPECT_TRUE(x == &a || x == &b);
    EXPECT_EQ(policy.local(0).counters.near_steals, 0u);
    for (unsigned p = 0; p < 4; ++p)
        while (policy.pick_next(policy.local(p), Priority::Idle).activity != nullptr) {
        }
}

// Each OS thread plays one processor; every activity runs kRuns times, alternately
// yielding and being re-awakened, with stealing; never on two processors at once. `high`:
// every 4th activity is High-priority, so every processor pushes to and takes from the
// global High queue at once (the summary word's set / clear / re-check race; a bit left clear
// over a queued activity would leave it unrun and the watchdog would fire).
template <class Alg>
void policy_stress(bool high = false) {
    const unsigned P = std::max(2u, std::thread::hardware_concurrency());
    // More than the runtime's ring holds (kRingCapacity, the policies' default): processor 0
    // queues them all, so its ring overflows into the global queue.
    const int kActivities = static_cast<int>(coop::ws::kRingCapacity) + (wstest::kSanitized ? 500 : 3000);
    const int kRuns = wstest::kSanitized ? 10 : 100;
    wstest::Watchdog dog("policy stress", 240);
    Alg policy(P);
    auto acts = std::make_unique<TA[]>(kActivities);
    if (high)
        for (int k = 0; k < kActivities; k += 4) acts[k].priority = Priority::High;
    std::atomic<int> done{0};
    std::atomic<long> runs{0};
    std::atomic<unsigned> started{0};
    std::vector<std::thread> ts;
    for (unsigned p = 0; p < P; ++p) {
        ts.emplace_back([&, p] {
            coop::bind_processor(p);
            auto& self = policy.local(p);
            started.fetch_add(1);
            wstest::spin_until([&] { return started.load() == P; });  // all processors up
            if (p == 0)
                for (int k = 0; k < kActivities; ++k) policy.yielded(self, &acts[k]);
            while (done.load(std::memory_order_relaxed) < kActivities) {
                coop::ws::Pick pick = policy.pick_next(self, Priority::Idle);
                if (pick.activity == nullptr) pick = policy.find_work(self, Priority::Idle);
                if (pick.activity == nullptr) {
                    std::this_thread::yield();
                    continue;
                }
                TA* a = static_cast<TA*>(pick.activity);
                ASSERT_FALSE(a->running.exchange(true)) << "activity running on two processors";
                const int r = a->runs.fetch_add(1, std::memory_order_relaxed) + 1;
                runs.fetch_add(1, std::memory_order_relaxed);
                a->running.store(false);
                if (r == kRuns) done.fetch_add(1);
                else if (r % 2 == 0) policy.yielded(self, a);
                else policy.awakened(self, a);
            }
        });
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(runs.load(), static_cast<long>(kActivities) * kRuns);
    for (int k = 0; k < kActivities; ++k) ASSERT_EQ(acts[k].runs.load(), kRuns) << k;
    coop::bind_processor(0);
    EXPECT_FALSE(policy.has_ready());
    long steals = 0, overflowed = 0, runnext = 0;
    for (unsigned p = 0; p < P; ++p) {
        steals += static_cast<long>(policy.local(p).counters.steals);
        overflowed += static_cast<long>(policy.local(p).counters.overflowed);
        runnext += static_cast<long>(policy.local(p).counters.runnext_hits);
    }
    for (int k = 0; k < kActivities; ++k) coop::release(&acts[k]);
    std::printf("policy stress: P=%u, %d activities x %d runs: %ld steals, %ld overflowed, %ld runnext hits\n", P,
                kActivities, kRuns, steals, overflowed, runnext);
}

TEST(PolicyStress, WorkStealing) { policy_stress<coop::ws::WsRingAlgorithm>(); }
TEST(PolicyStress, Parasail) { policy_stress<coop::ws::ParasailDequeAlgorithm>(); }
TEST(PolicyStress, WorkStealingWithHighPriorities) { policy_stress<coop::ws::WsRingAlgorithm>(true); }
TEST(PolicyStress, ParasailWithHighPriorities) { policy_stress<coop::ws::ParasailDequeAlgorithm>(true); }

}  // namespace
