// coopbench-epoll — the `epoll` backend: the hand-written ceiling for the I/O workloads
// (workloads/io/echo.hpp), a server as an epoll expert writes one, run by the harness as an
// external program (docs/adding-a-backend.md, "Serving an I/O workload").
//
// One thread per processor, each with its own epoll instance and its own listening socket
// on the one port (SO_REUSEPORT, socket(7): the kernel spreads incoming connections over the
// listeners, so no thread shares a lock, a queue or an fd with another: the kprotty gist's
// "epoll per thread", io-anchors review §5.2). Sockets are non-blocking and registered once,
// edge-triggered for input and output (epoll(7), "Level-triggered and edge-triggered": read
// until EAGAIN, as Go's netpoll and mio do); a read shorter than asked means the socket is
// drained (tokio's PollEvented rule), so ping-pong costs one read and one write per message.
// TCP_NODELAY on every connection (tcp(7)). The end of stdin stops every thread (an eventfd
// in each epoll set).
//
// http-hello (harness/loadgen/protocol.hpp): the same loop, but what is read goes into a
// buffer of kHttpMaxHead bytes, every complete request head in it is answered at once (one
// send of as many kHttpResponse copies: a pipelining client gets one write, as the
// TechEmpower plaintext servers written on epoll do), and the rest is kept for the next read.
// rpc: echo's loop, the work (protocol.hpp's rpc_answer) done on the whole message before
// it is written back, on the thread that read it.
// echo-hogs: echo's loop, and K more OS threads beside it, each computing slices of
// protocol.hpp's rpc_work and calling sched_yield(2) between two: there is nothing to yield
// to cooperatively here, so the kernel's scheduler shares the CPUs between the hogs and the
// serving threads (CFS preempts a hog at the end of its time slice, and a serving thread
// woken by epoll is placed ahead of one that has run long): a preemptive baseline, not a
// ceiling. The slices they completed are printed when stdin ends (serve.hpp, say_hog_slices).
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/loadgen/serve.hpp"

namespace {

struct Conn {
    int fd;
    std::vector<unsigned char> buf;
    std::size_t have = 0;  // bytes of the current message read (http: of the buffer)
    std::size_t put = 0;   // bytes of it written back (while have == size; http: of out)
    std::string out;       // http: the responses not yet written
    coopbench::loadgen::HttpHeads heads;
};

using coopbench::loadgen::kHttpMaxHead;
using coopbench::loadgen::kHttpResponse;
using coopbench::loadgen::Protocol;

std::atomic<bool> corrupt_once{false};

void serve_thread(int lfd, int stopfd, std::size_t size, Protocol proto) {
    const bool http = proto == Protocol::http;
    if (http) size = kHttpMaxHead;  // each connection's buffer
    const int ep = epoll_create1(EPOLL_CLOEXEC);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr;  // the listener
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.ptr = &stopfd;  // the stop eventfd
    epoll_ctl(ep, EPOLL_CTL_ADD, stopfd, &ev);
    std::vector<std::unique_ptr<Conn>> conns;  // by fd
    epoll_event evs[256];
    auto drop = [&](Conn* c) {
        epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, nullptr);
        ::close(c->fd);
        conns[static_cast<std::size_t>(c->fd)].reset();
    };
    // pump_http — write what is owed, read, answer every complete head; until the socket
    // would block. false when the connection ended (or sent a head longer than the buffer).
    auto pump_http = [&](Conn* c, std::uint32_t events) -> bool {
        bool drained = false;
        for (;;) {
            while (c->put < c->out.size()) {
                const ssize_t w = ::send(c->fd, c->out.data() + c->put, c->out.size() - c->put, MSG_NOSIGNAL);
                if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;  // EPOLLOUT resumes
                c->put += static_cast<std::size_t>(w);
            }
            c->out.clear();
            c->put = 0;
            if (drained) return true;
            const std::size_t room = size - c->have;
            const ssize_t r = ::recv(c->fd, c->buf.data() + c->have, room, 0);
            if (r == 0) return false;
            if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
            c->have += static_cast<std::size_t>(r);
            std::size_t used = 0;
            const std::size_t n = c->heads.complete(reinterpret_cast<const char*>(c->buf.data()), c->have, used);
            if (n == 0 && c->have == size) return false;  // a head longer than kHttpMaxHead
            for (std::size_t k = 0; k < n; ++k) c->out.append(kHttpResponse);
            if (n > 0 && corrupt_once.exchange(false)) c->out[0] ^= static_cast<char>(0xFF);  // --inject-fault
            std::memmove(c->buf.data(), c->buf.data() + used, c->have - used);
            c->have -= used;
            // A short read drained the socket (unless the FIN came with it): write, then wait.
            drained = static_cast<std::size_t>(r) < room && !(events & (EPOLLRDHUP | EPOLLHUP));
        }
    };
    // pump — read and echo until the socket would block; false when the connection ended.
    auto pump = [&](Conn* c, std::uint32_t events) -> bool {
        if (http) return pump_http(c, events);
        for (;;) {
            if (c->have < size) {
                const ssize_t r = ::recv(c->fd, c->buf.data() + c->have, size - c->have, 0);
                if (r == 0) return false;
                if (r < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
                c->have += static_cast<std::size_t>(r);
                // A short read drained the socket, unless this edge brought the FIN too.
                if (c->have < size && !(events & (EPOLLRDHUP | EPOLLHUP))) return true;
                if (c->have < size) continue;
                if (proto == Protocol::rpc) coopbench::loadgen::rpc_answer(c->buf.data());  // the work
                if (corrupt_once.exchange(false)) c->buf[0] ^= 0xFF;  // --inject-fault
            }
            while (c->put < size) {
                const ssize_t w = ::send(c->fd, c->buf.data() + c->put, size - c->put, MSG_NOSIGNAL);
                if (w < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;  // EPOLLOUT resumes
                c->put += static_cast<std::size_t>(w);
            }
            c->have = c->put = 0;
        }
    };
    for (;;) {
        const int n = epoll_wait(ep, evs, 256, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        for (int i = 0; i < n; ++i) {
            if (evs[i].data.ptr == &stopfd) {
                for (auto& c : conns)
                    if (c) ::close(c->fd);
                ::close(ep);
                return;
            }
            if (evs[i].data.ptr == nullptr) {
                for (;;) {
                    const int fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (fd < 0) break;
                    const int one = 1;
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    if (conns.size() <= static_cast<std::size_t>(fd)) conns.resize(static_cast<std::size_t>(fd) + 1);
                    conns[static_cast<std::size_t>(fd)] = std::make_unique<Conn>(Conn{fd, std::vector<unsigned char>(size), 0, 0, {}, {}});
                    epoll_event cev{};
                    cev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
                    cev.data.ptr = conns[static_cast<std::size_t>(fd)].get();
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &cev);
                    if (!pump(conns[static_cast<std::size_t>(fd)].get(), 0)) drop(conns[static_cast<std::size_t>(fd)].get());
                }
                continue;
            }
            auto* c = static_cast<Conn*>(evs[i].data.ptr);
            if (!pump(c, evs[i].events)) drop(c);
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    using namespace coopbench::serve;
    if (argc > 1 && std::string(argv[1]) == "--list") {
        std::cout << list_reply({{"server", "epoll, one thread per processor, SO_REUSEPORT listener per thread, "
                                            "edge-triggered, TCP_NODELAY (runtimes/epoll/server.cpp); http-hello: every complete "
                                            "request head in a read answered by one send"}})
                  << std::endl;
        return 0;
    }
    try {
        const Request req = read_request();
        const std::size_t size = req.protocol() == Protocol::http ? 0 : req.size();
        if (req.protocol() == Protocol::rpc && size < coopbench::loadgen::kRpcHeader) {
            reply_failed("rpc: size must be at least 16 (the work's header)");
            return 0;
        }
        corrupt_once = req.inject_fault;
        rlimit nofile{};
        if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
            nofile.rlim_cur = nofile.rlim_max;
            setrlimit(RLIMIT_NOFILE, &nofile);
        }
        std::vector<int> listeners;
        int port = 0;
        for (unsigned t = 0; t < req.processors; ++t) {
            const int fd = listen_loopback(port, true, SOCK_NONBLOCK);
            if (fd < 0) {
                reply_failed(std::string("listen on 127.0.0.1: ") + std::strerror(errno));
                return 0;
            }
            if (port == 0) port = port_of(fd);
            listeners.push_back(fd);
        }
        const int stopfd = eventfd(0, EFD_CLOEXEC);
        std::vector<std::thread> threads;
        // The threads inherit this process's CPUs (the load generator set them); one per
        // processor, each pinned to one of them when there are as many.
        std::vector<int> cpus;
        cpu_set_t set;
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int c = 0; c < CPU_SETSIZE; ++c)
                if (CPU_ISSET(c, &set)) cpus.push_back(c);
        for (unsigned t = 0; t < req.processors; ++t)
            threads.emplace_back([&, t] {
                if (cpus.size() >= req.processors) {
                    cpu_set_t one;
                    CPU_ZERO(&one);
                    CPU_SET(cpus[t], &one);
                    sched_setaffinity(0, sizeof one, &one);
                }
                serve_thread(listeners[t], stopfd, size, req.protocol());
            });
        // echo-hogs' hogs, on the process's CPUs (not pinned: the kernel places them).
        const unsigned k = req.lazy_hogs() ? 0 : req.hogs();
        const std::uint64_t rounds = req.slice_rounds();
        std::atomic<bool> stop_hogs{false};
        std::vector<std::uint64_t> slices(k, 0), sinks(k, 0);  // hog i's own, read after its join
        std::vector<std::thread> hogs;
        for (unsigned i = 0; i < k; ++i)
            hogs.emplace_back([&, i] {
                std::uint64_t x = 0x9E3779B97F4A7C15ull + i, n = 0;
                // relaxed: the flag carries no data (the counts are read after the join).
                while (!stop_hogs.load(std::memory_order_relaxed)) {
                    x = coopbench::loadgen::rpc_work(x, rounds);
                    ++n;
                    sched_yield();
                }
                slices[i] = n;
                sinks[i] = x;  // the work's result kept: it is not dead code
            });
        say_listening(port);
        wait_for_stdin_end();
        stop_hogs.store(true, std::memory_order_relaxed);
        const std::uint64_t one = 1;
        if (write(stopfd, &one, sizeof one) != sizeof one) return 1;
        for (auto& th : threads) th.join();
        for (auto& h : hogs) h.join();
        if (req.workload == "echo-hogs") {
            std::uint64_t total = 0;
            for (auto n : slices) total += n;
            say_hog_slices(req.hogs(), total);
        }
        return 0;
    } catch (const std::exception& e) {
        reply_failed(e.what());
        return 0;
    }
}
