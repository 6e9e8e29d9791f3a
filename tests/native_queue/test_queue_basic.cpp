// test_queue_basic.cpp — single-thread behaviour of coop::Queue (coop/include/coop/queue.hpp):
// FIFO order, empty behaviour, node reuse (bounded node count), release(), pools.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "coop/queue.hpp"

namespace {

struct Job : coop::QueueItem {
    int id = 0;
};

// Fixture: binds processor 0, and checks that the test leaves no node allocated.
class QueueBasic : public ::testing::Test {
protected:
    void SetUp() override {
        coop::bind_processor(0);
        coop::drain_pools();
        base_ = coop::nodes_live();
    }
    void TearDown() override {
        coop::drain_pools();
        EXPECT_EQ(coop::nodes_live(), base_) << "a test leaked queue nodes";
    }
    std::size_t base_ = 0;
};

TEST_F(QueueBasic, EmptyQueueDequeuesNull) {
    coop::Queue<Job> q;
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.dequeue(), nullptr);
    EXPECT_EQ(q.dequeue(), nullptr);
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.check_quiescent(), 0);
    EXPECT_EQ(coop::nodes_live(), base_ + 1);  // the dummy
}

TEST_F(QueueBasic, FifoOrder) {
    coop::Queue<Job> q;
    std::vector<Job> jobs(100);
    for (int i = 0; i < 100; ++i) {
        jobs[i].id = i;
        q.enqueue(&jobs[i]);
        EXPECT_FALSE(q.empty());
    }
    EXPECT_EQ(q.check_quiescent(), 100);
    for (int i = 0; i < 100; ++i) {
        Job* j = q.dequeue();
        ASSERT_NE(j, nullptr);
        EXPECT_EQ(j->id, i);
        EXPECT_NE(j->node, nullptr) << "a dequeued item carries the retired dummy";
    }
    EXPECT_EQ(q.dequeue(), nullptr);
    EXPECT_TRUE(q.empty());
    // 100 items carry a node each, plus the queue's dummy.
    EXPECT_EQ(coop::nodes_live(), base_ + 101);
    for (auto& j : jobs)
        coop::release(&j);
    EXPECT_EQ(coop::nodes_live(), base_ + 1);
}

// A chain (link, then enqueue(Chain&)) keeps FIFO order with single enqueues around it.
TEST_F(QueueBasic, ChainAppendsInOrder) {
    coop::Queue<Job> q;
    std::vector<Job> jobs(10);
    for (int i = 0; i < 10; ++i) jobs[i].id = i;
    q.enqueue(&jobs[0]);
    coop::Queue<Job>::Chain chain;
    q.enqueue(chain);  // an empty chain appends nothing
    EXPECT_EQ(q.check_quiescent(), 1);
    for (int i = 1; i < 9; ++i) q.link(chain, &jobs[i]);
    EXPECT_EQ(chain.size, 8u);
    EXPECT_EQ(q.check_quiescent(), 1) << "linked items are private until appended";
    q.enqueue(chain);
    EXPECT_TRUE(chain.empty());
    q.enqueue(&jobs[9]);
    EXPECT_EQ(q.check_quiescent(), 10);
    for (int i = 0; i < 10; ++i) {
        Job* j = q.dequeue();
        ASSERT_NE(j, nullptr);
        EXPECT_EQ(j->id, i);
    }
    EXPECT_EQ(q.dequeue(), nullptr);
    for (auto& j : jobs) coop::release(&j);
}

TEST_F(QueueBasic, InterleavedFifo) {
    coop::Queue<Job> q;
    std::vector<Job> jobs(8);
    for (int i = 0; i < 8; ++i)
        jobs[i].id = i;
    int next_in = 0, next_out = 0;
    for (int round = 0; round < 1000; ++round) {
        // enqueue 3, dequeue 2, in a ring of 8 items (never more than 8 queued)
        for (int k = 0; k < 3 && next_in - next_out < 8; ++k, ++next_in)
            q.enqueue(&jobs[next_in % 8]);
        for (int k = 0; k < 2 && next_out < next_in; ++k, ++next_out) {
            Job* j = q.dequeue();
            ASSERT_NE(j, nullptr);
            EXPECT_EQ(j->id, next_out % 8);
        }
    }
    while (next_out < next_in) {
        Job* j = q.dequeue();
        ASSERT_NE(j, nullptr);
        EXPECT_EQ(j->id, next_out++ % 8);
    }
    EXPECT_EQ(q.dequeue(), nullptr);
    for (auto& j : jobs)
        coop::release(&j);
}

TEST_F(QueueBasic, NodeReuseKeepsCountBounded) {
    // 10^6 enqueue/dequeue pairs over two queues and 4 items allocate no node beyond the
    // first use: every item brings back the node its dequeue retired.
    coop::Queue<Job> a, b;
    Job jobs[4];
    for (int i = 0; i < 4; ++i) {
        jobs[i].id = i;
        a.enqueue(&jobs[i]);
    }
    const std::size_t after_setup = coop::nodes_live();
    EXPECT_EQ(after_setup, base_ + 2 + 4);
    for (int i = 0; i < 500'000; ++i) {
        Job* j = a.dequeue();
        ASSERT_NE(j, nullptr);
        b.enqueue(j);
        j = b.dequeue();
        ASSERT_NE(j, nullptr);
        a.enqueue(j);
        if (i % 4096 == 0) {
            ASSERT_EQ(coop::nodes_live(), after_setup) << "at pair " << i;
        }
    }
    EXPECT_EQ(coop::nodes_live(), after_setup);
    EXPECT_EQ(a.check_quiescent(), 4);
    EXPECT_EQ(b.check_quiescent(), 0);
    for (int i = 0; i < 4; ++i) {
        Job* j = a.dequeue();
        ASSERT_NE(j, nullptr);
        EXPECT_EQ(j->id, i);  // 500'000 rotations of 4 items: back to the start order
        coop::release(j);
    }
}

TEST_F(QueueBasic, ReleaseOfHazardousNodeSwapsWithPool) {
    // A node still named by some processor's hazard pointer is not freed by release(): it is
    // exchanged into that processor's pool, and release() frees what the pool held.
    Job job;
    job.node = coop::detail::allocate_node();
    coop::Node* const n = job.node;
    coop::bind_processor(1);
    coop::detail::g_processors[1].hp2.store(n);  // processor 1 "protects" n
    coop::bind_processor(0);
    const std::size_t before = coop::nodes_live();
    coop::release(&job);
    EXPECT_EQ(job.node, nullptr);
    EXPECT_EQ(coop::detail::g_processors[1].pool2.load(), n) << "hazardous node pooled";
    EXPECT_EQ(coop::nodes_live(), before) << "pool was empty: nothing to free";
    // Once the hazard is gone, drain_pools() frees it.
    coop::detail::g_processors[1].hp2.store(nullptr);
    coop::drain_pools();
    EXPECT_EQ(coop::nodes_live(), before - 1);
}

TEST_F(QueueBasic, EnqueueSkipsHazardousNode) {
    // enqueue() must not reuse the item's node while another processor protects it.
    coop::Queue<Job> q;
    Job job;
    q.enqueue(&job);
    ASSERT_EQ(q.dequeue(), &job);
    coop::Node* const retired = job.node;
    ASSERT_NE(retired, nullptr);
    coop::bind_processor(1);  // processor 1 exists (scans cover bound processors only)
    coop::bind_processor(0);
    coop::detail::g_processors[1].hp1.store(retired);
    q.enqueue(&job);
    EXPECT_EQ(coop::detail::g_processors[1].pool1.load(), retired);
    EXPECT_EQ(q.check_quiescent(), 1);
    EXPECT_EQ(q.dequeue(), &job);
    EXPECT_NE(job.node, retired);
    coop::detail::g_processors[1].hp1.store(nullptr);
    coop::release(&job);
}

TEST_F(QueueBasic, AcquireFollowsASwapChainAndRestarts) {
    // acquire() of A: A is protected by processor 2's hp1, so A goes into processor 2's
    // pool1 and acquire() continues with what was there, B. B is protected by processor 0's
    // hp2 (an index the scan had passed: it must restart), so B goes into processor 0's
    // pool2 and acquire() continues with C, which nobody protects: the result.
    using coop::detail::g_processors;
    coop::bind_processor(2);
    coop::bind_processor(0);
    coop::Node* a = coop::detail::allocate_node();
    coop::Node* b = coop::detail::allocate_node();
    coop::Node* c = coop::detail::allocate_node();
    g_processors[2].hp1.store(a);
    g_processors[2].pool1.store(b);
    g_processors[0].hp2.store(b);
    g_processors[0].pool2.store(c);
    EXPECT_EQ(coop::detail::acquire(a), c);
    EXPECT_EQ(g_processors[2].pool1.load(), a);
    EXPECT_EQ(g_processors[0].pool2.load(), b);
    // With processor 0's pool2 empty instead, the chain ends in nullptr (allocate).
    coop::Node* got = g_processors[0].pool2.exchange(nullptr);
    g_processors[2].pool1.store(got);  // B back into processor 2's pool1 ...
    coop::Node* held = a;
    g_processors[2].hp1.store(b);      // ... now protected there too; A is free again
    EXPECT_EQ(coop::detail::acquire(held), a) << "an unprotected node is kept";
    EXPECT_EQ(coop::detail::acquire(nullptr), nullptr);
    g_processors[2].hp1.store(nullptr);
    g_processors[0].hp2.store(nullptr);
    coop::detail::free_node(a);
    coop::detail::free_node(c);
    // B stays pooled; the fixture's drain_pools() frees it and checks the count.
}

// A queue built on a thread whose first nodes come from the shared free list (nodes that an
// exited thread gave back) starts empty: refill() once returned such a node with its
// free-list link still in `next`, so the new queue's dummy pointed at another free node.
TEST(QueueNodeMemory, QueueBuiltFromTheSharedFreeListIsEmpty) {
    std::thread([] {
        coop::bind_processor(0);
        coop::Queue<Job> a, b, c;  // their dummies go to this thread's list, then (exit) shared
    }).join();
    std::thread([] {
        coop::bind_processor(0);
        coop::Queue<Job> q;  // the first node of a fresh thread: refill() from the shared list
        EXPECT_TRUE(q.empty());
        EXPECT_EQ(q.check_quiescent(), 0);
        EXPECT_EQ(q.dequeue(), nullptr);
        Job j;
        q.enqueue(&j);
        EXPECT_EQ(q.dequeue(), &j);
        EXPECT_EQ(q.dequeue(), nullptr);
        coop::release(&j);
    }).join();
}

}  // namespace
