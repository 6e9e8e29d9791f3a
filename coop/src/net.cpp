// net.cpp — coop/net.hpp: TCP sockets over coop's I/O waits (io.cpp). Every socket is made
// non-blocking and close-on-exec (SOCK_NONBLOCK | SOCK_CLOEXEC), registered with the poller
// when made (io::wait_* registers on first use; connect and accept register before their
// first wait), and closed through io::close (unregistered first).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "coop/net.hpp"

namespace coop::net {

namespace {
std::error_code errno_code(int e) noexcept { return {e, std::generic_category()}; }
}  // namespace

// ------------------------------------------------------------------------------- Endpoint

Endpoint Endpoint::parse(std::string_view address, std::uint16_t port, std::error_code& ec) {
    Endpoint e;
    const std::string a(address);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&e.addr_);
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&e.addr_);
    if (inet_pton(AF_INET, a.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        e.len_ = sizeof(sockaddr_in);
    } else if (inet_pton(AF_INET6, a.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        e.len_ = sizeof(sockaddr_in6);
    } else {
        ec = std::make_error_code(std::errc::invalid_argument);
        return Endpoint{};
    }
    ec.clear();
    return e;
}

Endpoint Endpoint::loopback_v4(std::uint16_t port) {
    std::error_code ec;
    return parse("127.0.0.1", port, ec);
}
Endpoint Endpoint::loopback_v6(std::uint16_t port) {
    std::error_code ec;
    return parse("::1", port, ec);
}
Endpoint Endpoint::any_v4(std::uint16_t port) {
    std::error_code ec;
    return parse("0.0.0.0", port, ec);
}

std::uint16_t Endpoint::port() const noexcept {
    if (addr_.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr_)->sin_port);
    if (addr_.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr_)->sin6_port);
    return 0;
}

std::string Endpoint::to_string() const {
    char buf[INET6_ADDRSTRLEN + 16] = "(none)";
    if (addr_.ss_family == AF_INET) {
        char a[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr_)->sin_addr, a, sizeof a);
        std::snprintf(buf, sizeof buf, "%s:%u", a, static_cast<unsigned>(port()));
    } else if (addr_.ss_family == AF_INET6) {
        char a[INET6_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr_)->sin6_addr, a, sizeof a);
        std::snprintf(buf, sizeof buf, "[%s]:%u", a, static_cast<unsigned>(port()));
    }
    return buf;
}

namespace {
Endpoint name_of(int fd, bool peer) noexcept {
    Endpoint e;
    socklen_t n = sizeof(sockaddr_storage);
    if ((peer ? getpeername(fd, e.data(), &n) : getsockname(fd, e.data(), &n)) == 0) e.set_size(n);
    return e;
}
void nodelay(int fd) noexcept {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}
}  // namespace

// --------------------------------------------------------------------------------- Stream

Stream::Stream(int fd) noexcept : fd_(fd) {
    if (fd_ >= 0) io::set_nonblocking(fd_);
}

std::size_t Stream::read(void* buf, std::size_t n, std::error_code& ec) noexcept {
    if (fd_ < 0) {
        ec = errno_code(EBADF);
        return 0;
    }
    return io::read(fd_, buf, n, ec, read_deadline_);
}

std::size_t Stream::write(const void* buf, std::size_t n, std::error_code& ec) noexcept {
    if (fd_ < 0) {
        ec = errno_code(EBADF);
        return 0;
    }
    return io::write(fd_, buf, n, ec, write_deadline_);
}

std::size_t Stream::read_exact(void* buf, std::size_t n, std::error_code& ec) noexcept {
    std::size_t done = 0;
    ec.clear();
    while (done < n) {
        const std::size_t r = read(static_cast<char*>(buf) + done, n - done, ec);
        if (ec) return done;
        if (r == 0) {
            ec = io::errc::eof;
            return done;
        }
        done += r;
    }
    return done;
}

std::size_t Stream::write_all(const void* buf, std::size_t n, std::error_code& ec) noexcept {
    std::size_t done = 0;
    ec.clear();
    while (done < n) {
        const std::size_t w = write(static_cast<const char*>(buf) + done, n - done, ec);
        if (ec) return done;
        done += w;
    }
    return done;
}

std::error_code Stream::shutdown(int how) noexcept {
    if (fd_ < 0) return errno_code(EBADF);
    if (::shutdown(fd_, how) != 0) return errno_code(errno);
    return {};
}

std::error_code Stream::close() noexcept {
    if (fd_ < 0) return {};
    return io::close(std::exchange(fd_, -1));
}

std::error_code Stream::set_nodelay(bool on) noexcept {
    const int v = on ? 1 : 0;
    if (setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &v, sizeof v) != 0) return errno_code(errno);
    return {};
}

Endpoint Stream::local_endpoint() const noexcept { return name_of(fd_, false); }
Endpoint Stream::peer_endpoint() const noexcept { return name_of(fd_, true); }

// ------------------------------------------------------------------------------- Listener

Listener Listener::listen(const Endpoint& at, std::error_code& ec, int backlog) {
    Listener l;
    const int fd = ::socket(at.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ec = errno_code(errno);
        return l;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (at.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (::bind(fd, at.data(), at.size()) != 0 || ::listen(fd, backlog) != 0) {
        ec = errno_code(errno);
        ::close(fd);
        return l;
    }
    l.fd_ = fd;
    ec.clear();
    return l;
}

Stream Listener::accept(std::error_code& ec, Endpoint* peer) noexcept {
    if (fd_ < 0) {
        ec = errno_code(EBADF);
        return Stream{};
    }
    for (;;) {
        Endpoint e;
        socklen_t n = sizeof(sockaddr_storage);
        const int fd = ::accept4(fd_, e.data(), &n, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            e.set_size(n);
            if (peer != nullptr) *peer = e;
            nodelay(fd);
            ec.clear();
            return Stream(fd);
        }
        if (errno == EINTR || errno == ECONNABORTED) continue;  // a connection gone before accept
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            ec = errno_code(errno);  // EMFILE, ENFILE, ENOBUFS...: to the caller, no retry loop
            return Stream{};
        }
        if ((ec = io::wait_readable(fd_, deadline_))) return Stream{};
    }
}

std::error_code Listener::close() noexcept {
    if (fd_ < 0) return {};
    return io::close(std::exchange(fd_, -1));
}

Endpoint Listener::local_endpoint() const noexcept { return name_of(fd_, false); }

// -------------------------------------------------------------------------------- connect

Stream connect(const Endpoint& to, std::error_code& ec, Deadline deadline) noexcept {
    const int fd = ::socket(to.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        ec = errno_code(errno);
        return Stream{};
    }
    Stream s(fd);  // owns it from here: closed (and unregistered) on every error path
    int r;
    do r = ::connect(fd, to.data(), to.size());
    while (r != 0 && errno == EINTR);
    if (r != 0) {
        if (errno != EINPROGRESS) {
            ec = errno_code(errno);
            return Stream{};
        }
        // Writable when the handshake ends (either way): SO_ERROR says how.
        if ((ec = io::wait_writable(fd, deadline))) return Stream{};
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
        if (err != 0) {
            ec = errno_code(err);
            return Stream{};
        }
    }
    nodelay(fd);
    ec.clear();
    return s;
}

}  // namespace coop::net
