// test_parasail_queue.cpp — unit tests of the ParaSail deque (parasail_queue.hpp): LIFO for
// the owner, FIFO for thieves, yields at the FIFO end, growth.
#include <gtest/gtest.h>

#include <vector>

#include "coop/src/ws/parasail_queue.hpp"

namespace {

struct Job {
    int id = 0;
};

// Owner and thief as types (Tokio's queue.rs Local/Steal): the thieves' handle offers no
// owner operation, and the deque's steals are reachable only through a Stealer (compile-time
// checks: a requires-expression is false for an inaccessible or missing member).
using Deque = coop::ws::ParasailQueue<Job>;
using DequeStealer = Deque::Stealer;
template <class H> concept CanPushBack = requires(H h, Job* j) { h.push_back(j); };
template <class H> concept CanPushFront = requires(H h, Job* j) { h.push_front(j); };
template <class H> concept CanPopBack = requires(H h) { h.pop_back(); };
template <class H> concept CanPopFront = requires(H h) { h.pop_front(); };
template <class H> concept CanSteal = requires(H h) { h.steal(true, [] {}); };
template <class H> concept CanStealHalf = requires(H h, Deque& mine) { h.steal_half_into(mine, true, [] {}); };
static_assert(CanPushBack<Deque&> && CanPushFront<Deque&> && CanPopBack<Deque&> && CanPopFront<Deque&>);
static_assert(!CanPushBack<DequeStealer> && !CanPushFront<DequeStealer> && !CanPopBack<DequeStealer> &&
              !CanPopFront<DequeStealer>);
static_assert(CanSteal<DequeStealer> && CanStealHalf<DequeStealer>);
static_assert(!CanSteal<Deque&> && !CanStealHalf<Deque&>);

TEST(ParasailQueue, OwnerLifoThiefFifo) {
    coop::ws::ParasailQueue<Job> q;
    Job a{1}, b{2}, c{3};
    q.push_back(&a);
    q.push_back(&b);
    q.push_back(&c);
    EXPECT_EQ(q.pop_back(), &c);  // owner: newest
    EXPECT_EQ(q.stealer().steal(), &a);     // thief: oldest
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.pop_back(), nullptr);
    EXPECT_EQ(q.stealer().steal(), nullptr);
}

TEST(ParasailQueue, PushFrontIsServedLastAndStolenFirst) {
    coop::ws::ParasailQueue<Job> q;
    Job a, b, y;
    q.push_back(&a);
    q.push_front(&y);  // a yield
    q.push_back(&b);
    EXPECT_EQ(q.stealer().steal(), &y);
    q.push_front(&y);
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.pop_back(), &a);
    EXPECT_EQ(q.pop_front(), &y);
    EXPECT_EQ(q.size_hint(), 0u);
}

TEST(ParasailQueue, GrowsKeepingOrder) {
    coop::ws::ParasailQueue<Job, coop::OwnerGuard> q(2);
    std::vector<Job> jobs(100);
    for (int k = 0; k < 50; ++k) q.push_back(&jobs[k]);
    for (int k = 0; k < 10; ++k) EXPECT_EQ(q.stealer().steal(), &jobs[k]);  // front moves: wrap
    for (int k = 50; k < 100; ++k) q.push_back(&jobs[k]);
    EXPECT_EQ(q.size_hint(), 90u);
    for (int k = 10; k < 20; ++k) EXPECT_EQ(q.pop_front(), &jobs[k]);
    for (int k = 99; k >= 20; --k) EXPECT_EQ(q.pop_back(), &jobs[k]);
    EXPECT_EQ(q.pop_back(), nullptr);
}

// A lone item is the one the owner serves next: a thief leaves it alone unless told it may
// (the last steal pass), and then only if the owner did not touch the deque during the
// grace (a busy owner keeps its hand-off; a stuck one loses it).
TEST(ParasailQueue, LoneItemOnlyAfterAnUntouchedGrace) {
    coop::ws::ParasailQueue<Job> q;
    Job a{1}, b{2};
    q.push_back(&a);
    EXPECT_EQ(q.stealer().steal(false, [] {}), nullptr) << "not on an early pass";
    EXPECT_EQ(q.stealer().steal(true, [&] { q.push_back(&b); }), nullptr) << "the owner pushed during the grace";
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.stealer().steal(true, [&] {}), &a) << "the owner did nothing during the grace";
    EXPECT_EQ(q.pop_back(), nullptr);
    Job c{3}, d{4};
    q.push_back(&c);
    q.push_back(&d);
    EXPECT_EQ(q.stealer().steal(false, [] {}), &c) << "two or more: the oldest, no grace needed";
}

// steal_half_into takes half (rounded up) in one guarded entry: the oldest is returned, the
// rest land in the thief's own deque; nothing lost or duplicated.
TEST(ParasailQueue, StealHalfMovesHalfToTheThief) {
    coop::ws::ParasailQueue<Job> victim, thief;
    std::vector<Job> jobs(9);
    for (int i = 0; i < 9; ++i) {
        jobs[i].id = i;
        victim.push_back(&jobs[i]);
    }
    Job* first = victim.stealer().steal_half_into(thief, false, [] {});
    ASSERT_EQ(first, &jobs[0]);
    EXPECT_EQ(thief.size_hint(), 4u);  // 5 taken: one returned, four moved
    EXPECT_EQ(victim.size_hint(), 4u);
    std::vector<int> seen(9, 0);
    seen[first->id]++;
    while (Job* j = thief.pop_back()) seen[j->id]++;
    while (Job* j = victim.pop_back()) seen[j->id]++;
    for (int i = 0; i < 9; ++i) EXPECT_EQ(seen[i], 1) << "job " << i;
    // A batch is capped (the thief's buffer), the remainder stays.
    std::vector<Job> many(1000);
    for (auto& j : many) victim.push_back(&j);
    ASSERT_NE(victim.stealer().steal_half_into(thief, false, [] {}), nullptr);
    EXPECT_EQ(thief.size_hint(), coop::ws::ParasailQueue<Job>::kMaxBatch - 1);
}

}  // namespace
