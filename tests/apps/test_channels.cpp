// The Backend concept's channel contract (runtimes/concept.hpp: Go's semantics) on every
// backend: GenericChannel (workloads/apps/channel.hpp) on the OS backends and on the user-level
// ones, and each backend's own channel (channel_t: coop::Channel for native, native-ws and
// native-parasail; Boost.Fiber's channels for boostfiber). Checked: exactly-once delivery under
// stress with many senders and receivers for C = 0, 1, 7; FIFO per sender as each receiver sees
// it; close wakes every parked sender (ChannelClosed) and receiver (std::nullopt once drained);
// send after close and a second close throw; an unbuffered send returns only after a receiver
// took its value. A watchdog turns a hang (a lost wake-up) into a failure.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "runtimes/boostfiber/boostfiber.hpp"
#include "runtimes/native/native.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "runtimes/stdthread/stdthread.hpp"
#include "tests/support/watchdog.hpp"
#include "workloads/apps/channel.hpp"

using namespace coopbench;
using coopbench::test::Watchdog;

namespace {

// Case — a backend B, its run options, and the channel under test.
template <class Backend, bool own, int variant = 0>
struct Case {
    using B = Backend;
    template <class T>
    using Chan = std::conditional_t<own, apps::channel_t<B, T>, apps::GenericChannel<B, T>>;
    static RuntimeOptions options() {
        RuntimeOptions o;
        o.processors = coopbench::test::processors();
        if constexpr (std::is_same_v<B, NativeBackend>) {
            o.extra["scheduling"] = variant == 0 ? "global" : variant == 1 ? "work_stealing" : "parasail";
        }
        if constexpr (std::is_same_v<B, BoostFiberBackend>) {
            // work_stealing runs once per process (Boost.Fiber's static state), and a test
            // starts several runtimes: shared_work (P threads) and round_robin (P = 1).
            o.extra["algorithm"] = variant == 0 ? "shared_work" : "round_robin";
            if (variant != 0) o.processors = 1;
        }
        return o;
    }
    static std::string name() {
        std::string n(B::name);
        if constexpr (std::is_same_v<B, NativeBackend>) n += variant == 0 ? "" : variant == 1 ? "_ws" : "_parasail";
        if constexpr (std::is_same_v<B, BoostFiberBackend>)
            n += variant == 0 ? "_shared_work" : "_round_robin";
        return n + (own ? "_own" : "_generic");
    }
};

using Cases = ::testing::Types<
    Case<PthreadsBackend, false>, Case<StdThreadBackend, false>,
    Case<NativeBackend, false, 0>, Case<NativeBackend, false, 1>, Case<NativeBackend, false, 2>,
    Case<BoostFiberBackend, false, 0>, Case<BoostFiberBackend, false, 1>,
    Case<NativeBackend, true, 0>, Case<NativeBackend, true, 1>, Case<NativeBackend, true, 2>,
    Case<BoostFiberBackend, true, 0>, Case<BoostFiberBackend, true, 1>>;

class CaseNames {
  public:
    template <class C>
    static std::string GetName(int) {
        return C::name();
    }
};

template <class C>
class Channels : public ::testing::Test {
  protected:
    void SetUp() override {
        // Boost.Fiber under the sanitizers: its context switches and spin locks (an
        // uninstrumented library) are invisible to TSan (false races; tests/boostfiber is
        // no-tsan for the same reason), and under ASan a throw on a fiber stack whose memory
        // an earlier run's fiber left with stale redzone poison (Boost's stack pool, not
        // ASan-aware) is reported as a stack-buffer-overflow in __asan_handle_no_return.
        if (coopbench::test::sanitized && std::is_same_v<typename C::B, BoostFiberBackend>)
            GTEST_SKIP() << "Boost.Fiber under a sanitizer: false positives";
    }
    // inside — run `body` as a thread of the case's runtime.
    template <class F>
    static void inside(F&& body) {
        typename C::B::Runtime rt(C::options());
        rt.run(std::forward<F>(body));
    }
};
TYPED_TEST_SUITE(Channels, Cases, CaseNames);

constexpr std::int64_t kPerSender = coopbench::test::sanitized ? 1500 : 12000;

// settle — lets other threads run for a while (yields; OS threads also sleep a little), so
// that those about to block have most likely blocked. Correctness never depends on it.
template <class B>
void settle() {
    for (int i = 0; i < 200; ++i) B::yield();
    if constexpr (is_preemptive<B>()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

}  // namespace

TYPED_TEST(Channels, DeliversEveryValueExactlyOnceInFifoOrderPerSender) {
    using B = typename TypeParam::B;
    using Chan = typename TypeParam::template Chan<std::int64_t>;
    const std::size_t senders = 5, receivers = 3;  // unequal on purpose
    const std::int64_t total = kPerSender * static_cast<std::int64_t>(senders);
    std::atomic<std::int64_t> moved{0};
    Watchdog dog("channel stress", 60, [&] { return std::to_string(moved.load()) + " values received"; });
    for (std::size_t cap : {0u, 1u, 7u}) {
        moved = 0;
        std::unique_ptr<std::atomic<int>[]> seen(new std::atomic<int>[total]());
        std::atomic<int> out_of_order{0};
        this->inside([&] {
            Chan ch(cap);
            std::vector<typename B::Thread> rs, ss;
            for (std::size_t r = 0; r < receivers; ++r)
                rs.push_back(B::spawn([&] {
                    std::vector<std::int64_t> last(senders, -1);  // per sender: the last index seen
                    while (std::optional<std::int64_t> v = ch.recv()) {
                        const auto s = static_cast<std::size_t>(*v / kPerSender);
                        const std::int64_t i = *v % kPerSender;
                        if (i <= last[s]) out_of_order.fetch_add(1, std::memory_order_relaxed);
                        last[s] = i;
                        seen[*v].fetch_add(1, std::memory_order_relaxed);
                        moved.fetch_add(1, std::memory_order_relaxed);
                    }
                }));
            for (std::size_t s = 0; s < senders; ++s)
                ss.push_back(B::spawn([&, s] {
                    for (std::int64_t i = 0; i < kPerSender; ++i) ch.send(static_cast<std::int64_t>(s) * kPerSender + i);
                }));
            for (auto& t : ss) t.join();
            ch.close();  // the receivers drain what is buffered, then get nullopt
            for (auto& t : rs) t.join();
        });
        EXPECT_EQ(out_of_order.load(), 0) << "capacity " << cap;
        for (std::int64_t v = 0; v < total; ++v) ASSERT_EQ(seen[v].load(), 1) << "value " << v << ", capacity " << cap;
    }
}

TYPED_TEST(Channels, CloseWakesEveryBlockedSender) {
    using B = typename TypeParam::B;
    using Chan = typename TypeParam::template Chan<int>;
    Watchdog dog("close wakes senders");
    for (std::size_t cap : {0u, 1u, 7u}) {
        const int n = 6;
        std::atomic<int> threw{0}, started{0};
        std::vector<int> drained;
        this->inside([&] {
            Chan ch(cap);
            for (std::size_t i = 0; i < cap; ++i) ch.send(static_cast<int>(i));  // fill: the senders below block
            std::vector<typename B::Thread> ss;
            for (int s = 0; s < n; ++s)
                ss.push_back(B::spawn([&, s] {
                    started.fetch_add(1);
                    try {
                        ch.send(100 + s);
                    } catch (const ChannelClosed&) {
                        threw.fetch_add(1);
                    }
                }));
            while (started.load() < n) B::yield();
            settle<B>();
            ch.close();
            for (auto& t : ss) t.join();
            while (std::optional<int> v = ch.recv()) drained.push_back(*v);
        });
        EXPECT_EQ(threw.load(), n) << "capacity " << cap;
        ASSERT_EQ(drained.size(), cap) << "capacity " << cap;
        for (std::size_t i = 0; i < cap; ++i) EXPECT_EQ(drained[i], static_cast<int>(i));
    }
}

TYPED_TEST(Channels, CloseWakesEveryBlockedReceiverAfterTheBufferDrains) {
    using B = typename TypeParam::B;
    using Chan = typename TypeParam::template Chan<int>;
    Watchdog dog("close wakes receivers");
    for (std::size_t cap : {0u, 1u, 7u}) {
        const int n = 6;
        std::atomic<int> closed_seen{0}, values{0}, started{0};
        this->inside([&] {
            Chan ch(cap);
            std::vector<typename B::Thread> rs;
            for (int r = 0; r < n; ++r)
                rs.push_back(B::spawn([&] {
                    started.fetch_add(1);
                    while (ch.recv()) values.fetch_add(1);
                    closed_seen.fetch_add(1);
                }));
            while (started.load() < n) B::yield();
            settle<B>();
            ch.close();
            for (auto& t : rs) t.join();
        });
        EXPECT_EQ(closed_seen.load(), n) << "capacity " << cap;
        EXPECT_EQ(values.load(), 0) << "capacity " << cap;
    }
}

TYPED_TEST(Channels, RecvDrainsABufferedClosedChannelThenReportsClosed) {
    using Chan = typename TypeParam::template Chan<int>;
    Watchdog dog("drain after close");
    std::vector<int> got;
    bool again_closed = false;
    this->inside([&] {
        Chan ch(7);
        for (int i = 0; i < 5; ++i) ch.send(i);
        ch.close();
        while (std::optional<int> v = ch.recv()) got.push_back(*v);
        again_closed = !ch.recv().has_value();
    });
    EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(again_closed);
}

TYPED_TEST(Channels, SendAfterCloseAndSecondCloseThrow) {
    using Chan = typename TypeParam::template Chan<int>;
    Watchdog dog("misuse throws");
    for (std::size_t cap : {0u, 1u, 7u}) {
        bool send_threw = false, close_threw = false;
        this->inside([&] {
            Chan ch(cap);
            ch.close();
            try {
                ch.send(1);
            } catch (const ChannelClosed&) {
                send_threw = true;
            }
            try {
                ch.close();
            } catch (const ChannelClosed&) {
                close_threw = true;
            }
        });
        EXPECT_TRUE(send_threw) << "capacity " << cap;
        EXPECT_TRUE(close_threw) << "capacity " << cap;
    }
}

TYPED_TEST(Channels, UnbufferedSendReturnsOnlyAfterAReceiverTookTheValue) {
    using B = typename TypeParam::B;
    using Chan = typename TypeParam::template Chan<int>;
    Watchdog dog("rendezvous");
    for (int round = 0; round < 20; ++round) {
        std::atomic<bool> sent{false};
        bool early = true;
        std::optional<int> got;
        this->inside([&] {
            Chan ch(0);
            auto sender = B::spawn([&] {
                ch.send(42);
                sent.store(true);
            });
            settle<B>();
            early = sent.load();  // no receiver yet: the send cannot have returned
            got = ch.recv();
            sender.join();
        });
        EXPECT_FALSE(early);
        EXPECT_EQ(got, std::optional<int>(42));
    }
}
