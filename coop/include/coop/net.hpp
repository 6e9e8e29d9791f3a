// net.hpp — TCP for coop's activities: Listener (listen, accept), connect, Stream (read,
// write, read_exact, write_all, shutdown, close, deadlines), IPv4 and IPv6.
//
// Every call that would block parks the calling activity (io.hpp: the poller), and blocks
// the thread outside an activity. Errors: std::error_code, as io.hpp says (errno values in
// std::generic_category(); std::errc::timed_out for a deadline, operation_canceled for a
// Stream closed while a call waited, coop::io::errc::eof for read_exact's early end of file).
// Sockets are non-blocking and close-on-exec, registered with the poller once, and accepted
// or connected streams have TCP_NODELAY set (as Go's net package does; set_nodelay(false)
// undoes it). Writes use MSG_NOSIGNAL: a reset peer gives EPIPE or ECONNRESET, never SIGPIPE.
//
// An echo server (docs/examples/echo_server.cpp):
//   std::error_code ec;
//   auto l = coop::net::Listener::listen(coop::net::Endpoint::loopback_v4(7000), ec);
//   std::vector<coop::Thread> conns;           // a coop::Thread joins when destroyed
//   for (;;) {
//       coop::net::Stream s = l.accept(ec);
//       if (ec) continue;                       // e.g. EMFILE: the caller decides
//       conns.push_back(coop::spawn([s = std::move(s)]() mutable {
//           char buf[4096];  std::error_code e;
//           while (std::size_t n = s.read(buf, sizeof buf, e)) if (s.write_all(buf, n, e) < n) break;
//       }));
//   }
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "io.hpp"

namespace coop::net {

using io::Deadline;
using io::kNoDeadline;

// Endpoint — an IPv4 or IPv6 address and port (numeric: names are resolved by the caller,
// e.g. getaddrinfo through coop::io::blocking).
class Endpoint {
  public:
    Endpoint() = default;
    // parse — "127.0.0.1", "::1", "0.0.0.0", "::" ... and a port; invalid_argument if neither
    // an IPv4 nor an IPv6 address.
    static Endpoint parse(std::string_view address, std::uint16_t port, std::error_code& ec);
    static Endpoint loopback_v4(std::uint16_t port);
    static Endpoint loopback_v6(std::uint16_t port);
    static Endpoint any_v4(std::uint16_t port);

    int family() const noexcept { return addr_.ss_family; }
    std::uint16_t port() const noexcept;
    std::string to_string() const;  // "127.0.0.1:7000", "[::1]:7000"
    const sockaddr* data() const noexcept { return reinterpret_cast<const sockaddr*>(&addr_); }
    sockaddr* data() noexcept { return reinterpret_cast<sockaddr*>(&addr_); }
    socklen_t size() const noexcept { return len_; }
    void set_size(socklen_t n) noexcept { len_ = n; }

  private:
    sockaddr_storage addr_{};
    socklen_t len_ = 0;
};

// Stream — a connected TCP socket (owns its fd; closes it when destroyed). One reader and
// one writer may use it at once (from two activities); not more of each.
class Stream {
  public:
    Stream() = default;
    // Stream(fd) — adopts a connected socket: non-blocking, registered with the poller.
    explicit Stream(int fd) noexcept;
    Stream(Stream&& o) noexcept
        : fd_(std::exchange(o.fd_, -1)), read_deadline_(o.read_deadline_), write_deadline_(o.write_deadline_) {}
    Stream& operator=(Stream&& o) noexcept {
        if (this != &o) {
            close();
            fd_ = std::exchange(o.fd_, -1);
            read_deadline_ = o.read_deadline_;
            write_deadline_ = o.write_deadline_;
        }
        return *this;
    }
    ~Stream() { close(); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // read — at most n bytes, at least 1 unless end of file (returns 0, no error) or error.
    std::size_t read(void* buf, std::size_t n, std::error_code& ec) noexcept;
    // write — at most n bytes, at least 1 unless error.
    std::size_t write(const void* buf, std::size_t n, std::error_code& ec) noexcept;
    // read_exact — exactly n bytes unless error (io::errc::eof: the peer closed first);
    // returns the bytes read.
    std::size_t read_exact(void* buf, std::size_t n, std::error_code& ec) noexcept;
    // write_all — all n bytes unless error; returns the bytes written.
    std::size_t write_all(const void* buf, std::size_t n, std::error_code& ec) noexcept;

    // Deadlines: every later read (write) call, and one that waits when the deadline is set,
    // fails with std::errc::timed_out once `d` has passed, also while it is parked; a new
    // deadline replaces the old one for the calls that start after it (kNoDeadline: none).
    void set_read_deadline(Deadline d) noexcept { read_deadline_ = d; }
    void set_write_deadline(Deadline d) noexcept { write_deadline_ = d; }
    void set_deadline(Deadline d) noexcept { read_deadline_ = write_deadline_ = d; }

    // shutdown — SHUT_WR (the peer reads end of file), SHUT_RD or SHUT_RDWR.
    std::error_code shutdown(int how = SHUT_WR) noexcept;
    // close — wakes a parked reader/writer of this stream with operation_canceled, then
    // closes the socket (io::close). Idempotent.
    std::error_code close() noexcept;
    std::error_code set_nodelay(bool on) noexcept;

    bool is_open() const noexcept { return fd_ >= 0; }
    int native_handle() const noexcept { return fd_; }
    Endpoint local_endpoint() const noexcept;
    Endpoint peer_endpoint() const noexcept;

  private:
    int fd_ = -1;
    Deadline read_deadline_ = kNoDeadline;
    Deadline write_deadline_ = kNoDeadline;
};

// Listener — a listening TCP socket (SO_REUSEADDR; IPv6 sockets are IPv6-only).
class Listener {
  public:
    Listener() = default;
    static Listener listen(const Endpoint& at, std::error_code& ec, int backlog = 1024);
    Listener(Listener&& o) noexcept : fd_(std::exchange(o.fd_, -1)), deadline_(o.deadline_) {}
    Listener& operator=(Listener&& o) noexcept {
        if (this != &o) {
            close();
            fd_ = std::exchange(o.fd_, -1);
            deadline_ = o.deadline_;
        }
        return *this;
    }
    ~Listener() { close(); }
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;

    // accept — the next connection (parks until one comes). An error (EMFILE, ENFILE,
    // ENOBUFS...) is returned at once, never retried inside: the caller decides (the pending
    // connection stays queued in the kernel). `peer`: its address, if not null.
    Stream accept(std::error_code& ec, Endpoint* peer = nullptr) noexcept;
    void set_deadline(Deadline d) noexcept { deadline_ = d; }  // for accept, as Stream's
    std::error_code close() noexcept;
    bool is_open() const noexcept { return fd_ >= 0; }
    int native_handle() const noexcept { return fd_; }
    Endpoint local_endpoint() const noexcept;  // the port chosen for port 0

  private:
    int fd_ = -1;
    Deadline deadline_ = kNoDeadline;
};

// connect — a TCP connection to `to` (ECONNREFUSED, ETIMEDOUT...; std::errc::timed_out when
// `deadline` passes first).
Stream connect(const Endpoint& to, std::error_code& ec, Deadline deadline = kNoDeadline) noexcept;

}  // namespace coop::net
