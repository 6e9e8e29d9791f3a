// test_owner_queue.cpp — units::OwnerQueue (units/owner_queue.hpp; Quirk 2008, sections 6-8)
// on OS threads bound as coop processors.
//
// - Sequential: the specification of section 6 (was_empty / is_empty as a set's emptiness),
//   the two-step dequeue, the owned constructor's token.
// - Stress (both the paper's deq_and_is_empty and the two-step begin/end): T threads (more
//   than cores) enqueue; whoever is told "was empty" becomes owner and drains. Checked:
//   never two owners (an owner counter: Theorem 2), no overlapping dequeues, every item
//   dequeued exactly once, and at the end counter 0 with an empty list; a dequeue that finds
//   nothing aborts inside OwnerQueue (Theorem 3), and a watchdog turns a hang into a failure.
// - A broken contract (a non-owner dequeuing an empty queue) is caught (death test).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "tests/locks/sizes.hpp"
#include "units/owner_queue.hpp"

using namespace std::chrono_literals;

namespace {

struct Item : coop::QueueItem {
    int id = 0;
};

TEST(OwnerQueue, SequentialSpecification) {
    coop::bind_processor(0);
    units::OwnerQueue<Item> q;
    Item a, b, c;
    EXPECT_TRUE(q.enq_and_was_empty(&a));   // empty -> owner
    EXPECT_FALSE(q.enq_and_was_empty(&b));
    auto d1 = q.deq_and_is_empty();
    EXPECT_EQ(d1.item, &a);
    EXPECT_FALSE(d1.is_empty);
    auto d2 = q.deq_and_is_empty();
    EXPECT_EQ(d2.item, &b);
    EXPECT_TRUE(d2.is_empty);               // ownership ends
    EXPECT_EQ(q.count(), 0);
    EXPECT_TRUE(q.enq_and_was_empty(&c));   // a new busy period: a new owner
    Item* x = q.begin_deq();
    EXPECT_EQ(x, &c);
    EXPECT_EQ(q.count(), 1);                // still owned while the item is processed
    EXPECT_FALSE(q.enq_and_was_empty(&a));  // so a sender does not become owner meanwhile
    EXPECT_FALSE(q.end_deq_and_is_empty());
    EXPECT_EQ(q.begin_deq(), &a);
    EXPECT_TRUE(q.end_deq_and_is_empty());
    EXPECT_EQ(q.check_quiescent(), 0);
    for (Item* i : {&a, &b, &c}) coop::release(i);
}

TEST(OwnerQueue, OwnedConstructionHoldsAToken) {
    coop::bind_processor(0);
    {
        units::OwnerQueue<Item> q(units::owned);
        EXPECT_TRUE(q.disown_token_and_is_empty());  // nobody came: ownership ends
        Item a;
        EXPECT_TRUE(q.enq_and_was_empty(&a));         // the next one becomes owner
        EXPECT_TRUE(q.deq_and_is_empty().is_empty);
        coop::release(&a);
    }
    {
        units::OwnerQueue<Item> q(units::owned);
        Item a, b;
        EXPECT_FALSE(q.enq_and_was_empty(&a));  // the token's holder owns it: not us
        EXPECT_FALSE(q.enq_and_was_empty(&b));
        EXPECT_FALSE(q.disown_token_and_is_empty());  // the holder must drain
        EXPECT_FALSE(q.deq_and_is_empty().is_empty);
        EXPECT_TRUE(q.deq_and_is_empty().is_empty);
        coop::release(&a);
        coop::release(&b);
    }
}

TEST(OwnerQueueDeathTest, DequeueWithoutOwnershipIsCaught) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            coop::bind_processor(0);
            units::OwnerQueue<Item> q;
            (void)q.deq_and_is_empty();  // nobody owns an empty queue: Theorem 3's premise broken
        },
        "ownership contract broken");
}

// stress — T threads, each enqueuing `per` items; owners drain with the paper's one-step
// dequeue (two_step = false) or begin/end (true: an "operation" runs between the steps).
// The owner counter: an owner decrements `owners` just before the step that may end its
// ownership and increments it again when told "not empty", so a second owner is seen exactly
// when some thread is told "was empty" (or "not empty") while another holds ownership.
void stress(bool two_step, int threads, int per) {
    const int total = threads * per;
    units::OwnerQueue<Item> q;
    std::unique_ptr<Item[]> items(new Item[static_cast<std::size_t>(total)]);
    std::unique_ptr<std::atomic<int>[]> seen(new std::atomic<int>[static_cast<std::size_t>(total)]);
    for (int i = 0; i < total; ++i) {
        items[i].id = i;
        seen[i].store(0);
    }
    std::atomic<int> owners{0}, in_deq{0}, running{0}, violations{0}, drains{0};
    std::atomic<int> go{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
            coop::bind_processor(static_cast<unsigned>(t));
            go.fetch_add(1);
            while (go.load() < threads) std::this_thread::yield();
            for (int k = 0; k < per; ++k) {
                Item* mine = &items[t * per + k];
                if (!q.enq_and_was_empty(mine)) continue;
                // Owner now (Theorem 2: nobody else is).
                if (owners.fetch_add(1) != 0) violations.fetch_add(1);
                drains.fetch_add(1);
                for (;;) {
                    Item* it;
                    bool empty;
                    if (two_step) {
                        // Dequeues never overlap (Theorem 2) and operations never overlap
                        // (unit exclusion), the counter still owned while one runs.
                        if (in_deq.fetch_add(1) != 0) violations.fetch_add(1);
                        it = q.begin_deq();
                        in_deq.fetch_sub(1);
                        if (running.fetch_add(1) != 0) violations.fetch_add(1);
                        if (seen[it->id].fetch_add(1) != 0) violations.fetch_add(1);
                        running.fetch_sub(1);
                        owners.fetch_sub(1);  // the next step may end our ownership
                        empty = q.end_deq_and_is_empty();
                    } else {
                        owners.fetch_sub(1);  // the call may end our ownership
                        auto d = q.deq_and_is_empty();
                        it = d.item;
                        empty = d.is_empty;
                        if (seen[it->id].fetch_add(1) != 0) violations.fetch_add(1);
                    }
                    if (empty) break;
                    // Told "not empty": still the owner, so nobody else may be.
                    if (owners.fetch_add(1) != 0) violations.fetch_add(1);
                }
            }
        });
    }
    for (auto& t : ts) t.join();
    EXPECT_EQ(violations.load(), 0);
    for (int i = 0; i < total; ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
    EXPECT_EQ(q.count(), 0);
    EXPECT_EQ(q.check_quiescent(), 0);
    EXPECT_GT(drains.load(), 0);
    coop::bind_processor(0);
    for (int i = 0; i < total; ++i) coop::release(&items[i]);
}

TEST(OwnerQueueStress, NeverTwoOwnersEveryItemOnce) {
    locks_test::Watchdog wd(240s, "OwnerQueue stress (deq_and_is_empty)");
    const int threads = locks_test::threads_over_cores(2);
    for (int round = 0; round < locks_test::scaled(100, 50); ++round)
        stress(false, threads, locks_test::scaled(2000, 10));
}

TEST(OwnerQueueStress, TwoStepDequeueKeepsUnitExclusion) {
    locks_test::Watchdog wd(240s, "OwnerQueue stress (begin_deq/end_deq)");
    const int threads = locks_test::threads_over_cores(2);
    for (int round = 0; round < locks_test::scaled(100, 50); ++round)
        stress(true, threads, locks_test::scaled(2000, 10));
}

}  // namespace
