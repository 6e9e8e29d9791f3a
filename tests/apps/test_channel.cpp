// The shared blocking buffers and the start gate of workloads/apps/ (channel.hpp,
// start.hpp) under stress on the OS-thread backends: nothing lost or duplicated, FIFO order
// for one producer, no lost wake-up (a watchdog turns a hang into a failure), and a gate
// that aborts runs no body.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/support/grid.hpp"
#include "tests/support/watchdog.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/apps/start.hpp"

using namespace coopbench;
using coopbench::test::Watchdog;

namespace {

template <class B>
class ChannelTest : public ::testing::Test {
  protected:
    // inside — run `body` as a thread of B's runtime on every core.
    template <class F>
    static void inside(F&& body) {
        RuntimeOptions o;
        o.processors = coopbench::test::processors();
        typename B::Runtime rt(o);
        rt.run(std::forward<F>(body));
    }
};
using OsBackends = ::testing::Types<PthreadsBackend, StdThreadBackend>;
class BackendNames {
  public:
    template <class T>
    static std::string GetName(int) {
        return std::string(T::name);
    }
};
TYPED_TEST_SUITE(ChannelTest, OsBackends, BackendNames);

constexpr std::int64_t kItems = coopbench::test::sanitized ? 4000 : 40000;

}  // namespace

TYPED_TEST(ChannelTest, BoundedBufferKeepsFifoOrderForOneProducer) {
    using B = TypeParam;
    Watchdog dog("fifo");
    for (std::size_t cap : {1u, 2u, 7u}) {
        std::vector<std::int64_t> got;
        this->inside([&] {
            apps::BoundedBuffer<B, std::int64_t> buf(cap);
            auto producer = B::spawn([&] {
                for (std::int64_t i = 0; i < kItems; ++i) buf.put(i);
            });
            for (std::int64_t i = 0; i < kItems; ++i) got.push_back(buf.take());
            producer.join();
        });
        ASSERT_EQ(got.size(), static_cast<std::size_t>(kItems));
        for (std::int64_t i = 0; i < kItems; ++i) ASSERT_EQ(got[static_cast<std::size_t>(i)], i) << "capacity " << cap;
    }
}

TYPED_TEST(ChannelTest, BoundedBufferLosesAndDuplicatesNothing) {
    using B = TypeParam;
    Watchdog dog("bounded buffer stress");
    const std::size_t producers = 4, consumers = 3;  // unequal on purpose
    const std::int64_t total = kItems;
    for (std::size_t cap : {1u, 3u, 64u}) {
        std::unique_ptr<std::atomic<int>[]> seen(new std::atomic<int>[total]());
        this->inside([&] {
            apps::BoundedBuffer<B, std::int64_t> buf(cap);
            std::vector<typename B::Thread> threads;
            for (std::size_t p = 0; p < producers; ++p)
                threads.push_back(B::spawn([&, p] {
                    for (std::int64_t v = static_cast<std::int64_t>(p); v < total;
                         v += static_cast<std::int64_t>(producers))
                        buf.put(v);
                }));
            // Each consumer takes an equal share; the last also the remainder.
            for (std::size_t c = 0; c < consumers; ++c) {
                const std::int64_t share = total / static_cast<std::int64_t>(consumers) +
                                           (c + 1 == consumers ? total % static_cast<std::int64_t>(consumers) : 0);
                threads.push_back(B::spawn([&, share] {
                    for (std::int64_t i = 0; i < share; ++i) seen[buf.take()].fetch_add(1, std::memory_order_relaxed);
                }));
            }
            for (auto& t : threads) t.join();
        });
        for (std::int64_t v = 0; v < total; ++v) ASSERT_EQ(seen[v].load(), 1) << "value " << v << ", capacity " << cap;
    }
}

TEST(BoundedBuffer, RejectsZeroCapacity) {
    EXPECT_THROW((apps::BoundedBuffer<StdThreadBackend, int>(0)), std::invalid_argument);
}

TYPED_TEST(ChannelTest, MailboxPassesEveryValueOnceWithManyWritersAndReaders) {
    using B = TypeParam;
    Watchdog dog("mailbox stress");
    const std::size_t writers = 3, readers = 3;
    const std::int64_t per = kItems / 3;
    std::unique_ptr<std::atomic<int>[]> seen(new std::atomic<int>[per * 3]());
    this->inside([&] {
        apps::Mailbox<B, std::int64_t> box;
        std::vector<typename B::Thread> threads;
        for (std::size_t w = 0; w < writers; ++w)
            threads.push_back(B::spawn([&, w] {
                for (std::int64_t i = 0; i < per; ++i) box.put(static_cast<std::int64_t>(w) * per + i);
            }));
        for (std::size_t r = 0; r < readers; ++r)
            threads.push_back(B::spawn([&] {
                for (std::int64_t i = 0; i < per; ++i) seen[box.take()].fetch_add(1, std::memory_order_relaxed);
            }));
        for (auto& t : threads) t.join();
    });
    for (std::int64_t v = 0; v < per * 3; ++v) ASSERT_EQ(seen[v].load(), 1) << "value " << v;
}

TYPED_TEST(ChannelTest, StartGateRunsAllBodiesOnGoAndNoneOnAbort) {
    using B = TypeParam;
    Watchdog dog("start gate");
    for (bool go : {true, false}) {
        std::atomic<int> ran{0};
        this->inside([&] {
            apps::StartGate<B> gate;
            Group<B> group(8);
            for (int i = 0; i < 8; ++i)
                ASSERT_TRUE(group.spawn([&] {
                    if (gate.wait()) ran.fetch_add(1, std::memory_order_relaxed);
                }));
            if (go) gate.go();
            else gate.abort();
            group.join_all();
            EXPECT_EQ(gate.wait(), go);  // a late caller sees the same outcome without blocking
        });
        EXPECT_EQ(ran.load(), go ? 8 : 0);
    }
}

TYPED_TEST(ChannelTest, SpawnGatedRunsEachIndexOnce) {
    using B = TypeParam;
    Watchdog dog("spawn_gated");
    std::vector<std::atomic<int>> hits(50);
    this->inside([&] {
        apps::StartGate<B> gate;
        Group<B> group(hits.size());
        ASSERT_TRUE(apps::spawn_gated(group, gate, hits.size(), [&](std::size_t i) { hits[i].fetch_add(1); }));
        group.join_all();
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}
