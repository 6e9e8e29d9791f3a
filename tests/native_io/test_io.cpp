// test_io.cpp — coop's I/O (coop/io.hpp, coop/net.hpp; the poller in coop/src/io.cpp): each
// protocol step of the slot state machine, the poll token and the eventfd hand-off has a
// directed test here that fails (a hang caught by a bounded wait or the watchdog, or a wrong
// result) when that step's line is removed; the header comment of each test names its line.
// Linked with coop_hooked (config.hpp's COOP_HOOK points) and the private headers.
// No test asserts on time: the bounds below are seconds against microseconds of work.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "coop/coop.hpp"
#include "coop/io.hpp"
#include "coop/net.hpp"
#include "coop/src/io_poller.hpp"
#include "coop/src/runtime_internal.hpp"
#include "tests/native/support.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace cio = coop::internal::io;

coop::Options opts(unsigned p, coop::Scheduling s) {
    coop::Options o;
    o.processors = p;
    o.scheduling = s;
    return o;
}

// A non-blocking Unix socketpair.
struct Pair {
    int a = -1, b = -1;
    Pair() {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0) {
            a = sv[0];
            b = sv[1];
        }
    }
    ~Pair() {
        if (a >= 0) coop::io::close(a);
        if (b >= 0) coop::io::close(b);
    }
};

// wait_until — polls `cond` (yielding) for at most `limit`; its last value.
template <class F>
bool wait_until(F cond, std::chrono::milliseconds limit = 5000ms) {
    const auto end = Clock::now() + limit;
    while (!cond()) {
        if (Clock::now() > end) return cond();
        if (coop::in_activity()) coop::yield();
        else std::this_thread::yield();
    }
    return true;
}

// parked_on — whether an activity is parked (committed) on fd's slot `mode`.
bool parked_on(int fd, int mode) { return cio::descriptor(fd)->slot[mode].load() > cio::kWait; }

class Io : public ::testing::TestWithParam<coop::Scheduling> {};

// A TCP echo round trip over IPv4 and IPv6, P=1 and P=2: the API works end to end.
TEST_P(Io, EchoRoundTripIPv4AndIPv6) {
    coop_test::Watchdog dog("Io.EchoRoundTrip", 60);
    for (unsigned p : {1u, 2u}) {
        for (bool v6 : {false, true}) {
            coop::Runtime rt(opts(p, GetParam()));
            long echoed = 0;
            rt.run([&] {
                std::error_code ec;
                auto l = coop::net::Listener::listen(
                    v6 ? coop::net::Endpoint::loopback_v6(0) : coop::net::Endpoint::loopback_v4(0), ec);
                ASSERT_FALSE(ec) << ec.message();
                const auto at = l.local_endpoint();
                coop::Thread server = coop::spawn([&] {
                    std::error_code e;
                    coop::net::Stream s = l.accept(e);
                    ASSERT_FALSE(e) << e.message();
                    char buf[512];
                    while (std::size_t n = s.read(buf, sizeof buf, e)) s.write_all(buf, n, e);
                });
                coop::net::Stream c = coop::net::connect(at, ec);
                ASSERT_FALSE(ec) << ec.message() << " " << at.to_string();
                char msg[512], back[512];
                for (int i = 0; i < 200; ++i) {
                    std::memset(msg, i, sizeof msg);
                    ASSERT_EQ(c.write_all(msg, sizeof msg, ec), sizeof msg);
                    ASSERT_EQ(c.read_exact(back, sizeof back, ec), sizeof back) << ec.message();
                    ASSERT_EQ(std::memcmp(msg, back, sizeof msg), 0);
                    ++echoed;
                }
                c.shutdown();
                server.join();
            });
            EXPECT_EQ(echoed, 200) << "P=" << p << " v6=" << v6;
        }
    }
}

// Stress: many connections at once, each a client activity doing round trips with its own
// server activity, at P=2: every byte comes back (nothing lost, nothing duplicated, no
// activity left parked: the run ends).
TEST_P(Io, ManyConnectionsEchoEveryByte) {
    coop_test::Watchdog dog("Io.ManyConnectionsEchoEveryByte", 120);
    const int kConns = static_cast<int>(coop_test::scaled(200, 4));
    const int kRounds = 50;
    coop::Runtime rt(opts(2, GetParam()));
    std::atomic<long> ok_rounds{0}, bad{0};
    rt.run([&] {
        std::error_code ec;
        auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(0), ec);
        ASSERT_FALSE(ec);
        const auto at = l.local_endpoint();
        coop::Thread acceptor = coop::spawn([&] {
            std::vector<coop::Thread> servers;
            for (int i = 0; i < kConns; ++i) {
                std::error_code e;
                coop::net::Stream s = l.accept(e);
                if (e) {
                    ++bad;
                    continue;
                }
                servers.push_back(coop::spawn([s = std::move(s)]() mutable {
                    char buf[256];
                    std::error_code e2;
                    while (std::size_t n = s.read(buf, sizeof buf, e2)) s.write_all(buf, n, e2);
                }));
            }
        });
        std::vector<coop::Thread> clients;
        for (int i = 0; i < kConns; ++i)
            clients.push_back(coop::spawn([&, i] {
                std::error_code e;
                coop::net::Stream c = coop::net::connect(at, e);
                if (e) {
                    ++bad;
                    return;
                }
                char msg[100], back[100];
                for (int r = 0; r < kRounds; ++r) {
                    std::memset(msg, (i + r) & 0xff, sizeof msg);
                    if (c.write_all(msg, sizeof msg, e) != sizeof msg || c.read_exact(back, sizeof back, e) != sizeof back ||
                        std::memcmp(msg, back, sizeof msg) != 0) {
                        ++bad;
                        return;
                    }
                    ++ok_rounds;
                }
            }));
        for (auto& t : clients) t.join();  // each client's Stream closed: its server sees EOF
        acceptor.join();
    });
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(ok_rounds.load(), static_cast<long>(kConns) * kRounds);
}

// Data arrives between the waiter's EAGAIN and its park's commit: the hook holds the waiter
// in its finalizer (context saved, before the CAS Wait -> activity) while the peer writes and
// a poll delivers the event (the slot goes Wait -> Ready, nobody to wake). Guards
// fin_io_park's "if the CAS fails, awakened(prev)": without it the reader is lost (the
// watchdog fires).
std::atomic<int> g_hold_fd{-1}, g_hold_peer{-1};
std::atomic<bool> g_held{false};
void hold_before_commit() {
    const int fd = g_hold_fd.exchange(-1);
    if (fd < 0) return;
    const char x = 'x';
    EXPECT_EQ(::write(g_hold_peer.load(), &x, 1), 1);
    const auto end = Clock::now() + 5s;
    auto& slot = cio::descriptor(fd)->slot[cio::kRead];
    while (slot.load() != cio::kReady && Clock::now() < end) {
        // Deliver the event ourselves if nobody holds the token (else its holder does).
        cio::active_poller()->poll_now(coop::internal::this_processor()->index);
        std::this_thread::yield();
    }
    g_held = slot.load() == cio::kReady;
}

TEST_P(Io, DataBetweenEagainAndTheParkIsNotLost) {
    // 20 s: without the commit's failure path the reader is never run again (a hang), and a
    // bound of a minute made that a kill only after the mutant runner's 60 s; a pass takes well
    // under a second of the window's 5 s, even under TSan.
    coop_test::Watchdog dog("Io.DataBetweenEagainAndTheParkIsNotLost", 20);
    for (unsigned p : {1u, 2u}) {
        Pair pr;
        g_held = false;
        coop::test_hooks::io_park_before_commit = &hold_before_commit;
        {
            coop::Runtime rt(opts(p, GetParam()));
            rt.run([&] {
                g_hold_peer = pr.b;
                g_hold_fd = pr.a;
                char c = 0;
                std::error_code ec;
                const std::size_t n = coop::io::read(pr.a, &c, 1, ec);
                EXPECT_FALSE(ec) << ec.message();
                EXPECT_EQ(n, 1u);
                EXPECT_EQ(c, 'x');
            });
        }
        coop::test_hooks::io_park_before_commit = nullptr;
        EXPECT_TRUE(g_held) << "the event did not reach the slot inside the window (P=" << p << ")";
    }
}

// close() while a reader is parked wakes it with operation_canceled. Guards unregister's
// unblock of the slots: without it the reader sleeps on until its 10 s deadline, long after
// the closer stopped waiting for it (5 s).
TEST_P(Io, CloseWhileParkedWakesWithAnError) {
    coop_test::Watchdog dog("Io.CloseWhileParked", 60);
    coop::Runtime rt(opts(2, GetParam()));
    std::error_code got;
    bool woke_at_close = false;
    rt.run([&] {
        Pair pr;
        const int fd = pr.a;
        std::atomic<bool> done{false};
        coop::Thread reader = coop::spawn([&] {
            char c;
            coop::io::read(fd, &c, 1, got, coop::io::after(10s));
            done = true;
        });
        ASSERT_TRUE(wait_until([&] { return parked_on(fd, cio::kRead); })) << "the reader never parked";
        coop::io::close(fd);
        pr.a = -1;
        woke_at_close = wait_until([&] { return done.load(); }, 5000ms);
        reader.join();
    });
    EXPECT_TRUE(woke_at_close) << "close did not wake the parked reader";
    EXPECT_EQ(got, std::errc::operation_canceled) << got.message();
}

// A close that comes after the waiter read the fd's generation and before its CAS to Wait
// finds the slot Empty and wakes nobody: the waiter must see the new generation after its
// CAS (the Dekker pair with close). The hook closes the fd in that window. Guards wait()'s
// re-check of seq after the CAS: without it the waiter parks and sleeps to its 3 s deadline
// (timed_out instead of operation_canceled).
std::atomic<int> g_close_in_window{-1};
TEST_P(Io, ACloseBeforeTheClaimIsSeenByTheWaiter) {
    coop_test::Watchdog dog("Io.ACloseBeforeTheClaimIsSeenByTheWaiter", 60);
    std::error_code got;
    coop::test_hooks::io_wait_before_claim = [](int fd) {
        int expected = fd;
        if (g_close_in_window.compare_exchange_strong(expected, -1)) coop::io::close(fd);
    };
    {
        coop::Runtime rt(opts(2, GetParam()));
        rt.run([&] {
            int sv[2];
            ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
            g_close_in_window = sv[0];
            got = coop::io::wait_readable(sv[0], coop::io::after(3s));
            ::close(sv[1]);
        });
    }
    coop::test_hooks::io_wait_before_claim = nullptr;
    EXPECT_EQ(g_close_in_window.load(), -1) << "the hook did not run";
    EXPECT_EQ(got, std::errc::operation_canceled) << got.message();
}

// A deadline that passes while the reader is parked wakes it with timed_out; a reset
// deadline then lets the next read wait for data. Guards fire_io_timer's unblock: without it
// the parked reader is not woken by its deadline, and the writer (which writes only after
// 3 s if the first read has not returned) makes it return data instead of timed_out.
TEST_P(Io, DeadlineFiresWhileParkedThenReset) {
    coop_test::Watchdog dog("Io.DeadlineFiresWhileParkedThenReset", 60);
    coop::Runtime rt(opts(2, GetParam()));
    std::error_code first, second;
    std::size_t n2 = 0;
    bool was_parked = false;
    rt.run([&] {
        std::error_code ec;
        auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(0), ec);
        ASSERT_FALSE(ec);
        coop::net::Stream c = coop::net::connect(l.local_endpoint(), ec);
        ASSERT_FALSE(ec);
        coop::net::Stream s = l.accept(ec);
        ASSERT_FALSE(ec);
        std::atomic<bool> first_done{false};
        coop::Thread writer = coop::spawn([&] {
            // Watch the reader park, then wait for its first read to end (3 s at most).
            was_parked = wait_until([&] { return parked_on(s.native_handle(), cio::kRead) || first_done; });
            wait_until([&] { return first_done.load(); }, 3000ms);
            std::error_code e;
            c.write_all("hello", 5, e);
        });
        char buf[8];
        s.set_read_deadline(coop::io::after(100ms));
        s.read(buf, sizeof buf, first);
        first_done = true;
        s.set_read_deadline(coop::io::kNoDeadline);  // the reset
        n2 = s.read(buf, sizeof buf, second);
        writer.join();
    });
    EXPECT_TRUE(was_parked);
    EXPECT_EQ(first, std::errc::timed_out) << first.message();
    EXPECT_FALSE(second) << second.message();
    EXPECT_EQ(n2, 5u);
}

// An event of a closed fd, already taken from epoll by a poll, must not touch the
// descriptor of the fd that reuses its number. P=1 (nobody else polls): the activity polls
// itself; the hook, with the stale event in hand, closes the fd and registers a new one
// under the same number. Guards dispatch's seq check: without it the new fd's read slot
// turns Ready and its wait_readable returns although it has no data.
std::atomic<int> g_stale_fd{-1}, g_reused_fd{-1};
TEST_P(Io, AReusedFdIgnoresTheStaleEvent) {
    coop_test::Watchdog dog("Io.AReusedFdIgnoresTheStaleEvent", 60);
    coop::Runtime rt(opts(1, GetParam()));
    bool reused = false, slot_ready = true;
    std::error_code wait_result;
    rt.run([&] {
        int sv[2];
        int peer2 = -1;
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ASSERT_FALSE(cio::register_fd(sv[0]));
        // Drain the registration's initial events (writable) so only the edge below is left.
        cio::active_poller()->poll_now(0);
        const char x = 'x';
        ASSERT_EQ(::write(sv[1], &x, 1), 1);  // sv[0] readable: an event tagged (sv[0], seq)
        // The hook: close sv[0], and make a socketpair whose first end gets its number; its
        // peer stays open (no data, no EOF: not readable).
        g_stale_fd = sv[0];
        coop::test_hooks::io_poll_before_events = [] {
            const int fd = g_stale_fd.exchange(-1);
            if (fd < 0) return;
            coop::io::close(fd);
            int p2[2];
            if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, p2) != 0) return;
            g_reused_fd = p2[0];
            g_stale_fd = -2 - p2[1];  // keep the peer's number (closed after the test)
            cio::register_fd(p2[0]);
        };
        cio::active_poller()->poll_now(0);
        coop::test_hooks::io_poll_before_events = nullptr;
        const int nfd = g_reused_fd.load();
        reused = nfd == sv[0];
        peer2 = -2 - g_stale_fd.load();
        if (reused) {
            slot_ready = cio::descriptor(nfd)->slot[cio::kRead].load() == cio::kReady;
            wait_result = coop::io::wait_readable(nfd, coop::io::after(50ms));
        }
        coop::io::close(nfd);
        if (peer2 >= 0) ::close(peer2);
        ::close(sv[1]);
    });
    ASSERT_TRUE(reused) << "the fd number was not reused (another thread opened one?)";
    EXPECT_FALSE(slot_ready) << "the stale event marked the new fd readable";
    EXPECT_EQ(wait_result, std::errc::timed_out) << wait_result.message();
}

// An activity woken by the poller runs on another processor while the poller is held right
// after handing it out (the hook). Guards the hand-out's wake-up of a parked processor
// (Scheduler::awakened's notify from Poller::dispatch): without it nobody takes the activity
// while its poller is held, and the hold times out.
std::atomic<int> g_dispatcher{-1};
std::atomic<bool> g_reader_ran{false}, g_arm_dispatch{false};
void hold_after_dispatch(unsigned woken) {
    if (woken == 0 || !g_arm_dispatch.exchange(false)) return;
    g_dispatcher = static_cast<int>(coop::internal::this_processor()->index);
    const auto end = Clock::now() + 5s;
    while (!g_reader_ran.load() && Clock::now() < end) std::this_thread::yield();
}

TEST_P(Io, AWokenActivityRunsOnAnotherProcessor) {
    coop_test::Watchdog dog("Io.AWokenActivityRunsOnAnotherProcessor", 60);
    g_dispatcher = -1;
    g_reader_ran = false;
    int ran_on = -1;
    coop::test_hooks::io_after_dispatch = &hold_after_dispatch;
    {
        coop::Runtime rt(opts(2, GetParam()));
        rt.run([&] {
            Pair pr;
            coop::Thread reader = coop::spawn([&] {
                char c;
                std::error_code ec;
                coop::io::read(pr.a, &c, 1, ec);
                ran_on = static_cast<int>(coop::internal::this_processor()->index);
                g_reader_ran = true;
            });
            ASSERT_TRUE(wait_until([&] { return parked_on(pr.a, cio::kRead); }));
            g_arm_dispatch = true;
            // Written from a thread outside the runtime once both processors are parked (one
            // as the poller, one on its futex) while this activity waits in join: the poller
            // hands the reader out, and only a wake-up brings the other processor to take it.
            const auto* parking = &coop::internal::this_processor()->runtime->scheduler->parking();
            std::thread writer([fd = pr.b, parking] {
                wait_until([&] { return parking->parked() == 2; });
                const char x = 'x';
                EXPECT_EQ(::write(fd, &x, 1), 1);
            });
            reader.join();
            writer.join();
        });
    }
    coop::test_hooks::io_after_dispatch = nullptr;
    ASSERT_GE(g_dispatcher.load(), 0) << "no poller handed the reader out";
    EXPECT_NE(ran_on, g_dispatcher.load()) << "the reader ran only when its poller was let go";
}

// Every processor busy in yield loops (nobody idle, nobody in epoll_wait): the reply still
// arrives, through a busy processor's non-blocking poll. Guards poll_busy in yield(): without
// it the reply waits until the spinners give up (10 s) and the test fails.
TEST_P(Io, ReplyArrivesWhileEveryProcessorYields) {
    coop_test::Watchdog dog("Io.ReplyArrivesWhileEveryProcessorYields", 90);
    const unsigned p = 2;
    coop::Runtime rt(opts(p, GetParam()));
    std::atomic<bool> done{false}, gave_up{false};
    rt.run([&] {
        Pair pr;
        std::thread peer([fd = pr.b] {  // echoes one byte (blocking, outside the runtime)
            char c;
            std::error_code e;
            if (coop::io::read(fd, &c, 1, e) == 1) coop::io::write(fd, &c, 1, e);
        });
        std::vector<coop::Thread> spinners;
        for (unsigned i = 0; i < p; ++i)
            spinners.push_back(coop::spawn([&] {
                const auto end = Clock::now() + 10s;
                while (!done.load()) {
                    if (Clock::now() > end) {
                        gave_up = true;
                        break;
                    }
                    coop::yield();
                }
            }));
        coop::yield();
        char c = 'q', back = 0;
        std::error_code ec;
        coop::io::write(pr.a, &c, 1, ec);
        coop::io::read(pr.a, &back, 1, ec);
        EXPECT_EQ(back, 'q');
        done = true;
        for (auto& t : spinners) t.join();
        peer.join();
    });
    EXPECT_FALSE(gave_up) << "the reply came only after the spinners stopped";
}

// A timer armed earlier than the poller's timeout (none) while the poller sleeps in
// epoll_wait, and the other processor busy without yielding: the waker must poke the
// eventfd. Guards park.hpp wake()'s poller_poke for a Polling word: without it the sleeper
// oversleeps until the busy activity gives up (2 s).
TEST_P(Io, AnEarlierTimerWakesThePoller) {
    coop_test::Watchdog dog("Io.AnEarlierTimerWakesThePoller", 60);
    coop::Runtime rt(opts(2, GetParam()));
    bool overslept = false, polling = false;
    rt.run([&] {
        Pair pr;
        ASSERT_FALSE(cio::register_fd(pr.a));  // the poller exists from now on
        auto& parking = coop::internal::this_processor()->runtime->scheduler->parking();
        // Let the other processor park as the poller (token held, one processor parked). One that
        // parked on its futex before the poller existed is woken by the registration (io.cpp
        // poller(); AProcessorParkedBeforeThePollerExistsTakesTheToken guards it).
        polling = wait_until([&] { return cio::active_poller()->token_held() && parking.parked() == 1; }, 30000ms);
        std::atomic<bool> woke{false};
        std::atomic<bool> started{false};
        coop::Thread b = coop::spawn([&] {
            started = true;
            const auto end = Clock::now() + 2s;
            while (!woke.load()) {  // no yield: this processor polls nothing
                if (Clock::now() > end) {
                    overslept = true;
                    break;
                }
            }
        });
        coop::sleep_for(20ms);
        woke = true;
        b.join();
    });
    EXPECT_TRUE(polling) << "no processor parked as the poller";
    EXPECT_FALSE(overslept) << "the poller slept through an earlier timer";
}

// A processor that parked on its futex before the poller existed (the test's process has no
// poller yet: ctest runs each test in a process of its own) takes the poll token once the
// first fd registers, with no other wake-up: the maker of the poller wakes a parked processor
// (io.cpp poller()'s notify). Without that line the other processor sleeps on, nobody sleeps
// in epoll_wait, and an idle runtime's events wait for a busy processor's poll.
TEST_P(Io, AProcessorParkedBeforeThePollerExistsTakesTheToken) {
    if (cio::active_poller() != nullptr)
        GTEST_SKIP() << "needs a process with no poller yet (ctest runs each test alone; run it alone)";
    coop_test::Watchdog dog("Io.AProcessorParkedBeforeThePollerExistsTakesTheToken", 60);
    coop::Runtime rt(opts(2, GetParam()));
    bool parked_first = false, took = false;
    rt.run([&] {
        auto& parking = coop::internal::this_processor()->runtime->scheduler->parking();
        // The other processor parks: on its futex, as there is no poller to take a token of.
        parked_first = wait_until([&] { return parking.parked() == 1; }, 30000ms);
        ASSERT_EQ(cio::active_poller(), nullptr);
        Pair pr;
        ASSERT_FALSE(cio::register_fd(pr.a));  // makes the poller
        // This activity only yields (a yield wakes nobody): the parked processor has to be
        // woken by the registration to come round and park as the poller.
        took = wait_until([&] { return cio::active_poller()->token_held() && parking.parked() == 1; }, 10000ms);
    });
    EXPECT_TRUE(parked_first) << "the other processor never parked";
    EXPECT_TRUE(took) << "the processor parked before the poller existed never took the poll token";
}

// Every processor busy in activities that yield only every ~2 ms, 24 times each once the reply
// is in the socket (fewer than the 64 yields of the tick rule, kIoPollMask; before, they wait for
// it without yielding), while its reader is parked: a busy processor's time rule (busy_poll_due:
// nobody has polled for 1 ms, looked at every 8 quick yields, every slow one) hands it out. Guards busy_poll_due in
// yield and suspend: without it nobody polls until the spinners have ended, and they count that
// they gave up. No time is asserted: the spinners' bound is a count of yields.
TEST_P(Io, ReplyArrivesWhileEveryProcessorYieldsRarely) {
    coop_test::Watchdog dog("Io.ReplyArrivesWhileEveryProcessorYieldsRarely", 90);
    const unsigned p = 2;
    constexpr int kYields = 24;
    static_assert(kYields + 8 < static_cast<int>(cio::kIoPollMask), "below the tick rule");
    coop::Runtime rt(opts(p, GetParam()));
    std::atomic<bool> done{false}, written{false};
    std::atomic<int> gave_up{0}, no_reply{0};
    bool echoed = false;
    rt.run([&] {
        Pair pr;
        std::vector<coop::Thread> spinners;
        for (unsigned i = 0; i < p; ++i)
            spinners.push_back(coop::spawn([&] {
                // Busy until the reply is written, without a yield (30 s at most).
                const auto end = Clock::now() + 30s;
                while (!written.load() && !done.load())
                    if (Clock::now() > end) {
                        ++no_reply;
                        break;
                    }
                for (int k = 0; k < kYields && !done.load(); ++k) {
                    const auto until = Clock::now() + 2ms;
                    while (Clock::now() < until && !done.load()) {
                    }
                    coop::yield();
                }
                if (!done.load()) ++gave_up;
            }));
        // The peer (outside the runtime) answers once the reader is parked, while both
        // processors run spinners.
        std::thread peer([&, fd = pr.b, rd = pr.a] {
            char c;
            std::error_code e;
            if (coop::io::read(fd, &c, 1, e) != 1) return;
            wait_until([&] { return parked_on(rd, cio::kRead); }, 30000ms);
            coop::io::write(fd, &c, 1, e);
            written = true;
        });
        char c = 'q', back = 0;
        std::error_code ec;
        coop::io::write(pr.a, &c, 1, ec);
        coop::io::read(pr.a, &back, 1, ec);
        echoed = back == 'q';
        done = true;
        for (auto& t : spinners) t.join();
        peer.join();
    });
    EXPECT_TRUE(echoed);
    EXPECT_EQ(no_reply.load(), 0) << "the peer never wrote the reply";
    EXPECT_EQ(gave_up.load(), 0) << "the reply came only after the rarely yielding spinners ended";
}

// One processor, busy in an activity that computes 3 ms between yields (a hog), while the
// reader waits for a reply the peer writes once it is parked, eight rounds after a first that
// is not counted (the processor's ticks turn slow there, IoClock): each reply is handed out at
// the hog's first or second yield after it is in the socket. Guards IoClock (io_poller.hpp):
// with the clock looked at every 8th tick only, the poll came at the next multiple of 8 ticks,
// 1 to 8 slices later, and eight rounds all within 2 yields happen by chance about once in
// 65,000 runs. No time is asserted: the slices' length is a lower bound (a preempted hog's slice is
// longer, and a long slice only makes the per-tick clock read more certain); the count is of yields.
TEST_P(Io, AReplyWaitsForAtMostTwoSlicesOfAHogThatYieldsEvery3Ms) {
    coop_test::Watchdog dog("Io.AReplyWaitsForAtMostTwoSlicesOfAHogThatYieldsEvery3Ms", 120);
    constexpr int kRounds = 9;
    coop::Runtime rt(opts(1, GetParam()));
    std::atomic<bool> done{false}, written{false};
    std::atomic<int> after{0};
    std::vector<int> seen;
    rt.run([&] {
        Pair pr;
        coop::Thread hog = coop::spawn([&] {
            while (!done.load()) {
                const auto until = Clock::now() + 3ms;
                while (Clock::now() < until && !done.load()) {
                }
                if (written.load()) ++after;  // this yield comes after the reply was written
                coop::yield();
            }
        });
        std::thread peer([&, fd = pr.b, rd = pr.a] {  // blocking, outside the runtime
            for (int r = 0; r < kRounds; ++r) {
                char c;
                std::error_code e;
                if (coop::io::read(fd, &c, 1, e) != 1) return;
                if (!wait_until([&] { return parked_on(rd, cio::kRead); }, 30000ms)) return;
                coop::io::write(fd, &c, 1, e);
                written = true;
            }
        });
        for (int r = 0; r < kRounds; ++r) {
            written = false;
            after = 0;
            char c = static_cast<char>('a' + r), back = 0;
            std::error_code ec;
            coop::io::write(pr.a, &c, 1, ec);
            coop::io::read(pr.a, &back, 1, ec);
            if (back != c) break;
            if (r > 0) seen.push_back(after.load());
        }
        done = true;
        hog.join();
        peer.join();
    });
    ASSERT_EQ(seen.size(), static_cast<std::size_t>(kRounds - 1)) << "a reply was lost or wrong";
    std::string all;
    for (int n : seen) all += std::to_string(n) + " ";
    EXPECT_LE(*std::max_element(seen.begin(), seen.end()), 2)
        << "hog yields between a reply's write and its reader's turn, per round: " << all;
}

// A timer earlier than the poller's timeout (a later I/O deadline) armed while it sleeps in
// epoll_wait, twice: the poller is poked, re-parks with the earlier timeout and fires it; then
// it sleeps again with the later one (the reset) and a second earlier timer is honoured too.
// P=1 and the timers pushed from a thread outside the runtime, which stands for a processor
// that arms a deadline and then stays busy: only the poller can fire them. Guards push_timer's
// notify and park.hpp wake()'s poke of a Polling word: without either, the poller sleeps to
// the reader's 60 s deadline and the bounded waits below fail.
std::atomic<int> g_fired{0};
void fire_flag(coop::internal::TimerEntry* e, bool expired) {
    if (expired) ++g_fired;
    delete e;
}
TEST_P(Io, AnEarlierTimerWakesThePollerSleepingWithALaterDeadline) {
    coop_test::Watchdog dog("Io.AnEarlierTimerWakesThePollerSleepingWithALaterDeadline", 120);
    g_fired = 0;
    coop::Runtime rt(opts(1, GetParam()));
    bool slept[2] = {false, false}, fired[2] = {false, false};
    std::error_code late;
    rt.run([&] {
        Pair pr;
        auto* state = coop::internal::this_processor()->runtime;
        auto& parking = state->scheduler->parking();
        coop::Thread reader = coop::spawn([&] {
            char c;
            coop::io::read(pr.a, &c, 1, late, coop::io::after(60s));  // the later deadline
        });
        std::thread armer([&] {
            for (int round = 0; round < 2; ++round) {
                // The only processor sleeps in epoll_wait (its timeout: the reader's deadline).
                slept[round] = wait_until(
                    [&] { return parked_on(pr.a, cio::kRead) && cio::active_poller()->token_held() && parking.parked() == 1; },
                    30000ms);
                auto* t = new coop::internal::TimerEntry;
                t->activity = nullptr;
                t->deadline_ns = coop::internal::now_ns() + 20'000'000;  // 20 ms: earlier
                t->fire = &fire_flag;
                coop::internal::push_timer(*state, t);
                fired[round] = wait_until([&] { return g_fired.load() > round; }, 10000ms);
            }
            const char x = 'x';  // lets the reader end
            EXPECT_EQ(::write(pr.b, &x, 1), 1);
        });
        reader.join();
        armer.join();
    });
    for (int r = 0; r < 2; ++r) {
        EXPECT_TRUE(slept[r]) << "round " << r << ": the processor never slept as the poller";
        EXPECT_TRUE(fired[r]) << "round " << r << ": the poller slept through an earlier timer";
    }
    EXPECT_FALSE(late) << late.message();
}

// A peer that resets the connection: a parked read gets ECONNRESET, writes get EPIPE or
// ECONNRESET, and no SIGPIPE ends the process (guards MSG_NOSIGNAL in io::write).
TEST_P(Io, PeerResetGivesAnErrorNotSigpipe) {
    coop_test::Watchdog dog("Io.PeerResetGivesAnErrorNotSigpipe", 60);
    coop::Runtime rt(opts(2, GetParam()));
    std::error_code rd, wr;
    rt.run([&] {
        std::error_code ec;
        auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(0), ec);
        coop::net::Stream c = coop::net::connect(l.local_endpoint(), ec);
        coop::net::Stream s = l.accept(ec);
        ASSERT_FALSE(ec);
        coop::Thread reader = coop::spawn([&] {
            char buf[16];
            s.read(buf, sizeof buf, rd);
        });
        ASSERT_TRUE(wait_until([&] { return parked_on(s.native_handle(), cio::kRead); }));
        linger lg{1, 0};  // close with RST
        setsockopt(c.native_handle(), SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        c.close();
        reader.join();
        std::vector<char> big(1 << 16, 'z');
        for (int i = 0; i < 100 && !wr; ++i) s.write_all(big.data(), big.size(), wr);
    });
    EXPECT_EQ(rd, std::errc::connection_reset) << rd.message();
    EXPECT_TRUE(wr == std::errc::broken_pipe || wr == std::errc::connection_reset) << wr.message();
}

// EMFILE at accept returns the error to the caller at once (no retry loop inside, no park).
TEST_P(Io, EmfileAtAcceptIsAnError) {
    coop_test::Watchdog dog("Io.EmfileAtAcceptIsAnError", 60);
    coop::Runtime rt(opts(1, GetParam()));
    std::error_code first, after;
    rt.run([&] {
        std::error_code ec;
        auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(0), ec);
        coop::net::Stream c = coop::net::connect(l.local_endpoint(), ec);
        ASSERT_FALSE(ec);
        rlimit old{};
        getrlimit(RLIMIT_NOFILE, &old);
        const int lowest = ::dup(0);  // the lowest free number: the limit makes it unusable
        ::close(lowest);
        rlimit low = old;
        low.rlim_cur = static_cast<rlim_t>(lowest);
        ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
        coop::net::Stream s = l.accept(ec);
        first = ec;
        setrlimit(RLIMIT_NOFILE, &old);
        s = l.accept(after);  // the connection is still queued
    });
    EXPECT_EQ(first, std::errc::too_many_files_open) << first.message();
    EXPECT_FALSE(after) << after.message();
}

// A refused connect is an error (ECONNREFUSED), not a hang.
TEST_P(Io, RefusedConnectIsAnError) {
    coop_test::Watchdog dog("Io.RefusedConnectIsAnError", 60);
    coop::Runtime rt(opts(2, GetParam()));
    std::error_code got;
    rt.run([&] {
        std::error_code ec;
        coop::net::Endpoint at;
        {
            auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(0), ec);
            at = l.local_endpoint();
        }  // closed: nothing listens there now
        coop::net::Stream c = coop::net::connect(at, got, coop::io::after(5s));
    });
    EXPECT_EQ(got, std::errc::connection_refused) << got.message();
}

// coop::io::blocking parks the caller while its function runs on a pool thread: on one
// processor another activity runs meanwhile (it could not if blocking ran inline).
TEST_P(Io, BlockingRunsOffTheProcessor) {
    coop_test::Watchdog dog("Io.BlockingRunsOffTheProcessor", 60);
    coop::Runtime rt(opts(1, GetParam()));
    long during = -1;
    int result = 0;
    rt.run([&] {
        std::atomic<bool> done{false};
        std::atomic<long> ticks{0};
        coop::Thread t = coop::spawn([&] {
            while (!done.load()) {
                ++ticks;
                coop::yield();
            }
        });
        coop::yield();
        ticks = 0;
        result = coop::io::blocking([&] {
            std::this_thread::sleep_for(50ms);
            return 42;
        });
        during = ticks.load();
        done = true;
        t.join();
    });
    EXPECT_EQ(result, 42);
    EXPECT_GT(during, 0) << "nothing ran while blocking() waited";
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, Io,
                         ::testing::Values(coop::Scheduling::global, coop::Scheduling::work_stealing,
                                           coop::Scheduling::parasail),
                         [](const auto& info) {
                             switch (info.param) {
                                 case coop::Scheduling::global: return std::string("global");
                                 case coop::Scheduling::work_stealing: return std::string("work_stealing");
                                 default: return std::string("parasail");
                             }
                         });

// Outside an activity the calls block the thread as plain POSIX calls do.
TEST(IoOutside, ReadBlocksThePlainThread) {
    coop_test::Watchdog dog("IoOutside.ReadBlocksThePlainThread", 60);
    Pair pr;
    std::thread w([fd = pr.b] {
        std::this_thread::sleep_for(20ms);
        const char x = 'k';
        EXPECT_EQ(::write(fd, &x, 1), 1);
    });
    char c = 0;
    std::error_code ec;
    EXPECT_EQ(coop::io::read(pr.a, &c, 1, ec), 1u);
    EXPECT_FALSE(ec);
    EXPECT_EQ(c, 'k');
    w.join();
    EXPECT_EQ(coop::io::read(pr.a, &c, 1, ec, coop::io::after(10ms)), 0u);
    EXPECT_EQ(ec, std::errc::timed_out);
}

}  // namespace
