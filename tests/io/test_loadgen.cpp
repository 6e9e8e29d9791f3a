// The load generator (harness/loadgen/): its histogram's error bound, and its verdict on
// servers that misbehave — each a thread in this test with a listening socket on 127.0.0.1 —
// which must fail the run with where it went wrong; and the open loop's latency, taken from
// the intended send time (a server that stalls once shows the stall in the tail, which a
// latency taken from the send time would hide: coordinated omission).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/loadgen/histogram.hpp"
#include "harness/loadgen/loadgen.hpp"
#include "harness/loadgen/protocol.hpp"
#include "tests/support/watchdog.hpp"

namespace {
using namespace coopbench::loadgen;

TEST(Histogram, PercentilesAreNeverBelowTheTruthAndAtMostOneIn128Above) {
    std::mt19937_64 rng(42);
    std::vector<std::uint64_t> all;
    Histogram h;
    for (int i = 0; i < 100000; ++i) {
        const std::uint64_t v = rng() % 50'000'000 + (i % 7 == 0 ? rng() % 100 : 0);
        all.push_back(v);
        h.record(v);
    }
    std::sort(all.begin(), all.end());
    for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
        const std::uint64_t truth = all[static_cast<std::size_t>(std::ceil(q * all.size())) - 1];
        const std::uint64_t got = h.percentile(q);
        EXPECT_GE(got, truth) << q;
        EXPECT_LE(static_cast<double>(got), static_cast<double>(truth) * (1 + Histogram::kRelativeError)) << q;
    }
    EXPECT_EQ(h.max(), all.back());
    EXPECT_EQ(h.min(), all.front());
}

TEST(Histogram, SmallValuesAreExact) {
    Histogram h;
    for (std::uint64_t v = 0; v < 128; ++v) h.record(v);
    EXPECT_EQ(h.percentile(0.5), 63u);
    EXPECT_EQ(h.percentile(1.0), 127u);
}

// Misbehaving — what a test server does wrong.
enum class Misbehaving {
    none, corrupt, close_early, extra_byte, reorder, stall_once, go_silent, rpc, stall_first,
    // echo-idle's idle connections (the first `idle` accepted: the load generator connects
    // them before the loaded ones, and one acceptor takes a backlog in order):
    close_idle,       // closes the second connection it accepts at once
    greet_idle,       // sends one byte on the second connection it accepts
    close_idle_late,  // shuts the first connection it accepted down when a message first comes
    slow_accept,      // waits 30 ms before each accept, and notes whether a byte was waiting
};

// TestServer — a thread per connection echoing messages of `size` bytes, misbehaving once.
class TestServer {
  public:
    // alloc_kib: memory each connection's thread allocates and touches as it starts (held
    // until the connection ends), so the server's RSS grows by a known amount per connection.
    TestServer(std::size_t size, Misbehaving how, std::size_t alloc_kib = 0)
        : size_(size), how_(how), alloc_kib_(alloc_kib) {
        lfd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
        listen(lfd_, 128);
        socklen_t len = sizeof a;
        getsockname(lfd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] {
            for (;;) {
                if (how_ == Misbehaving::slow_accept) std::this_thread::sleep_for(std::chrono::milliseconds(30));
                const int fd = accept(lfd_, nullptr, nullptr);
                if (fd < 0) return;
                const std::size_t k = accepted_.fetch_add(1, std::memory_order_relaxed);  // a count read after the run
                if (how_ == Misbehaving::slow_accept && k < early_.size()) {
                    char c;
                    // relaxed: read after the run, which this accept happened before
                    early_[k].store(recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 1, std::memory_order_relaxed);
                }
                if (k == 0) first_fd_.store(fd);
                if (k == 1 && how_ == Misbehaving::close_idle) {
                    close(fd);
                    continue;
                }
                if (k == 1 && how_ == Misbehaving::greet_idle) send(fd, "!", 1, MSG_NOSIGNAL);
                conns_.emplace_back([this, fd] { serve(fd); });
            }
        });
    }
    std::size_t accepted() const { return accepted_.load(std::memory_order_relaxed); }
    // early — slow_accept: how many of the first n connections had a byte waiting when accepted.
    std::size_t early(std::size_t n) const {
        std::size_t e = 0;
        for (std::size_t k = 0; k < n && k < early_.size(); ++k) e += early_[k].load(std::memory_order_relaxed);
        return e;
    }
    ~TestServer() {
        shutdown(lfd_, SHUT_RDWR);
        acceptor_.join();
        for (auto& t : conns_) t.join();
        close(lfd_);
    }
    int port() const { return port_; }

  private:
    void serve(int fd) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::vector<unsigned char> buf(size_), prev(size_);
        std::vector<unsigned char> held(alloc_kib_ * 1024);
        for (std::size_t i = 0; i < held.size(); i += 512) held[i] = static_cast<unsigned char>(i >> 9 | 1);  // every page touched
        for (int n = 0;; ++n) {
            std::size_t got = 0;
            while (got < size_) {
                const ssize_t r = recv(fd, buf.data() + got, size_ - got, 0);
                if (r <= 0) break;
                got += static_cast<std::size_t>(r);
            }
            if (got < size_) break;
            if (how_ == Misbehaving::close_idle_late && !late_done_.exchange(true)) shutdown(first_fd_.load(), SHUT_RDWR);
            if (how_ == Misbehaving::rpc) rpc_answer(buf.data());  // the rpc protocol's work, done right
            const bool now = n == 20 && !done_.exchange(true);
            std::size_t len = size_;
            if (now && how_ == Misbehaving::corrupt) buf[size_ / 2] ^= 1;
            if (now && how_ == Misbehaving::reorder) std::swap(buf[1], buf[2]);
            if (now && how_ == Misbehaving::close_early) len = size_ - 1;
            if (now && how_ == Misbehaving::stall_once) std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (n == 0 && how_ == Misbehaving::stall_first) std::this_thread::sleep_for(std::chrono::milliseconds(300));
            if (now && how_ == Misbehaving::go_silent) {
                while (recv(fd, buf.data(), size_, 0) > 0) {  // read on, never answer
                }
                break;
            }
            send(fd, buf.data(), len, MSG_NOSIGNAL);
            if (now && how_ == Misbehaving::extra_byte) send(fd, buf.data(), 1, MSG_NOSIGNAL);
            if (now && how_ == Misbehaving::close_early) break;
        }
        close(fd);
    }
    std::size_t size_;
    Misbehaving how_;
    std::size_t alloc_kib_ = 0;
    int lfd_ = -1, port_ = 0;
    std::atomic<bool> done_{false}, late_done_{false};
    std::atomic<int> first_fd_{-1};
    std::atomic<std::size_t> accepted_{0};
    std::array<std::atomic<bool>, 16> early_{};
    std::thread acceptor_;
    std::vector<std::thread> conns_;  // the acceptor's own
};

Spec quick(int port, Mode mode = Mode::closed) {
    Spec s;
    s.mode = mode;
    s.port = port;
    s.connections = 4;
    s.size = 64;
    s.warmup_s = 0.02;
    s.duration_s = 0.2;
    s.grace_s = 0.5;
    s.rate = 2000;
    return s;
}

TEST(Loadgen, ACorrectServerPassesWithEveryByteChecked) {
    coopbench::test::Watchdog dog("a correct echo", 30);
    TestServer srv(64, Misbehaving::none);
    for (Mode m : {Mode::closed, Mode::open}) {
        const Result r = run(quick(srv.port(), m));
        EXPECT_TRUE(r.ok) << r.check;
        EXPECT_GT(r.requests, 0u);
        EXPECT_EQ(r.bytes_checked % 64, 0u);
        EXPECT_GE(r.bytes_checked, r.requests * 64);
        EXPECT_EQ(r.latency.count(), r.requests);
    }
}

TEST(Loadgen, EveryWayOfGettingTheBytesWrongFailsTheRun) {
    coopbench::test::Watchdog dog("misbehaving servers", 60);
    const std::pair<Misbehaving, const char*> cases[] = {
        {Misbehaving::corrupt, "self-check failed: echoed byte 32 of connection"},
        {Misbehaving::reorder, "self-check failed: echoed byte 1 of connection"},
        {Misbehaving::close_early, "self-check failed: echoed bytes = 63 of 64, then the server closed"},
        {Misbehaving::extra_byte, "self-check failed: echoed byte"},  // the extra byte is read as the next echo's
        {Misbehaving::go_silent, "self-check failed: responses = 1 requests unanswered"},
    };
    for (auto& [how, want] : cases) {
        TestServer srv(64, how);
        const Result r = run(quick(srv.port()));
        EXPECT_FALSE(r.ok) << want;
        EXPECT_NE(r.check.find(want), std::string::npos) << r.check;
    }
}

TEST(Loadgen, OpenLoopLatencyIsTakenFromTheIntendedSendTime) {
    coopbench::test::Watchdog dog("a server that stalls once", 30);
    // One connection at 500 requests/s: a 200 ms stall delays the ~100 requests intended
    // during it, the first by ~200 ms; from the intended time, the top 1 % of ~500 requests
    // are all near 200 ms. (From the send time only one request would be slow.)
    TestServer srv(64, Misbehaving::stall_once);
    Spec s = quick(srv.port(), Mode::open);
    s.connections = 1;
    s.rate = 500;
    s.warmup_s = 0;
    s.duration_s = 1;
    s.grace_s = 2;
    const Result r = run(s);
    ASSERT_TRUE(r.ok) << r.check;
    EXPECT_GE(r.latency.percentile(0.99), 150'000'000u) << "p99 " << r.latency.percentile(0.99) << " ns";
    EXPECT_GE(r.latency.max(), 190'000'000u);
}

// A closed-loop window in which no request starts (the one connection waits 300 ms for its
// first answer, sent before a 100 ms window) stays open until one starts: the run measures it
// and is not failed for "measured requests = 0". Before, a server not scheduled for a whole
// tiny-plan window on a loaded machine failed the point (epoll and pthreads echo in the e2e
// sweep at a load average of 15). Its time includes the wait.
TEST(Loadgen, AClosedWindowWithNoRequestStartedWaitsForOne) {
    coopbench::test::Watchdog dog("a server whose first answer comes after the window", 30);
    TestServer srv(64, Misbehaving::stall_first);
    Spec s = quick(srv.port());
    s.connections = 1;
    s.warmup_s = 0;
    s.duration_s = 0.1;
    s.grace_s = 2;
    const Result r = run(s);
    ASSERT_TRUE(r.ok) << r.check;
    EXPECT_GE(r.requests, 1u);
    EXPECT_GE(r.seconds, 0.29) << "the window's time leaves out the wait for its first request";
}

// A server that answers nothing at all still fails, after the bound (grace) has passed.
TEST(Loadgen, AClosedWindowWithNoAnswerWithinTheBoundFails) {
    coopbench::test::Watchdog dog("a server that never answers", 30);
    TestServer srv(64, Misbehaving::stall_first);
    Spec s = quick(srv.port());
    s.connections = 1;
    s.warmup_s = 0;
    s.duration_s = 0.05;
    s.grace_s = 0.1;  // shorter than the first answer's 300 ms
    const Result r = run(s);
    EXPECT_FALSE(r.ok);
}

// Open loop, a rate below one request per window (a rate calibrated on a loaded machine can
// be that low): no intended send time falls in the 100 ms window, so the window waits for the
// next one (500 ms on), within the grace, and measures that one request. Before, the point
// failed with "measured requests = 0" though the server answered everything.
TEST(Loadgen, AnOpenWindowWithNoSendTimeInItWaitsForTheNextOne) {
    coopbench::test::Watchdog dog("an open loop slower than its window", 30);
    TestServer srv(64, Misbehaving::none);
    Spec s = quick(srv.port(), Mode::open);
    s.connections = 1;
    s.rate = 2;  // one send time every 500 ms, the first at the start, before the window
    s.warmup_s = 0.1;
    s.duration_s = 0.1;
    s.grace_s = 2;
    const Result r = run(s);
    ASSERT_TRUE(r.ok) << r.check;
    EXPECT_EQ(r.requests, 1u) << "the window measures the one send time it waited for";
    EXPECT_EQ(r.unfinished, 0u);
}

// A rate slower still: no send time within the window and the grace either fails, and says why.
TEST(Loadgen, AnOpenWindowWithNoSendTimeWithinTheBoundFailsAndSaysWhy) {
    coopbench::test::Watchdog dog("an open loop far slower than its window", 30);
    TestServer srv(64, Misbehaving::none);
    Spec s = quick(srv.port(), Mode::open);
    s.connections = 1;
    s.rate = 0.5;  // every 2 s
    s.warmup_s = 0.1;
    s.duration_s = 0.1;
    s.grace_s = 0.3;
    const Result r = run(s);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.check.find("offered rate"), std::string::npos) << r.check;
}

// HttpHeads — the framing of every C++ HTTP server: a head is found once, wherever the reads
// split it, and pipelined heads are each counted.
TEST(HttpHeads, CountsEveryCompleteHeadWhereverTheReadsSplitIt) {
    const std::string req(kHttpRequest);
    const std::string three = req + req + req;
    for (std::size_t split = 0; split <= three.size(); ++split) {
        for (std::size_t split2 = split; split2 <= three.size(); split2 += 7) {
            HttpHeads h;
            std::string buf;
            std::size_t heads = 0;
            for (auto [from, to] : {std::pair{std::size_t{0}, split}, std::pair{split, split2},
                                    std::pair{split2, three.size()}}) {
                buf.append(three, from, to - from);
                std::size_t used = 0;
                heads += h.complete(buf.data(), buf.size(), used);
                buf.erase(0, used);
            }
            EXPECT_EQ(heads, 3u) << split << " " << split2;
            EXPECT_TRUE(buf.empty()) << split << " " << split2;
        }
    }
    HttpHeads h;
    std::size_t used = 0;
    EXPECT_EQ(h.complete("GET / HTTP/1.1\r\n\r", 17, used), 0u);  // "\r\n\r" is no end
    EXPECT_EQ(used, 0u);
    HttpHeads h2;
    EXPECT_EQ(h2.complete("GET / HTTP/1.1\r\nX: \r\n\r\nGET", 26, used), 1u);
    EXPECT_EQ(used, 23u);  // the bytes after the head are the next one's
}

// HttpTestServer — a thread per connection answering request heads, misbehaving once.
enum class HttpWrong { none, corrupt, early, twice, truncated };

class HttpTestServer {
  public:
    explicit HttpTestServer(HttpWrong how) : how_(how) {
        lfd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(lfd_, reinterpret_cast<sockaddr*>(&a), sizeof a);
        listen(lfd_, 128);
        socklen_t len = sizeof a;
        getsockname(lfd_, reinterpret_cast<sockaddr*>(&a), &len);
        port_ = ntohs(a.sin_port);
        acceptor_ = std::thread([this] {
            for (;;) {
                const int fd = accept(lfd_, nullptr, nullptr);
                if (fd < 0) return;
                conns_.emplace_back([this, fd] { serve(fd); });
            }
        });
    }
    ~HttpTestServer() {
        shutdown(lfd_, SHUT_RDWR);
        acceptor_.join();
        for (auto& t : conns_) t.join();
        close(lfd_);
    }
    int port() const { return port_; }

  private:
    void serve(int fd) {
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::string buf;
        HttpHeads heads;
        char tmp[4096];
        for (int n = 0;;) {
            const ssize_t r = recv(fd, tmp, sizeof tmp, 0);
            if (r <= 0) break;
            buf.append(tmp, static_cast<std::size_t>(r));
            std::size_t used = 0;
            const std::size_t k = heads.complete(buf.data(), buf.size(), used);
            buf.erase(0, used);
            std::string out;
            for (std::size_t i = 0; i < k; ++i, ++n) {
                const bool now = n == 20 && !done_.exchange(true);
                std::string one_response(kHttpResponse);
                if (now && how_ == HttpWrong::corrupt) one_response[70] ^= 1;
                if (now && how_ == HttpWrong::truncated) one_response.pop_back();
                out += one_response;
                if (now && how_ == HttpWrong::twice) out += kHttpResponse;
                // early: the next request's response before its head is sent
                if (now && how_ == HttpWrong::early) out += kHttpResponse.substr(0, 5);
                if (now && how_ == HttpWrong::truncated) {
                    send(fd, out.data(), out.size(), MSG_NOSIGNAL);
                    close(fd);
                    return;
                }
            }
            if (!out.empty()) send(fd, out.data(), out.size(), MSG_NOSIGNAL);
        }
        close(fd);
    }
    HttpWrong how_;
    int lfd_ = -1, port_ = 0;
    std::atomic<bool> done_{false};
    std::thread acceptor_;
    std::vector<std::thread> conns_;  // the acceptor's own
};

TEST(Loadgen, ACorrectHttpServerPassesWithEveryResponseByteChecked) {
    coopbench::test::Watchdog dog("a correct HTTP responder", 30);
    HttpTestServer srv(HttpWrong::none);
    for (Mode m : {Mode::closed, Mode::open}) {
        Spec s = quick(srv.port(), m);
        s.protocol = Protocol::http;
        const Result r = run(s);
        EXPECT_TRUE(r.ok) << r.check;
        EXPECT_GT(r.requests, 0u);
        EXPECT_EQ(r.bytes_checked % kHttpResponse.size(), 0u);
        EXPECT_GE(r.bytes_checked, r.requests * kHttpResponse.size());
    }
}

TEST(Loadgen, EveryWayOfGettingAnHttpResponseWrongFailsTheRun) {
    coopbench::test::Watchdog dog("misbehaving HTTP responders", 60);
    const std::pair<HttpWrong, const char*> cases[] = {
        {HttpWrong::corrupt, "self-check failed: response byte 70 of connection"},
        {HttpWrong::truncated, "self-check failed: response bytes = 77 of 78, then the server closed"},
        // One response too many is the same bytes as the next one: seen as a surplus when
        // the client half-closes at the end.
        {HttpWrong::twice, "more than were asked for on connection"},
        // Bytes of a response before its request: they shift every byte after them.
        {HttpWrong::early, "self-check failed: response byte 5 of connection"},
    };
    for (auto& [how, want] : cases) {
        HttpTestServer srv(how);
        Spec s = quick(srv.port());
        s.protocol = Protocol::http;
        const Result r = run(s);
        EXPECT_FALSE(r.ok) << want;
        EXPECT_NE(r.check.find(want), std::string::npos) << r.check;
    }
}

// The rpc protocol: a server that does the work passes; one that echoes without it (the
// plain echo server) fails on a byte of the result.
TEST(Loadgen, AnRpcServerThatSkipsTheWorkFails) {
    coopbench::test::Watchdog dog("rpc servers", 30);
    for (Misbehaving how : {Misbehaving::rpc, Misbehaving::none}) {
        TestServer srv(128, how);
        Spec s = quick(srv.port());
        s.protocol = Protocol::rpc;
        s.size = 128;
        s.work_rounds = 1000;
        const Result r = run(s);
        if (how == Misbehaving::rpc) {
            EXPECT_TRUE(r.ok) << r.check;
            EXPECT_GE(r.bytes_checked, r.requests * 128);
            EXPECT_GT(r.work_ns, 0);
        } else {
            EXPECT_FALSE(r.ok);
            // The first wrong byte is one of the result's eight (which one depends on the seed).
            const std::string head = "self-check failed: reply byte ";
            ASSERT_EQ(r.check.rfind(head, 0), 0u) << r.check;
            EXPECT_LT(std::stoi(r.check.substr(head.size())), 8) << r.check;
        }
    }
}

// Churn: every request on a connection of its own, every echoed byte checked.
TEST(Loadgen, ChurnMakesAConnectionPerRequest) {
    coopbench::test::Watchdog dog("churn", 30);
    TestServer srv(64, Misbehaving::none);
    Spec s = quick(srv.port());
    s.churn = true;
    s.max_requests = 300;  // the test server keeps a thread per connection until its end
    const Result r = run(s);
    ASSERT_TRUE(r.ok) << r.check;
    EXPECT_GT(r.requests, 0u);
    EXPECT_GE(r.bytes_checked, r.requests * 64);
    EXPECT_GE(srv.accepted(), r.requests);  // warm-up's connections too
}

// echo-idle's RSS: the parsing of /proc's texts and the arithmetic, on fixed inputs.
TEST(IdleRss, ParsesSmapsRollupAndStatusAndComputesThePerConnectionShare) {
    const std::string rollup =
        "55d0c0a00000-7ffd5c1f2000 ---p 00000000 00:00 0                          [rollup]\n"
        "Rss:               12345 kB\nPss:               12000 kB\nSwapPss:               7 kB\n";
    EXPECT_EQ(rss_kib_of(rollup), 12345);
    const std::string status = "Name:\tcat\nVmPeak:\t  9000 kB\nVmRSS:\t    4321 kB\nRssAnon:\t 100 kB\n";
    EXPECT_EQ(rss_kib_of(status), 4321);
    EXPECT_EQ(rss_kib_of("SwapPss: 9 kB\n"), -1);  // no line of its own
    EXPECT_EQ(rss_kib_of(""), -1);
    EXPECT_DOUBLE_EQ(rss_per_idle_kib(1000, 1000 + 10000 * 8, 10000), 8.0);
    EXPECT_DOUBLE_EQ(rss_per_idle_kib(1000, 1500, 1000), 0.5);
    EXPECT_EQ(rss_per_idle_kib(-1, 1500, 1000), -1);
    EXPECT_EQ(rss_per_idle_kib(1000, 1500, 0), -1);
    EXPECT_GT(rss_kib(getpid()), 0);
}

// Which connections the server holds: the server side (local port = the server's) of a
// connection from one of the ports, whose inode is one of the server's fds; a backlogged one
// (inode 0), the client's own side, another port's and one not among the fds are not.
TEST(IdleRss, CountsOnlyTheConnectionsTheServerHasAccepted) {
    // port 0x1F90 = 8080; client ports 0xC000 = 49152, 0xC001, 0xC002, 0xC003
    const std::string tcp =
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 500 1 0 100 0 0 10 0\n"
        "   1: 0100007F:1F90 0100007F:C000 01 00000000:00000000 00:00000000 00000000  1000        0 501 1 0 20 4 0 10 -1\n"
        "   2: 0100007F:C000 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 502 1 0 20 4 0 10 -1\n"
        "   3: 0100007F:1F90 0100007F:C001 01 00000000:00000000 00:00000000 00000000  1000        0 503 1 0 20 4 0 10 -1\n"
        "   4: 0100007F:1F90 0100007F:C002 01 00000000:00000000 00:00000000 00000000  1000        0 0 1 0 20 4 0 10 -1\n"
        "   5: 0100007F:1F90 0100007F:C003 01 00000000:00000000 00:00000000 00000000  1000        0 505 1 0 20 4 0 10 -1\n"
        "   6: 0100007F:1F90 0100007F:D000 01 00000000:00000000 00:00000000 00000000  1000        0 506 1 0 20 4 0 10 -1\n";
    const std::vector<int> ports{0xC000, 0xC001, 0xC002, 0xC003};
    EXPECT_EQ(server_sockets_of(tcp, 8080, ports, {500, 501, 502, 503, 506}), 2u);  // 501, 503
    EXPECT_EQ(server_sockets_of(tcp, 8080, ports, {500, 501, 502, 503, 505, 506}), 3u);
    EXPECT_EQ(server_sockets_of(tcp, 8081, ports, {501, 503, 505}), 0u);
}

Spec idle_spec(int port, unsigned idle) {
    Spec s = quick(port, Mode::open);
    s.connections = 2;
    s.idle = idle;
    s.rate = 400;
    s.server_pid = getpid();  // the test server is this process
    return s;
}

// A server whose connections each hold 1 MiB: its RSS grows by at least that per idle
// connection, and by little more (a thread's stack pages, its share of malloc's arenas).
TEST(Loadgen, IdleConnectionsShowWhatTheServerHoldsForEach) {
    coopbench::test::Watchdog dog("idle connections", 60);
    TestServer srv(64, Misbehaving::none, 1024);
    const Result r = run(idle_spec(srv.port(), 16));
    ASSERT_TRUE(r.ok) << r.check;
    EXPECT_GT(r.requests, 0u);
    EXPECT_GE(srv.accepted(), 18u);
    const double per = rss_per_idle_kib(r.rss_before_kib, r.rss_after_kib, 16);
    EXPECT_GE(per, 1024.0) << "before " << r.rss_before_kib << " KiB, after " << r.rss_after_kib << " KiB";
    EXPECT_LE(per, 1024.0 + 512.0) << "before " << r.rss_before_kib << " KiB, after " << r.rss_after_kib << " KiB";
}

// An idle connection the server closes or writes to fails the point, whenever it happens:
// before the load (at once, or while the client waits for the server to hold them all) or
// during it (seen at the end).
TEST(Loadgen, AServerThatClosesOrWritesOnAnIdleConnectionFails) {
    coopbench::test::Watchdog dog("idle connections closed", 90);
    const std::pair<Misbehaving, const char*> cases[] = {
        {Misbehaving::close_idle, "self-check failed: idle connection 3 (one that never sends) closed by the server"},
        {Misbehaving::greet_idle, "self-check failed: the server sent 1 bytes on idle connection 3"},
        {Misbehaving::close_idle_late, "self-check failed: idle connection 2 (one that never sends) closed by the server"},
    };
    for (auto& [how, want] : cases) {
        TestServer srv(64, how);
        const Result r = run(idle_spec(srv.port(), 4));  // ids 2-5: after the 2 loaded ones
        EXPECT_FALSE(r.ok) << want;
        EXPECT_NE(r.check.find(want), std::string::npos) << r.check;
    }
}

// Without the server's pid there is no RSS to read: a bad load, said before any connect.
TEST(Loadgen, IdleConnectionsNeedTheServersPid) {
    Spec s = idle_spec(1, 4);
    s.server_pid = 0;
    const Result r = run(s);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.check.find("need the server's pid"), std::string::npos) << r.check;
}

// held_first (echo-hogs): no request is sent before the server holds every connection. The
// server accepts one connection every 30 ms; of the first three of four (the last one's accept
// and the load's start race with the server's look), none has a byte waiting when accepted.
// Without held_first the same server finds requests waiting at its later accepts (the control:
// the test can tell the two apart).
TEST(Loadgen, HeldFirstSendsNothingBeforeTheServerHoldsEveryConnection) {
    coopbench::test::Watchdog dog("held first", 60);
    for (const bool held : {true, false}) {
        TestServer srv(64, Misbehaving::slow_accept);
        Spec s = quick(srv.port(), Mode::open);
        s.server_pid = getpid();  // the test server is this process
        s.held_first = held;
        const Result r = run(s);
        ASSERT_TRUE(r.ok) << r.check;
        if (held) {
            EXPECT_EQ(srv.early(3), 0u) << "a request came before the server held every connection";
            EXPECT_GE(r.held_s, 0.0);
        } else {
            EXPECT_GT(srv.early(3), 0u) << "control: without held_first the later accepts should find requests";
            EXPECT_LT(r.held_s, 0.0);
        }
    }
}

// held_first: a server that closes a connection before the load (as one whose spawn for it was
// refused does) fails the run at once, not after the 30 s wait for it to be held.
TEST(Loadgen, HeldFirstFailsAtOnceWhenTheServerClosesAConnection) {
    coopbench::test::Watchdog dog("held first, a connection closed", 20);
    TestServer srv(64, Misbehaving::close_idle);  // closes the second connection it accepts
    Spec s = quick(srv.port(), Mode::open);
    s.server_pid = getpid();
    s.held_first = true;
    const Result r = run(s);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.check.find("the server closed connection 1 before the load began"), std::string::npos) << r.check;
}

TEST(Loadgen, NoServerIsAFailureThatSaysSo) {
    Spec s = quick(1);  // nothing listens on port 1
    const Result r = run(s);
    EXPECT_FALSE(r.ok);
    EXPECT_NE(r.check.find("connect to 127.0.0.1:1"), std::string::npos) << r.check;
}

}  // namespace
