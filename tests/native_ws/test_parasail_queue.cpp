// test_parasail_queue.cpp — unit tests of the ParaSail deque (parasail_queue.hpp): LIFO for
// the owner, FIFO for thieves, yields at the FIFO end, growth.
#include <gtest/gtest.h>

#include <vector>

#include "runtimes/native/ws/parasail_queue.hpp"

namespace {

struct Job {
    int id = 0;
};

TEST(ParasailQueue, OwnerLifoThiefFifo) {
    coop::ws::ParasailQueue<Job> q;
    Job a{1}, b{2}, c{3};
    q.push_back(&a);
    q.push_back(&b);
    q.push_back(&c);
    EXPECT_EQ(q.pop_back(), &c);  // owner: newest
    EXPECT_EQ(q.steal(), &a);     // thief: oldest
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.pop_back(), nullptr);
    EXPECT_EQ(q.steal(), nullptr);
}

TEST(ParasailQueue, PushFrontIsServedLastAndStolenFirst) {
    coop::ws::ParasailQueue<Job> q;
    Job a, b, y;
    q.push_back(&a);
    q.push_front(&y);  // a yield
    q.push_back(&b);
    EXPECT_EQ(q.steal(), &y);
    q.push_front(&y);
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.pop_back(), &a);
    EXPECT_EQ(q.pop_front(), &y);
    EXPECT_EQ(q.size_hint(), 0u);
}

TEST(ParasailQueue, GrowsKeepingOrder) {
    coop::ws::ParasailQueue<Job, locks::OwnerGuard> q(2);
    std::vector<Job> jobs(100);
    for (int k = 0; k < 50; ++k) q.push_back(&jobs[k]);
    for (int k = 0; k < 10; ++k) EXPECT_EQ(q.steal(), &jobs[k]);  // front moves: wrap
    for (int k = 50; k < 100; ++k) q.push_back(&jobs[k]);
    EXPECT_EQ(q.size_hint(), 90u);
    for (int k = 10; k < 20; ++k) EXPECT_EQ(q.pop_front(), &jobs[k]);
    for (int k = 99; k >= 20; --k) EXPECT_EQ(q.pop_back(), &jobs[k]);
    EXPECT_EQ(q.pop_back(), nullptr);
}

}  // namespace
