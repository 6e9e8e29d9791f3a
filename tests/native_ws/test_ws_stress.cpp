// test_ws_stress.cpp — OS-thread stress of the work-stealing ring (local_queue.hpp) and the
// ParaSail deque (parasail_queue.hpp): one owner pushing (ring: also push_next, overflowing
// into coop's global Queue) and popping, several thieves stealing and re-stealing from each
// other; every item must be taken exactly once (per-item counters), none lost (a watchdog
// turns a hang into a failure). Sizes shrink under sanitizers.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "coop/src/owner_guard.hpp"
#include "coop/queue.hpp"
#include "coop/src/ws/local_algorithm.hpp"
#include "coop/src/ws/local_queue.hpp"
#include "coop/src/ws/parasail_queue.hpp"
#include "tests/native_ws/ws_test_util.hpp"

namespace {

struct SItem : coop::QueueItem {
    std::atomic<int> taken{0};
    long payload = -1;  // plain: written before the push, read by the taker (TSan checks
                        // that the ring's release/acquire pairs publish it)
    long id = -1;
};

unsigned thieves() { return std::max(2u, std::thread::hardware_concurrency()); }

void take(SItem* i, std::atomic<long>& total) {
    ASSERT_NE(i, nullptr);
    ASSERT_EQ(i->payload, i->id * 7) << "payload not published with the item";
    const int before = i->taken.fetch_add(1, std::memory_order_relaxed);
    ASSERT_EQ(before, 0) << "an item was taken twice";
    total.fetch_add(1, std::memory_order_relaxed);
}

// Ring: capacity 16 so that overflow and wrap-around happen all the time.
TEST(WsStress, RingOwnerAndThievesNoItemLostOrDuplicated) {
    const long kItems = wstest::kSanitized ? 20'000 : 400'000;
    wstest::Watchdog dog("RingOwnerAndThieves", 240);
    using Ring = coop::ws::LocalQueue<SItem, 16>;
    const unsigned nthieves = thieves();
    std::vector<std::unique_ptr<Ring>> rings;
    for (unsigned k = 0; k <= nthieves; ++k) rings.push_back(std::make_unique<Ring>());
    auto items = std::make_unique<SItem[]>(static_cast<std::size_t>(kItems));
    for (long n = 0; n < kItems; ++n) items[n].id = n;
    coop::Queue<SItem>* global = nullptr;
    std::atomic<long> total{0};
    std::atomic<bool> owner_done{false};
    std::atomic<long> overflowed{0}, stolen{0};

    coop::bind_processor(nthieves + 1);  // main: creates and finally drains the global queue
    auto global_q = std::make_unique<coop::Queue<SItem>>();
    global = global_q.get();

    std::atomic<unsigned> started{0};
    std::thread owner([&] {
        coop::bind_processor(0);
        wstest::spin_until([&] { return started.load() == nthieves; });  // thieves ready
        Ring& mine = *rings[0];
        auto overflow = [&](SItem* i) {
            global->enqueue(i);
            overflowed.fetch_add(1, std::memory_order_relaxed);
        };
        for (long n = 0; n < kItems; ++n) {
            items[n].payload = n * 7;
            if (n % 3 == 0) mine.push_next(&items[n], overflow);
            else mine.push(&items[n], overflow);
            if (n % 2 == 0) {
                if (SItem* i = mine.pick().item) take(i, total);
            }
            if (n % 512 == 0) std::this_thread::yield();  // let thieves run on a small machine
        }
        owner_done = true;
        while (SItem* i = mine.pick().item) take(i, total);
    });
    std::vector<std::thread> ts;
    for (unsigned k = 1; k <= nthieves; ++k) {
        ts.emplace_back([&, k] {
            Ring& mine = *rings[k];
            coop::ws::XorShift rng(k);
            started.fetch_add(1);
            unsigned attempt = 0;
            for (;;) {
                const bool done = owner_done.load();
                // One at a time: the thief's own ring is often non-empty when it steals
                // again (steal_into must respect its room and keep its items).
                if (SItem* i = mine.pop()) take(i, total);
                // Victim: mostly the owner, sometimes another thief (re-stealing).
                const unsigned v = (rng.next() % 4 == 0) ? 1 + rng.next() % nthieves : 0;
                if (v != k) {
                    SItem* i = rings[v]->stealer().steal_into(mine, ++attempt % 4 == 0, [] { std::this_thread::yield(); });
                    if (i != nullptr) {
                        stolen.fetch_add(1, std::memory_order_relaxed);
                        take(i, total);
                    }
                }
                if (done) break;
            }
            while (SItem* i = mine.pop()) take(i, total);
        });
    }
    owner.join();
    for (auto& t : ts) t.join();
    // Everything left: rings (their owners are gone; joins order us after them) and global.
    for (auto& r : rings) {
        while (SItem* i = r->pick().item) take(i, total);
    }
    while (SItem* i = global->dequeue()) {
        take(i, total);
        coop::release(i);
    }
    EXPECT_EQ(total.load(), kItems);
    for (long n = 0; n < kItems; ++n) ASSERT_EQ(items[n].taken.load(), 1) << "item " << n;
    EXPECT_GT(overflowed.load(), 0) << "the run never overflowed: the test did not cover it";
    std::printf("ring stress: %ld items, %ld overflowed, %ld steals, %u thieves\n", kItems, overflowed.load(),
                stolen.load(), nthieves);
}

// runnext under fire: the owner only hands off through runnext (each push_next displaces
// the previous item into the ring) and picks now and then; thieves take runnext with no
// grace whenever the ring is empty. Checks exactly-once and, under TSan, that push_next's
// release / the thief's acquire publish the item (fails under TSan with a relaxed store).
TEST(WsStress, RunnextHandOffToThieves) {
    const long kItems = wstest::kSanitized ? 20'000 : 200'000;
    wstest::Watchdog dog("RunnextHandOffToThieves", 240);
    using Ring = coop::ws::LocalQueue<SItem, 8>;
    const unsigned nthieves = thieves();
    std::vector<std::unique_ptr<Ring>> rings;
    for (unsigned k = 0; k <= nthieves; ++k) rings.push_back(std::make_unique<Ring>());
    auto items = std::make_unique<SItem[]>(static_cast<std::size_t>(kItems));
    for (long n = 0; n < kItems; ++n) items[n].id = n;
    std::vector<SItem*> overflowed;  // owner only, read after the join
    std::atomic<long> total{0}, from_runnext{0};
    std::atomic<bool> owner_done{false};
    std::atomic<unsigned> started{0};
    std::thread owner([&] {
        wstest::spin_until([&] { return started.load() == nthieves; });
        Ring& mine = *rings[0];
        for (long n = 0; n < kItems; ++n) {
            items[n].payload = n * 7;
            mine.push_next(&items[n], [&](SItem* i) { overflowed.push_back(i); });
            if (n % 3 == 0) {
                if (SItem* i = mine.pick().item) take(i, total);
            }
            if (n % 512 == 0) std::this_thread::yield();
        }
        owner_done = true;
        while (SItem* i = mine.pick().item) take(i, total);
    });
    std::vector<std::thread> ts;
    for (unsigned k = 1; k <= nthieves; ++k) {
        ts.emplace_back([&, k] {
            Ring& mine = *rings[k];
            started.fetch_add(1);
            for (;;) {
                const bool done = owner_done.load();
                while (SItem* i = mine.pop()) take(i, total);
                const bool had_ring = rings[0]->size_hint() > (rings[0]->has_runnext() ? 1u : 0u);
                if (SItem* i = rings[0]->stealer().steal_into(mine, true, [] {})) {
                    if (!had_ring) from_runnext.fetch_add(1, std::memory_order_relaxed);
                    take(i, total);
                }
                if (done) break;
            }
            while (SItem* i = mine.pop()) take(i, total);
        });
    }
    owner.join();
    for (auto& t : ts) t.join();
    for (auto& r : rings)
        while (SItem* i = r->pick().item) take(i, total);
    for (SItem* i : overflowed) take(i, total);
    EXPECT_EQ(total.load(), kItems);
    for (long n = 0; n < kItems; ++n) ASSERT_EQ(items[n].taken.load(), 1) << "item " << n;
    std::printf("runnext stress: %ld items, ~%ld taken by thieves from runnext, %zu overflowed\n", kItems,
                from_runnext.load(), overflowed.size());
}

// ParaSail deque: owner push_back/push_front/pop_back/pop_front, thieves steal.
template <class Guard>
void parasail_stress(long kItems) {
    wstest::Watchdog dog("ParasailOwnerAndThieves", 240);
    coop::ws::ParasailQueue<SItem, Guard> q(4);  // small: growth happens
    auto items = std::make_unique<SItem[]>(static_cast<std::size_t>(kItems));
    for (long n = 0; n < kItems; ++n) items[n].id = n;
    std::atomic<long> total{0}, stolen{0};
    std::atomic<bool> owner_done{false};
    std::atomic<unsigned> started{0};
    const unsigned nthieves = thieves();
    std::thread owner([&] {
        wstest::spin_until([&] { return started.load() == nthieves; });  // thieves ready
        for (long n = 0; n < kItems; ++n) {
            items[n].payload = n * 7;
            if (n % 4 == 0) q.push_front(&items[n]);
            else q.push_back(&items[n]);
            if (n % 3 == 0) {
                if (SItem* i = q.pop_back()) take(i, total);
            } else if (n % 7 == 0) {
                if (SItem* i = q.pop_front()) take(i, total);
            }
            if (n % 512 == 0) std::this_thread::yield();
        }
        owner_done = true;
        while (SItem* i = q.pop_back()) take(i, total);
    });
    std::vector<std::thread> ts;
    for (unsigned k = 0; k < nthieves; ++k) {
        ts.emplace_back([&] {
            started.fetch_add(1);
            for (;;) {
                const bool done = owner_done.load();
                if (SItem* i = q.stealer().steal()) {
                    stolen.fetch_add(1, std::memory_order_relaxed);
                    take(i, total);
                }
                if (done) break;
            }
        });
    }
    owner.join();
    for (auto& t : ts) t.join();
    while (SItem* i = q.pop_back()) take(i, total);
    EXPECT_EQ(total.load(), kItems);
    for (long n = 0; n < kItems; ++n) ASSERT_EQ(items[n].taken.load(), 1) << "item " << n;
    std::printf("parasail stress (%s): %ld items, %ld steals\n", q.using_membarrier() ? "membarrier" : "seq_cst",
                kItems, stolen.load());
}

TEST(WsStress, ParasailAsymOwnerAndThieves) { parasail_stress<coop::OwnerGuardAsym>(wstest::kSanitized ? 5'000 : 100'000); }
TEST(WsStress, ParasailSeqCstOwnerAndThieves) { parasail_stress<coop::OwnerGuard>(wstest::kSanitized ? 5'000 : 100'000); }

}  // namespace
