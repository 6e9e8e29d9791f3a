// test_local_queue.cpp — unit and directed-interleaving tests of the work-stealing ring
// (coop/src/ws/local_queue.hpp).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "coop/queue.hpp"
#include "coop/src/ws/local_queue.hpp"
#include "coop/src/ws/ws_ring.hpp"
#include "tests/native_ws/ws_test_util.hpp"

using coop::ws::kMaxRunnextStreak;
using coop::ws::LocalQueue;
using coop::ws::RingTestHooks;
using wstest::Item;

namespace {

auto no_overflow = [](Item*) { ADD_FAILURE() << "unexpected overflow"; };
auto no_grace = [] {};

// Owner and thief as types (Tokio's queue.rs Local/Steal): the thieves' handle offers no
// owner operation, and the ring's steal is reachable only through a Stealer. Checked at
// compile time (a requires-expression is false for an inaccessible or missing member).
using Ring8 = LocalQueue<Item, 8>;
using Stealer8 = Ring8::Stealer;
template <class H> concept CanPush = requires(H h, Item* i) { h.push(i, no_overflow); };
template <class H> concept CanPushNext = requires(H h, Item* i) { h.push_next(i, no_overflow); };
template <class H> concept CanTryPush = requires(H h, Item* i) { h.try_push(i); };
template <class H> concept CanPop = requires(H h) { h.pop(); };
template <class H> concept CanPick = requires(H h) { h.pick(); };
template <class H> concept CanStealInto = requires(H h, Ring8& mine) { h.steal_into(mine, true, no_grace); };
template <class H> concept CanTakeRunnext = requires(H h) { h.take_runnext_after_grace(no_grace); };
static_assert(CanPush<Ring8&> && CanPushNext<Ring8&> && CanTryPush<Ring8&> && CanPop<Ring8&> && CanPick<Ring8&>);
static_assert(!CanPush<Stealer8> && !CanPushNext<Stealer8> && !CanTryPush<Stealer8> && !CanPop<Stealer8> &&
              !CanPick<Stealer8>);
static_assert(CanStealInto<Stealer8> && CanTakeRunnext<Stealer8>);
static_assert(!CanStealInto<Ring8&> && !CanTakeRunnext<Ring8&>);

TEST(LocalQueue, StealerStealsWhatTheOwnerPushed) {
    Ring8 victim, thief;
    Item a, b;
    victim.push(&a, no_overflow);
    victim.push(&b, no_overflow);
    const Stealer8 s = victim.stealer();
    EXPECT_EQ(s.size_hint(), 2u);
    EXPECT_EQ(s.steal_into(thief, false, no_grace), &a);  // half of 2: the oldest, to run
    EXPECT_EQ(victim.pop(), &b);
    EXPECT_TRUE(s.empty_hint());
}

TEST(LocalQueue, FifoWithWrapAround) {
    LocalQueue<Item, 8> q;
    std::vector<Item> items(100);
    int next_in = 0, next_out = 0;
    for (int round = 0; round < 30; ++round) {
        for (int k = 0; k < 5; ++k) q.push(&items[next_in++ % 100], no_overflow);
        for (int k = 0; k < 5; ++k) {
            Item* i = q.pop();
            ASSERT_EQ(i, &items[next_out++ % 100]);
        }
    }
    EXPECT_EQ(q.pop(), nullptr);
    EXPECT_TRUE(q.empty_hint());
}

// A ring set alone (a runtime of one processor: no thief) takes with a load and a store
// instead of the locked RMWs: the same items in the same order as a shared ring, for any
// sequence of the owner's operations (pushes, runnext pushes that displace, picks, pops,
// wrap-around).
TEST(LocalQueue, AloneRingGivesWhatASharedRingGives) {
    LocalQueue<Item, 8> shared, alone;
    alone.set_alone(true);
    std::vector<Item> items(64);
    std::vector<Item*> spill_s, spill_a;
    std::uint32_t x = 12345;
    auto rnd = [&] { return x = x * 1103515245u + 12345u, (x >> 16) & 7u; };
    for (int step = 0, next = 0; step < 20000; ++step) {
        switch (rnd()) {
            case 0: case 1: case 2: {
                Item* i = &items[next++ % 64];
                shared.push(i, [&](Item* o) { spill_s.push_back(o); });
                alone.push(i, [&](Item* o) { spill_a.push_back(o); });
                break;
            }
            case 3: {
                Item* i = &items[next++ % 64];
                shared.push_next(i, [&](Item* o) { spill_s.push_back(o); });
                alone.push_next(i, [&](Item* o) { spill_a.push_back(o); });
                break;
            }
            case 4: case 5: {
                auto a = shared.pick(), b = alone.pick();
                ASSERT_EQ(a.item, b.item) << "step " << step;
                ASSERT_EQ(a.inherits, b.inherits) << "step " << step;
                break;
            }
            default:
                ASSERT_EQ(shared.pop(), alone.pop()) << "step " << step;
        }
        ASSERT_EQ(spill_s, spill_a) << "step " << step;
        ASSERT_EQ(shared.size_hint(), alone.size_hint()) << "step " << step;
    }
}

#if COOP_CHECKED
// steal_from_an_alone_ring — a thief's steal from a ring set alone (the death test's statement).
void steal_from_an_alone_ring() {
    Ring8 victim;
    Ring8 thief;
    victim.set_alone(true);
    Item a;
    victim.push(&a, no_overflow);
    victim.stealer().steal_into(thief, false, no_grace);
}

// A thief on an alone ring would race its owner's plain take: the contract check stops it.
TEST(LocalQueueDeathTest, AThiefOnAnAloneRingIsAContractFailure) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(steal_from_an_alone_ring(), "set_alone");
}
#endif

TEST(LocalQueue, TryPushRefusesWhenFull) {
    LocalQueue<Item, 4> q;
    Item items[5];
    for (int k = 0; k < 4; ++k) EXPECT_TRUE(q.try_push(&items[k]));
    EXPECT_FALSE(q.try_push(&items[4]));
    EXPECT_EQ(q.size_hint(), 4u);
}

// Overflow: a full ring moves its oldest half, then the new item, to the global queue
// (here coop's lock-free Queue, as the policy does).
struct QItem : coop::QueueItem {
    int id = 0;
};
TEST(LocalQueue, OverflowHalfToGlobalQueue) {
    coop::bind_processor(0);
    coop::Queue<QItem> global;
    LocalQueue<QItem, 8> q;
    QItem items[9];
    for (int k = 0; k < 9; ++k) items[k].id = k;
    std::uint32_t moved = 0;
    for (int k = 0; k < 9; ++k) moved += q.push(&items[k], [&](QItem* i) { global.enqueue(i); });
    EXPECT_EQ(moved, 5u);
    // The ring keeps the newer half, in order.
    for (int k = 4; k < 8; ++k) EXPECT_EQ(q.pop(), &items[k]);
    EXPECT_EQ(q.pop(), nullptr);
    // The global queue got the older half, oldest first, then the item that overflowed.
    for (int k : {0, 1, 2, 3, 8}) {
        QItem* i = global.dequeue();
        ASSERT_NE(i, nullptr);
        EXPECT_EQ(i->id, k);
        coop::release(i);
    }
    EXPECT_EQ(global.dequeue(), nullptr);
}

TEST(LocalQueue, StealHalfOldestFirst) {
    LocalQueue<Item, 16> victim, thief;
    Item items[5];
    for (auto& i : items) victim.push(&i, no_overflow);
    // 5 items: the thief takes ceil(5/2) = 3 (the oldest), runs the last of them and keeps
    // the other two in its ring.
    Item* got = victim.stealer().steal_into(thief, false, no_grace);
    EXPECT_EQ(got, &items[2]);
    EXPECT_EQ(thief.pop(), &items[0]);
    EXPECT_EQ(thief.pop(), &items[1]);
    EXPECT_EQ(thief.pop(), nullptr);
    EXPECT_EQ(victim.pop(), &items[3]);
    EXPECT_EQ(victim.pop(), &items[4]);
    EXPECT_EQ(victim.stealer().steal_into(thief, false, no_grace), nullptr);
}

TEST(LocalQueue, StealRespectsThiefRoom) {
    LocalQueue<Item, 8> victim, thief;
    Item v[8], t[7];
    for (auto& i : v) victim.push(&i, no_overflow);
    for (auto& i : t) thief.push(&i, no_overflow);  // one free slot
    // Wants 4, may take 2: one into the free slot, one returned.
    EXPECT_EQ(victim.stealer().steal_into(thief, false, no_grace), &v[1]);
    EXPECT_EQ(thief.size_hint(), 8u);
    EXPECT_EQ(victim.size_hint(), 6u);
    // The thief's own items are intact, the stolen one behind them (a steal that wrote the
    // returned item into the ring too would overwrite the thief's oldest, t[0]).
    for (auto& i : t) EXPECT_EQ(thief.pop(), &i);
    EXPECT_EQ(thief.pop(), &v[0]);
    EXPECT_EQ(thief.pop(), nullptr);
}

TEST(LocalQueue, RunnextFirstAndDisplaced) {
    LocalQueue<Item, 8> q;
    Item a, b, c;
    q.push(&a, no_overflow);
    q.push_next(&b, no_overflow);
    q.push_next(&c, no_overflow);  // b is displaced to the ring's tail
    auto p = q.pick();
    EXPECT_EQ(p.item, &c);
    EXPECT_TRUE(p.inherits);
    p = q.pick();
    EXPECT_EQ(p.item, &a);
    EXPECT_FALSE(p.inherits);
    p = q.pick();
    EXPECT_EQ(p.item, &b);
    EXPECT_EQ(q.pick().item, nullptr);
}

// Fairness: a ping-pong pair (each wakes the other through runnext, then blocks) must not
// starve an activity that yields on the same processor. Fails if pick() has no streak bound.
TEST(LocalQueue, RunnextBoundedPingPongCannotStarve) {
    LocalQueue<Item, 8> q;
    Item a, b, c;
    q.push_next(&a, no_overflow);
    q.push(&c, no_overflow);
    int c_runs = 0;
    constexpr int kPicks = 1000;
    for (int k = 0; k < kPicks; ++k) {
        auto p = q.pick();
        ASSERT_NE(p.item, nullptr);
        if (p.item == &c) {
            ++c_runs;
            q.push(&c, no_overflow);  // yields: behind the others
        } else {
            q.push_next(p.item == &a ? &b : &a, no_overflow);  // wakes the partner, blocks
        }
    }
    // One ring pick at least every kMaxRunnextStreak + 1 picks.
    EXPECT_GE(c_runs, kPicks / static_cast<int>(kMaxRunnextStreak + 1) - 1);
}

// A stuck owner cannot stall its runnext item: a thief takes it after the grace, only on
// a pass that allows it, and only once.
TEST(LocalQueue, RunnextStolenAfterGrace) {
    LocalQueue<Item, 8> victim, thief;
    Item x;
    victim.push_next(&x, no_overflow);
    int graces = 0;
    EXPECT_EQ(victim.stealer().steal_into(thief, false, [&] { ++graces; }), nullptr);
    EXPECT_EQ(graces, 0);
    EXPECT_EQ(victim.stealer().steal_into(thief, true, [&] { ++graces; }), &x);
    EXPECT_EQ(graces, 1);
    EXPECT_EQ(victim.pick().item, nullptr);
    EXPECT_EQ(victim.stealer().steal_into(thief, true, [&] { ++graces; }), nullptr);
}

// Directed: the owner picks its runnext item while a thief is inside its grace (between
// reading the slot and the CAS). Exactly one of them gets it. Fails if the thief's take
// were a plain load+store instead of the CAS.
TEST(LocalQueue, RunnextRaceOwnerWinsDuringGrace) {
    LocalQueue<Item, 8> victim, thief;
    Item x;
    victim.push_next(&x, no_overflow);
    Item* owner_got = nullptr;
    Item* thief_got = victim.stealer().steal_into(thief, true, [&] { owner_got = victim.pick().item; });
    EXPECT_EQ(owner_got, &x);
    EXPECT_EQ(thief_got, nullptr);
}

using HookedRing = LocalQueue<Item, 8, RingTestHooks>;

// Directed interleaving of the last-item race, stealer first: the thief has read head_ and
// the slot and is stopped before its CAS; the owner pops the same (last) item; then the
// thief goes on. Exactly one gets it. Fails if steal_into's CAS on head_ is replaced by a
// plain store.
TEST(LocalQueue, LastItemRaceThiefStoppedBeforeCas) {
    wstest::Watchdog dog("LastItemRaceThiefStoppedBeforeCas", 60);
    HookedRing victim, thief;
    Item x;
    victim.push(&x, [](Item*) {});
    static std::atomic<int> phase{0};
    phase = 0;
    RingTestHooks::steal_hook = [] {
        int expected = 0;
        if (phase.compare_exchange_strong(expected, 1))  // first time only
            wstest::spin_until([] { return phase.load() == 2; });
    };
    Item* thief_got = &x;
    std::thread t([&] { thief_got = victim.stealer().steal_into(thief, false, [] {}); });
    wstest::spin_until([] { return phase.load() == 1; });
    Item* owner_got = victim.pop();
    phase = 2;
    t.join();
    RingTestHooks::steal_hook = nullptr;
    EXPECT_EQ(owner_got, &x);
    EXPECT_EQ(thief_got, nullptr);
    EXPECT_EQ(thief.pop(), nullptr);
}

// The same race, owner first: the owner has read head_ and the slot and is stopped before
// its CAS; a thief steals the last item; then the owner goes on. Fails if pop() stores
// head_ without the CAS (the mutant models/local_queue.pml also rejects).
TEST(LocalQueue, LastItemRaceOwnerStoppedBeforeCas) {
    wstest::Watchdog dog("LastItemRaceOwnerStoppedBeforeCas", 60);
    HookedRing victim, thief;
    Item x;
    static std::atomic<int> phase{0};
    phase = 0;
    RingTestHooks::pop_hook = [] {
        int expected = 0;
        if (phase.compare_exchange_strong(expected, 1))
            wstest::spin_until([] { return phase.load() == 2; });
    };
    Item* owner_got = &x;
    Item* thief_got = nullptr;
    std::thread owner([&] {
        victim.push(&x, [](Item*) {});
        owner_got = victim.pop();
    });
    wstest::spin_until([] { return phase.load() == 1; });
    thief_got = victim.stealer().steal_into(thief, false, [] {});
    phase = 2;
    owner.join();
    RingTestHooks::pop_hook = nullptr;
    EXPECT_EQ(thief_got, &x);
    EXPECT_EQ(owner_got, nullptr);
}

// The work-stealing algorithm built for two processors leaves its rings shared (ws_ring.hpp:
// set_alone only when processors == 1): the owner-first last-item race of the test above on
// processor 0's ring of a WsRingAlgorithmT(2), with processor 1's ring as the thief's. An
// alone ring's owner takes with a plain store, so the thief's CAS and the owner would both
// take the one activity (release builds; a checked build stops the thief with set_alone's
// contract check). Guards `if (processors == 1)` (the review's mutant alone_when_shared).
TEST(LocalQueue, TwoProcessorRingsAreNotAlone) {
    wstest::Watchdog dog("TwoProcessorRingsAreNotAlone", 60);
    coop::ws::WsRingAlgorithmT<8, RingTestHooks> alg(2);
    auto& victim = alg.local(0).ring;
    auto& thief = alg.local(1).ring;
    coop::internal::Activity x;
    static std::atomic<int> phase{0};
    phase = 0;
    RingTestHooks::pop_hook = [] {
        int expected = 0;
        if (phase.compare_exchange_strong(expected, 1))
            wstest::spin_until([] { return phase.load() == 2; });
    };
    coop::internal::Activity* owner_got = &x;
    coop::internal::Activity* thief_got = nullptr;
    std::thread owner([&] {
        victim.push(&x, [](coop::internal::Activity*) {});
        owner_got = victim.pop();
    });
    wstest::spin_until([] { return phase.load() == 1; });
    thief_got = victim.stealer().steal_into(thief, false, [] {});
    phase = 2;
    owner.join();
    RingTestHooks::pop_hook = nullptr;
    EXPECT_FALSE(owner_got == &x && thief_got == &x) << "the owner and a thief both took the one activity";
    EXPECT_EQ(thief_got, &x);
    EXPECT_EQ(owner_got, nullptr);
}

// A thief publishes its copies only once its CAS has claimed them: stopped before its CAS
// (it has copied a's slot into its ring), the owner pops every item, so the CAS must fail;
// meanwhile a second thief steals from the first one's ring and must find nothing. A thief
// that stores its tail before copying (and resets it on a lost CAS) hands the second thief
// a copy of an item the owner also took: taken twice (the mutant models/local_queue.pml
// BUG_THIEF_TAIL_BEFORE_COPY; as a stress, WsStress found it in 82-241 s).
TEST(LocalQueue, ThiefPublishesItsCopiesOnlyAfterItsCas) {
    wstest::Watchdog dog("ThiefPublishesItsCopiesOnlyAfterItsCas", 60);
    HookedRing victim, thief, other;
    Item items[4];
    for (Item& i : items) victim.push(&i, [](Item*) {});
    static std::atomic<int> phase{0};
    phase = 0;
    RingTestHooks::steal_hook = [] {
        int expected = 0;
        if (phase.compare_exchange_strong(expected, 1))  // the first thief, first time only
            wstest::spin_until([] { return phase.load() == 2; });
    };
    Item* thief_got = nullptr;
    std::thread t([&] { thief_got = victim.stealer().steal_into(thief, false, [] {}); });
    wstest::spin_until([] { return phase.load() == 1; });
    std::vector<Item*> owner_got;
    while (Item* i = victim.pop()) owner_got.push_back(i);
    // The second thief (this thread, owner of `other`) looks at the first one's ring.
    Item* second_got = thief.stealer().steal_into(other, false, [] {});
    phase = 2;
    t.join();
    RingTestHooks::steal_hook = nullptr;
    EXPECT_EQ(owner_got.size(), 4u) << "the owner popped every item while the thief was stopped";
    EXPECT_EQ(second_got, nullptr) << "the second thief got an item the first had not claimed: taken twice";
    EXPECT_EQ(thief_got, nullptr) << "the first thief's CAS should have failed";
    std::vector<int> seen(4, 0);
    auto count = [&](Item* i) {
        if (i != nullptr && i >= items && i < items + 4) ++seen[i - items];
    };
    for (Item* i : owner_got) count(i);
    count(second_got);
    count(thief_got);
    while (Item* i = thief.pop()) count(i);
    while (Item* i = other.pop()) count(i);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(seen[k], 1) << "item " << k << " taken " << seen[k] << " times";
}

}  // namespace
