// io.hpp — I/O on file descriptors that parks the calling activity, not its processor.
//
// Inside an activity, a call that would block (EAGAIN on a non-blocking fd) parks the
// activity; coop's poller (epoll, edge-triggered, each fd registered once) makes it ready
// again when the fd becomes readable or writable, and its processor runs other activities
// meanwhile. An idle processor is the poller (no thread of its own): it sleeps in
// epoll_wait instead of its futex. Outside an activity (main(), any other thread) the same
// calls block the calling thread as plain POSIX calls do (poll(2)). Design:
// docs/native-runtime.md, "I/O"; sockets: net.hpp.
//
// Errors: every call reports failure through a std::error_code (never an exception): errno's
// value in std::generic_category(), plus coop::io::errc::eof (net.hpp's read_exact), and:
//   std::errc::timed_out            the call's deadline passed (before or while it waited);
//   std::errc::operation_canceled   coop::io::close(fd) closed the fd while the call waited;
//   std::errc::device_or_resource_busy  another activity already waits on the same fd in
//                                   the same direction (one reader and one writer per fd).
// Why error codes: in a server, EOF, a timeout or a reset peer are expected outcomes, and
// activities may not throw out of their function (coop::spawn); asio's and
// std::filesystem's non-throwing overloads have the same shape.
//
// Rules
// - An fd that coop has waited on is registered with the poller until coop::io::close(fd)
//   (or forget(fd)) says otherwise: close such an fd with coop::io::close, never ::close
//   alone (the fd number could be reused under a stale registration).
// - One waiting reader and one waiting writer per fd at a time.
// - Regular files are not pollable (epoll refuses them): reads of them block the processor;
//   run them through coop::io::blocking.
// - Deadlines are CLOCK_MONOTONIC time points (std::chrono::steady_clock); kNoDeadline: none.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

namespace coop::io {

using Clock = std::chrono::steady_clock;  // CLOCK_MONOTONIC on Linux, as coop's timers
using Deadline = Clock::time_point;
inline constexpr Deadline kNoDeadline = Deadline::max();

// after — the deadline `d` from now.
template <class Rep, class Period>
Deadline after(std::chrono::duration<Rep, Period> d) {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(d);
}

// errc — coop's own I/O conditions (category "coop.io").
enum class errc { eof = 1 };  // the peer closed before the requested bytes came (read_exact)
const std::error_category& category() noexcept;
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), category()}; }

}  // namespace coop::io

template <>
struct std::is_error_code_enum<coop::io::errc> : std::true_type {};

namespace coop::io {

// wait_readable / wait_writable — waits until `fd` is readable / writable (an edge came
// since the last wait; it may have been consumed by a read since: callers retry their
// syscall, as with epoll's edge-triggered mode), or its deadline passes. Registers the fd
// with the poller on first use (it must then be closed with coop::io::close).
std::error_code wait_readable(int fd, Deadline deadline = kNoDeadline) noexcept;
std::error_code wait_writable(int fd, Deadline deadline = kNoDeadline) noexcept;

// read / write — one read(2) / write(2) of at most n bytes that waits while the fd has no
// data / no room: the syscall first, a park only on EAGAIN (no syscall but the read when
// data is there). Returns the bytes moved (read: 0 with no error is end of file). The fd
// should be non-blocking (set_nonblocking; net.hpp's sockets are). write on a socket uses
// send(MSG_NOSIGNAL): a reset peer gives EPIPE, never SIGPIPE.
std::size_t read(int fd, void* buf, std::size_t n, std::error_code& ec, Deadline deadline = kNoDeadline) noexcept;
std::size_t write(int fd, const void* buf, std::size_t n, std::error_code& ec,
                  Deadline deadline = kNoDeadline) noexcept;

// set_nonblocking — O_NONBLOCK on `fd`.
std::error_code set_nonblocking(int fd) noexcept;

// close — wakes the fd's waiters with operation_canceled, removes it from the poller (its
// stale events are dropped by the sequence number), then close(2)s it.
std::error_code close(int fd) noexcept;

// forget — removes `fd` from the poller (waiters woken as by close) without closing it.
void forget(int fd) noexcept;

namespace detail {
// run_blocking — fn(arg) on coop's pool of blocking threads while the calling activity is
// parked (inline outside an activity). See blocking().
void run_blocking(void (*fn)(void*), void* arg) noexcept;
}  // namespace detail

// blocking — runs f() on one of a bounded pool of OS threads (at most COOP_BLOCKING_THREADS,
// default 64; further calls queue) while the calling activity is parked, and returns its
// result (an exception thrown by f is rethrown here). For calls that would block a
// processor: regular-file I/O, getaddrinfo, a library's blocking API. Outside an activity it
// calls f() directly. (tokio's spawn_blocking; Go hands its P off instead.)
template <class F>
decltype(auto) blocking(F&& f) {
    using R = std::invoke_result_t<F&>;
    std::exception_ptr error;
    if constexpr (std::is_void_v<R>) {
        auto call = [&]() noexcept {
            try {
                f();
            } catch (...) {
                error = std::current_exception();
            }
        };
        detail::run_blocking([](void* c) { (*static_cast<decltype(call)*>(c))(); }, &call);
        if (error) std::rethrow_exception(error);
    } else {
        std::optional<R> result;
        auto call = [&]() noexcept {
            try {
                result.emplace(f());
            } catch (...) {
                error = std::current_exception();
            }
        };
        detail::run_blocking([](void* c) { (*static_cast<decltype(call)*>(c))(); }, &call);
        if (error) std::rethrow_exception(error);
        return R(std::move(*result));
    }
}

}  // namespace coop::io
