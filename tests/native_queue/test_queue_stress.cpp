// test_queue_stress.cpp — coop::Queue under concurrency (coop/include/coop/queue.hpp).
//
// Invariants checked, each under a watchdog that aborts a hung run:
// - ProducersConsumers: P producers and P consumers (P = hardware threads, at least 2) move
//   items across several queues at once. Every transfer is seen exactly once (a counter per
//   transfer), each consumer sees each producer's items of each queue in increasing order
//   (per-producer FIFO), and nodes_live() never exceeds items + queues + 2N.
// - YieldPattern: the scheduler's use (dequeue the next item, enqueue it back) by N
//   processors on one queue, with items retired (release + delete) and replaced
//   concurrently; no item is lost or duplicated and the node bound holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "coop/queue.hpp"
#include "tests/support/watchdog.hpp"

namespace {

constexpr bool kSanitized = coopbench::test::sanitized;

// Watchdog — the tests' one watchdog (tests/support/watchdog.hpp), with a progress figure.
using coopbench::test::Watchdog;

unsigned processors() { return std::max(2u, std::thread::hardware_concurrency()); }

struct Transfer : coop::QueueItem {
    unsigned producer = 0;
    unsigned queue = 0;
    std::uint64_t seq = 0;
};

// run_producers_consumers — the ProducersConsumers scenario with `queues` data queues and
// `total` transfers; returns nothing, reports through gtest. `chain` > 1: producers append
// up to `chain` transfers at a time to a data queue as one Chain (queue.hpp enqueue(Chain&)),
// so tails lag by many nodes and dequeuers and single enqueuers (the return queues) help.
void run_producers_consumers(unsigned queues, std::uint64_t total, unsigned chain = 1) {
    const unsigned P = processors();
    const unsigned kItemsPerProducer = 128;
    const std::uint64_t per_producer = total / P;
    total = per_producer * P;

    coop::bind_processor(2 * P);  // the main thread seeds and drains the return queues
    coop::drain_pools();
    const std::size_t base = coop::nodes_live();

    std::vector<std::unique_ptr<coop::Queue<Transfer>>> data, back;
    for (unsigned q = 0; q < queues; ++q)
        data.push_back(std::make_unique<coop::Queue<Transfer>>());
    for (unsigned p = 0; p < P; ++p)
        back.push_back(std::make_unique<coop::Queue<Transfer>>());
    std::vector<Transfer> items(std::size_t{P} * kItemsPerProducer);
    for (unsigned p = 0; p < P; ++p)
        for (unsigned k = 0; k < kItemsPerProducer; ++k)
            back[p]->enqueue(&items[std::size_t{p} * kItemsPerProducer + k]);

    // N: every processor index bound so far (workers 0..2P-1, main 2P, maybe others).
    const std::size_t N = coop::detail::g_bound.load();
    const std::size_t bound = items.size() + queues + P + 2 * (std::max<std::size_t>(N, 2 * P + 1));

    std::vector<std::atomic<std::uint8_t>> seen(total);
    std::atomic<std::uint64_t> consumed{0};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<std::size_t> max_nodes{0};
    std::atomic<bool> done{false};

    Watchdog dog("ProducersConsumers", 120, [&] { return "progress " + std::to_string(consumed.load()); });

    std::vector<std::thread> threads;
    for (unsigned p = 0; p < P; ++p) {
        threads.emplace_back([&, p] {
            coop::bind_processor(p);
            typename coop::Queue<Transfer>::Chain batch;
            unsigned batch_queue = 0;
            for (std::uint64_t s = 0; s < per_producer; ++s) {
                Transfer* t;
                while ((t = back[p]->dequeue()) == nullptr) {
                    data[batch_queue]->enqueue(batch);  // our own items may be all we wait for
                    std::this_thread::yield();
                }
                t->producer = p;
                t->seq = s;
                if (chain <= 1) {
                    t->queue = static_cast<unsigned>((s * 7 + p) % queues);
                    data[t->queue]->enqueue(t);
                    continue;
                }
                if (batch.empty()) batch_queue = static_cast<unsigned>((s * 7 + p) % queues);
                t->queue = batch_queue;
                data[batch_queue]->link(batch, t);
                if (batch.size >= chain) data[batch_queue]->enqueue(batch);
            }
            data[batch_queue]->enqueue(batch);
        });
    }
    for (unsigned c = 0; c < P; ++c) {
        threads.emplace_back([&, c] {
            coop::bind_processor(P + c);
            // last[q * P + p]: the last sequence number seen from producer p on queue q
            std::vector<std::int64_t> last(std::size_t{queues} * P, -1);
            std::uint64_t local = 0;
            unsigned q = c % queues;
            while (consumed.load(std::memory_order_relaxed) < total) {
                Transfer* t = nullptr;
                for (unsigned k = 0; k < queues && t == nullptr; ++k, q = (q + 1) % queues)
                    t = data[q]->dequeue();
                if (t == nullptr) {
                    if (local) consumed.fetch_add(std::exchange(local, 0));
                    std::this_thread::yield();
                    continue;
                }
                const std::uint64_t id = t->producer * per_producer + t->seq;
                if (t->producer >= P || t->seq >= per_producer ||
                    seen[id].fetch_add(1, std::memory_order_relaxed) != 0)
                    errors.fetch_add(1);
                std::int64_t& l = last[std::size_t{t->queue} * P + t->producer];
                if (static_cast<std::int64_t>(t->seq) <= l)
                    errors.fetch_add(1);  // per-producer FIFO broken
                l = static_cast<std::int64_t>(t->seq);
                back[t->producer]->enqueue(t);
                if (++local == 256) consumed.fetch_add(std::exchange(local, 0));
            }
            if (local) consumed.fetch_add(local);
        });
    }
    std::thread monitor([&] {
        while (!done.load()) {
            const std::size_t now = coop::nodes_live() - base;
            std::size_t m = max_nodes.load();
            while (now > m && !max_nodes.compare_exchange_weak(m, now)) {
            }
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    for (auto& t : threads)
        t.join();
    done = true;
    monitor.join();

    EXPECT_EQ(errors.load(), 0u) << "duplicated, foreign or out-of-order transfers";
    EXPECT_EQ(consumed.load(), total);
    std::uint64_t missing = 0;
    for (auto& s : seen)
        missing += s.load() != 1;
    EXPECT_EQ(missing, 0u) << "transfers not seen exactly once";
    EXPECT_LE(max_nodes.load(), bound) << "node count above items + queues + 2N";
    std::printf("  %u queues, %llu transfers: at most %zu nodes live (bound %zu)\n", queues,
                static_cast<unsigned long long>(total), max_nodes.load(), bound);

    // Quiescent: every item is back in its producer's return queue.
    for (unsigned q = 0; q < queues; ++q)
        EXPECT_EQ(data[q]->check_quiescent(static_cast<long>(items.size())), 0);
    std::size_t returned = 0;
    for (unsigned p = 0; p < P; ++p) {
        EXPECT_EQ(back[p]->check_quiescent(static_cast<long>(items.size())),
                  static_cast<long>(kItemsPerProducer));
        while (Transfer* t = back[p]->dequeue()) {
            ++returned;
            coop::release(t);
        }
    }
    EXPECT_EQ(returned, items.size());
    data.clear();
    back.clear();
    coop::drain_pools();
    EXPECT_EQ(coop::nodes_live(), base) << "nodes leaked";
}

// Chains of up to 64 transfers (native-ws's overflow path): no transfer lost, duplicated or
// reordered per producer; node bound and quiescent lists as for single enqueues.
TEST(QueueStress, ProducersConsumersChains) {
    run_producers_consumers(2, kSanitized ? 300'000 : 3'000'000, 64);
}

// A chain appended while another processor dequeues up to the chain's first node: the
// dequeue moves the tail from the old dummy onto that node, so the appender's tail CAS fails.
// Before enqueue(chain) returns, the tail must be at the chain's end (queue.hpp append's
// help): otherwise head_ == tail_ inside the chain and empty() says "empty" with 4 items
// queued, which hides them from every empty()-gated take (GlobalQueues::take, has_ready) until
// some later enqueue helps the tail on. No later enqueue here: the state right after the
// return is what is checked, through empty() and an empty()-gated take as the policies do.
coop::Queue<Transfer>* g_chain_queue = nullptr;
Transfer* g_chain_got = nullptr;
TEST(QueueChain, TailLaggingBehindAChainIsHelpedToItsEnd) {
    coop::bind_processor(0);
    coop::Queue<Transfer> q;
    std::vector<Transfer> items(6);
    for (unsigned i = 0; i < items.size(); ++i) items[i].seq = i;
    coop::Queue<Transfer>::Chain chain;
    for (unsigned i = 0; i < 5; ++i) q.link(chain, &items[i]);
    EXPECT_EQ(chain.size, 5u);
    g_chain_queue = &q;
    g_chain_got = nullptr;
    coop::test_hooks::enqueue_before_tail_cas = [](const void*, const void*) {
        coop::test_hooks::enqueue_before_tail_cas = nullptr;  // once
        std::thread([] {
            coop::bind_processor(1);
            g_chain_got = g_chain_queue->dequeue();  // helps the tail one node: CAS fails
        }).join();
    };
    q.enqueue(chain);
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
    EXPECT_TRUE(chain.empty());
    ASSERT_EQ(g_chain_got, &items[0]);
    EXPECT_FALSE(q.empty()) << "4 items queued behind a tail that lags inside the chain";
    EXPECT_EQ(q.check_quiescent(), 4) << "the tail should be on the chain's last node";
    // The policies' take: gated by empty().
    auto take = [&]() -> Transfer* { return q.empty() ? nullptr : q.dequeue(); };
    for (unsigned i = 1; i < 5; ++i) EXPECT_EQ(take(), &items[i]) << i;
    EXPECT_TRUE(q.empty());
    q.enqueue(&items[5]);
    EXPECT_EQ(take(), &items[5]);
    EXPECT_EQ(q.dequeue(), nullptr);
    for (auto& t : items) coop::release(&t);
}

// The same with a longer chain and the tail helped by a concurrent *enqueuer* part of the
// way (it links its own item behind the chain, so the appender's help ends past `last`):
// every item comes out once, in order, and the queue ends quiescent.
TEST(QueueChain, ChainTailHelpedByAConcurrentEnqueuer) {
    coop::bind_processor(0);
    coop::Queue<Transfer> q;
    std::vector<Transfer> items(66);
    for (unsigned i = 0; i < items.size(); ++i) items[i].seq = i;
    q.enqueue(&items[0]);
    coop::Queue<Transfer>::Chain chain;
    for (unsigned i = 1; i < 65; ++i) q.link(chain, &items[i]);
    g_chain_queue = &q;
    static Transfer* extra = nullptr;
    extra = &items[65];
    coop::test_hooks::enqueue_before_tail_cas = [](const void*, const void*) {
        coop::test_hooks::enqueue_before_tail_cas = nullptr;  // once
        std::thread([] {
            coop::bind_processor(1);
            g_chain_queue->enqueue(extra);  // helps the tail through the whole chain
        }).join();
    };
    q.enqueue(chain);
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
    EXPECT_EQ(q.check_quiescent(), 66);
    for (unsigned i = 0; i < items.size(); ++i) EXPECT_EQ(q.dequeue(), &items[i]) << i;
    EXPECT_TRUE(q.empty());
    for (auto& t : items) coop::release(&t);
}

TEST(QueueStress, ProducersConsumersManyQueues) {
    run_producers_consumers(3, kSanitized ? 1'000'000 : 10'000'000);
}

TEST(QueueStress, ProducersConsumersOneQueue) {
    run_producers_consumers(1, kSanitized ? 300'000 : 3'000'000);
}

// g_rounds — rounds completed by all processors of the running YieldPattern (counted only
// for test policies, whose hook waits for it); g_hold_rounds — how long a hook holds.
std::atomic<std::uint64_t> g_rounds{0};
std::atomic<std::uint64_t> g_hold_rounds{0};
std::atomic<bool> g_holding{false};
std::atomic<unsigned> g_running{0};  // processors still in their loop (a hook waits for them)

struct Token : coop::QueueItem {
    std::uint64_t visits = 0;  // written only by the processor that dequeued the token
    std::uint32_t id = 0;
};

// run_yield_pattern — the YieldPattern scenario on a Queue<Token, Policy>.
// `oversubscribe` processors per hardware thread: the OS then preempts processors inside
// queue operations, which opens every window a cooperative scheduler keeps small.
// `spare` tokens beyond one per processor: few make a node return to the tail quickly.
template <class Policy>
void run_yield_pattern(unsigned oversubscribe = 1, std::uint64_t scale = 4, unsigned spare = 0) {
    // N processors share one ready queue of M tokens and loop "dequeue, touch, enqueue";
    // every 64th visit a processor retires the token (release + delete) and enqueues a new
    // one in its place, so nodes are freed while other processors may still protect them.
    const unsigned N = processors() * oversubscribe;
    const unsigned M = spare ? N + spare : 2 * N;  // tokens; more than N, so never empty
    // rounds per processor: `scale` million per hardware thread (a 20th under sanitizers)
    const std::uint64_t rounds = scale * (kSanitized ? 50'000 : 1'000'000) / oversubscribe;

    coop::bind_processor(N);
    coop::drain_pools();
    const std::size_t base = coop::nodes_live();
    g_hold_rounds = 4 * M;  // by then a recycled node has come back as the tail
    std::atomic<std::uint64_t> progress{0};
    std::atomic<std::uint64_t> retired_visits{0};
    std::atomic<std::uint32_t> next_id{M};
    std::atomic<std::uint64_t> errors{0};
    std::atomic<std::size_t> max_nodes{0};
    {
        coop::Queue<Token, Policy> ready;
        for (unsigned i = 0; i < M; ++i) {
            auto* t = new Token;
            t->id = i;
            ready.enqueue(t);
        }
        const std::size_t bound = M + 1 + 2 * std::max<std::size_t>(coop::detail::g_bound.load(), N + 1);
        Watchdog dog("YieldPattern", 120, [&] { return "progress " + std::to_string(progress.load()); });
        std::vector<std::thread> threads;
        for (unsigned p = 0; p < N; ++p) {
            threads.emplace_back([&, p] {
                coop::bind_processor(p);
                g_running.fetch_add(1);
                for (std::uint64_t r = 0; r < rounds; ++r) {
                    Token* t = ready.dequeue();
                    if (t == nullptr) {
                        errors.fetch_add(1);  // M > N tokens: at most N are out of the queue
                        continue;
                    }
                    if (++t->visits % 64 == 0) {
                        retired_visits.fetch_add(t->visits);
                        coop::release(t);
                        delete t;
                        t = new Token;
                        t->id = next_id.fetch_add(1);
                    }
                    ready.enqueue(t);
                    if (coop::test_hooks::enqueue_before_tail_cas != nullptr)
                        g_rounds.fetch_add(1, std::memory_order_relaxed);  // for the hook
                    if (r % 1024 == 0) {
                        progress.fetch_add(1024);
                        const std::size_t now = coop::nodes_live() - base;
                        std::size_t m = max_nodes.load();
                        while (now > m && !max_nodes.compare_exchange_weak(m, now)) {
                        }
                    }
                }
                g_running.fetch_sub(1);
            });
        }
        for (auto& t : threads)
            t.join();
        EXPECT_EQ(errors.load(), 0u) << "the queue looked empty while it held tokens";
        EXPECT_LE(max_nodes.load(), bound) << "node count above items + queues + 2N";
        std::printf("  %u processors, %u tokens: at most %zu nodes live (bound %zu)\n", N, M,
                    max_nodes.load(), bound);
        EXPECT_EQ(ready.check_quiescent(4L * M), static_cast<long>(M));
        std::uint64_t visits = retired_visits.load();
        std::vector<std::uint32_t> ids;
        while (Token* t = ready.dequeue()) {
            visits += t->visits;
            ids.push_back(t->id);
            coop::release(t);
            delete t;
        }
        EXPECT_EQ(ids.size(), M) << "tokens lost or duplicated";
        std::sort(ids.begin(), ids.end());
        EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end()) << "a token twice";
        EXPECT_EQ(visits, rounds * N) << "visits lost";
    }
    coop::drain_pools();
    EXPECT_EQ(coop::nodes_live(), base) << "nodes leaked";
}


TEST(QueueStress, YieldPatternWithRetirement) { run_yield_pattern<coop::Fig6Corrected>(); }

TEST(QueueStress, YieldPatternOversubscribed) { run_yield_pattern<coop::Fig6Corrected>(4); }

// hold_window_open — a COOP_HOOK enqueue_before_tail_cas. Every 16th enqueue of a thread (one thread at a
// time, so the others keep going) stops at the hook point, after linking behind `tail` and
// before CAS(queue_tail, tail, node), until the tail has moved on and come back to `tail`,
// or the others completed g_hold_rounds rounds. In the printed Fig. 6 hp1 no longer protects `tail`, so
// the others retire and reuse it and it soon comes back as the tail: the CAS then succeeds
// on the recycled node (errata item 1). In the corrected figure hp1 keeps `tail` from reuse,
// it never comes back, and the hook gives up after the rounds.
void hold_window_open(const void* tail_ptr, const void* tail) {
    const auto& queue_tail = *static_cast<const std::atomic<coop::Node*>*>(tail_ptr);
    thread_local unsigned calls = 0;
    if (++calls % 16 != 0 || g_holding.exchange(true))
        return;
    const std::uint64_t start = g_rounds.load();
    const std::uint64_t hold = g_hold_rounds.load();
    bool moved = false;  // the tail has left `tail` (another processor helped it forward)
    for (unsigned spins = 0; spins < (1u << 22); ++spins) {
        const bool at_tail = queue_tail.load() == tail;
        if ((moved && at_tail) || g_rounds.load() - start >= hold || g_running.load() < 2)
            break;  // `tail` came back as the tail (recycled), or we gave up
        moved = moved || !at_tail;
        if (spins % 64 == 63)
            std::this_thread::yield();  // let descheduled processors run (oversubscription)
    }
    g_holding.store(false);
}

TEST(QueueStress, YieldPatternHeldAbaWindow) {
    // The corrected queue with the ABA window of errata item 1 held open. (The printed
    // Fig. 6 under this same test, PrintedFig6 in place of Fig6Corrected, hung in 9 of 10 runs
    // on a 2-core machine: the watchdog fired with the list corrupted.)
    coop::test_hooks::enqueue_before_tail_cas = &hold_window_open;
    run_yield_pattern<coop::Fig6Corrected>(1, 1);
    coop::test_hooks::enqueue_before_tail_cas = nullptr;
}

}  // namespace
