// test_queue_aba.cpp — the ABA bug of the printed Fig. 6 (negele-errata.md item 1),
// reproduced deterministically on one thread, and the production queue (coop::Queue's
// default policy, the one the runtime uses; the hooks are config.hpp's COOP_HOOK points,
// compiled in for this test only) surviving the very same interleaving. Also the window
// of dequeue's re-check of head_ after publishing hp2.
//
// The interleaving. Processor 0 enqueues A behind X: it has protected the tail nX (hp1),
// linked nA behind it, and is about to swing the tail with CAS(tail_, nX, nA). At that
// point the test hook acts as processor 1 (the thread re-binds its index, so processor 0's
// hazard pointers stay as they are) and runs:
//   dequeue -> X (X now carries the old dummy D)
//   dequeue -> A (the tail is helped to nA; A carries nX)
//   enqueue X (reuses D), dequeue -> X (X carries nA)
//   enqueue A (wants to reuse nX: the printed figure already cleared hp1, so nX is reused
//             and becomes the tail again; the corrected figure still protects nX, so
//             acquire() swaps it into processor 0's pool1 and A gets a fresh node)
// Back on processor 0: in the printed figure CAS(tail_, nX, nA) succeeds on the recycled
// nX, and the tail now names nA, a node that X owns and that is on no list: the tail moved
// back off the list. X's next enqueue then reuses nA and links it behind itself (the tail):
// a cycle, and X is lost. In the corrected figure the CAS fails and nothing is lost.
#include <gtest/gtest.h>

#include <type_traits>

#include "coop/queue.hpp"

namespace {

struct Job : coop::QueueItem {
    int id = 0;
};

// Scenario — the cast of the interleaving above, for one queue policy.
template <class Policy>
struct Scenario {
    static inline coop::Queue<Job, Policy>* q = nullptr;
    static inline Job* x = nullptr;
    static inline Job* a = nullptr;
    static inline coop::Node* nx = nullptr;  // X's node: the tail processor 0 protects
    static inline coop::Node* na = nullptr;  // A's node: the one processor 0 swings to
    static inline int steps = 0;             // hook steps that went as scripted

    // hook — runs once, as processor 1, at the hook point of processor 0's enqueue of A.
    static void hook(const void*, const void*) {
        coop::test_hooks::enqueue_before_tail_cas = nullptr;  // our own enqueues must not re-enter
        coop::bind_processor(1);
        if (q->dequeue() == x && x->node != nullptr) ++steps;
        if (q->dequeue() == a && a->node == nx) ++steps;  // A now carries nX
        q->enqueue(x);
        if (q->dequeue() == x && x->node == na) ++steps;  // X now carries nA
        q->enqueue(a);  // the critical reuse of nX
        coop::bind_processor(0);
    }

    // run — enqueues X, then A with the hook armed.
    static void run(coop::Queue<Job, Policy>& queue, Job& jx, Job& ja) {
        q = &queue;
        x = &jx;
        a = &ja;
        steps = 0;
        coop::bind_processor(0);
        // Give X and A their nodes up front, so that the test knows them (acquire() keeps an
        // item's own node when nothing protects it).
        nx = x->node = coop::detail::allocate_node();
        na = a->node = coop::detail::allocate_node();
        queue.enqueue(x);
        ASSERT_EQ(queue.check_quiescent(), 1);
        coop::test_hooks::enqueue_before_tail_cas = &hook;
        queue.enqueue(a);
        coop::test_hooks::enqueue_before_tail_cas = nullptr;
        ASSERT_EQ(steps, 3) << "the interleaving did not run as scripted";
    }
};

class QueueAba : public ::testing::Test {
protected:
    void SetUp() override {
        coop::bind_processor(0);
        coop::drain_pools();  // processor 0's pool1 must start empty for the script
        base_ = coop::nodes_live();
    }
    void TearDown() override {
        coop::drain_pools();
        EXPECT_EQ(coop::nodes_live(), base_) << "a test leaked queue nodes";
    }
    std::size_t base_ = 0;
};

TEST_F(QueueAba, PrintedFig6LosesAnItem) {
    Job x, a;
    x.id = 1, a.id = 2;
    {
        coop::Queue<Job, coop::PrintedFig6> q;
        using S = Scenario<coop::PrintedFig6>;
        S::run(q, x, a);
        // A was enqueued with the recycled nX: the ABA precondition happened.
        EXPECT_EQ(coop::detail::g_processors[0].pool1.load(), nullptr)
            << "nX was not protected, so nothing should have been pooled";
        // The tail moved back to nA, which X owns and which is on no list.
        EXPECT_EQ(x.node, S::na);
        EXPECT_EQ(q.check_quiescent(), -1) << "printed Fig. 6: the tail should be off the list";
        // X's next enqueue reuses nA, which is still the queue's tail: nA is linked behind
        // itself (a cycle), off the list from the head, and X is lost.
        q.enqueue(&x);
        EXPECT_EQ(S::na->next.load(), S::na) << "printed Fig. 6: expected the cycle nA -> nA";
        EXPECT_EQ(q.dequeue(), &a);
        EXPECT_EQ(q.dequeue(), nullptr) << "printed Fig. 6: X should have been lost";
        // Clean up the wreck: nA is reachable from nowhere but the tail.
        EXPECT_EQ(x.node, nullptr);
        coop::detail::free_node(S::na);
    }
    coop::release(&x);
    coop::release(&a);
}

// The production queue (default policy, as in the runtime): flipping
// Fig6Corrected::kClearHp1BeforeTailCas to the printed figure's true makes this test fail.
TEST_F(QueueAba, ProductionQueueSurvivesTheAbaInterleaving) {
    static_assert(std::is_same_v<coop::Queue<Job>, coop::Queue<Job, coop::Fig6Corrected>>);
    Job x, a, z;
    x.id = 1, a.id = 2, z.id = 3;
    {
        coop::Queue<Job> q;
        using S = Scenario<coop::Fig6Corrected>;
        S::run(q, x, a);
        // hp1 still protected nX: the reuse swapped it into processor 0's pool1.
        EXPECT_EQ(coop::detail::g_processors[0].pool1.load(), S::nx)
            << "acquire() should have swapped the protected node into the pool";
        EXPECT_EQ(q.check_quiescent(), 1) << "corrected Fig. 6: the queue holds A";
        q.enqueue(&z);
        EXPECT_EQ(q.check_quiescent(), 2);
        EXPECT_EQ(q.dequeue(), &a);
        EXPECT_EQ(q.dequeue(), &z);
        EXPECT_EQ(q.dequeue(), nullptr);
    }
    coop::release(&x);
    coop::release(&a);
    coop::release(&z);
}

// Dequeue's validation of hp2: processor 0 has read head (the dummy D) and next (X's node
// nX) and is about to publish hp2 = nX. Processor 1 then dequeues X and A, which unlinks nX
// (A carries it), and frees it (release(A): no hazard names nX yet). Processor 0 publishes
// hp2 = nX, and only the re-check of head_ keeps it from reading nX->item, freed memory.
// Without the re-check the dequeue_read_item hook sees processor 0 about to read nX.
struct Recheck {
    static inline coop::Queue<Job>* q = nullptr;
    static inline Job* x = nullptr;
    static inline Job* a = nullptr;
    static inline const void* freed = nullptr;
    static inline int reads_of_freed = 0;
    static inline int steps = 0;

    static void before_hp2() {
        coop::test_hooks::dequeue_before_hp2 = nullptr;
        coop::bind_processor(1);
        if (q->dequeue() == x) ++steps;
        Job* got = q->dequeue();
        if (got == a) ++steps;
        freed = a->node;  // nX, unlinked; nothing protects it: release() frees it
        coop::release(a);
        coop::bind_processor(0);
    }
    static void read_item(const void* node) {
        if (node == freed) ++reads_of_freed;
    }
};

TEST_F(QueueAba, DequeueRechecksHeadAfterPublishingHp2) {
    Job x, a;
    {
        coop::Queue<Job> q;
        Recheck::q = &q, Recheck::x = &x, Recheck::a = &a;
        Recheck::steps = Recheck::reads_of_freed = 0;
        q.enqueue(&x);
        q.enqueue(&a);
        coop::test_hooks::dequeue_before_hp2 = &Recheck::before_hp2;
        coop::test_hooks::dequeue_read_item = &Recheck::read_item;
        Job* got = q.dequeue();
        coop::test_hooks::dequeue_before_hp2 = nullptr;
        coop::test_hooks::dequeue_read_item = nullptr;
        EXPECT_EQ(Recheck::steps, 2) << "the interleaving did not run as scripted";
        EXPECT_EQ(Recheck::reads_of_freed, 0)
            << "dequeue read the item of a node that was unlinked and freed after it read it "
               "(the head_ re-check after publishing hp2 is missing)";
        EXPECT_EQ(got, nullptr) << "both items were taken by processor 1";
        EXPECT_EQ(q.check_quiescent(), 0);
    }
    coop::release(&x);
}

// protect()'s re-read after publishing the hazard: processor 0's dequeue has read head_ (the
// dummy D) and not yet published hp1 = D. Processor 1 dequeues X, which retires D (X carries
// it) and frees it (release(X): no hazard names D yet). Processor 0 then publishes hp1 = D:
// only the re-read of head_ (no longer D) keeps it from reading D->next, freed memory.
// Without it the dequeue_read_next hook sees processor 0 about to read D. (As a stress,
// QueueStress.YieldPattern* caught that mutant in 7 of 10 runs.)
struct Reread {
    static inline coop::Queue<Job>* q = nullptr;
    static inline Job* x = nullptr;
    static inline const void* freed = nullptr;
    static inline int reads_of_freed = 0;
    static inline int steps = 0;

    static void before_publish() {
        coop::test_hooks::protect_before_publish = nullptr;  // once
        coop::bind_processor(1);
        if (q->dequeue() == x) ++steps;
        freed = x->node;  // D, unlinked; nothing protects it: release() frees it
        coop::release(x);
        coop::bind_processor(0);
    }
    static void read_next(const void* node) {
        if (node == freed) ++reads_of_freed;
    }
};

TEST_F(QueueAba, ProtectRereadsAfterPublishingTheHazard) {
    Job x;
    {
        coop::Queue<Job> q;
        Reread::q = &q, Reread::x = &x;
        Reread::steps = Reread::reads_of_freed = 0;
        Reread::freed = nullptr;
        q.enqueue(&x);
        coop::test_hooks::protect_before_publish = &Reread::before_publish;
        coop::test_hooks::dequeue_read_next = &Reread::read_next;
        Job* got = q.dequeue();
        coop::test_hooks::protect_before_publish = nullptr;
        coop::test_hooks::dequeue_read_next = nullptr;
        EXPECT_EQ(Reread::steps, 1) << "the interleaving did not run as scripted";
        EXPECT_EQ(Reread::reads_of_freed, 0)
            << "dequeue read head->next of a node that was freed before its hazard was published "
               "(protect() did not re-read the pointer after publishing it)";
        EXPECT_EQ(got, nullptr) << "X was taken by processor 1";
        EXPECT_EQ(q.check_quiescent(), 0);
    }
}

// empty() reads the tail first, then the head (queue.hpp empty()). Read the other way round,
// another processor that dequeues the head's successor and enqueues that item again between
// the two loads (the native policy's yield does exactly this) gives the item the retired
// dummy as its node (dequeue hands it over), so the new tail is the very address the first
// load read as the head: "empty" with an item queued. The hook empty_between_loads acts as
// processor 1 between the two loads.
struct Reenqueue {
    static inline coop::Queue<Job>* q = nullptr;
    static inline int steps = 0;
    static void between_loads() {
        coop::test_hooks::empty_between_loads = nullptr;  // once
        coop::bind_processor(1);
        Job* first = q->dequeue();
        if (first != nullptr && first->id == 1) ++steps;
        q->enqueue(first);  // reuses the retired dummy, now the tail
        coop::bind_processor(0);
    }
};

TEST(QueueEmpty, ReenqueueBetweenTheLoadsIsNotEmpty) {
    coop::bind_processor(0);
    coop::Queue<Job> q;
    Job one, two;
    one.id = 1;
    two.id = 2;
    q.enqueue(&one);
    q.enqueue(&two);
    Reenqueue::q = &q;
    Reenqueue::steps = 0;
    coop::test_hooks::empty_between_loads = &Reenqueue::between_loads;
    const bool empty = q.empty();
    coop::test_hooks::empty_between_loads = nullptr;
    ASSERT_EQ(Reenqueue::steps, 1) << "the hook did not run as scripted";
    EXPECT_FALSE(empty) << "two items were queued throughout";
    EXPECT_EQ(q.dequeue(), &two);
    EXPECT_EQ(q.dequeue(), &one);
    coop::release(&one);
    coop::release(&two);
}

}  // namespace
