// protocol.hpp — the wire protocols of the I/O workloads (docs/io-workloads.md says them
// byte for byte), shared by the load generator and the project's C++ servers
// (workloads/io/, runtimes/epoll, runtimes/asio). Go's io.go and tokio's io.rs hold the same
// bytes.
//
//   echo — fixed-size messages of `size` bytes; the server reads one whole message and
//          writes it back.
//   http — HTTP/1.1 "hello world" with keep-alive (TechEmpower's plaintext shape, without its
//          pipelining by default and without a Date header, so that every response is the
//          same bytes): the client sends kHttpRequest; the server answers every complete
//          request head (the bytes up to and including the first "\r\n\r\n") with
//          kHttpResponse, in order, on the same connection, until the client closes. The
//          server does not look into the head (a minimal responder: the same work on every
//          backend), so any GET without a body, wrk's included, is answered.
//   rpc  — echo's fixed-size messages (`size` >= 16 bytes) carrying work: bytes 0-7 hold a
//          round count R and bytes 8-15 a seed S (both unsigned 64-bit little-endian); the
//          server reads the whole message, computes rpc_work(S, R), writes the result over
//          bytes 0-7 (little-endian) and sends the message back. The client knows each
//          request's answer (its seeds come from a small table computed before the clock),
//          so a server that skips the work, or gets it wrong, fails the byte check.
//   echo-hogs — echo's protocol, unchanged, while the server runs `hogs` compute-bound
//          activities, each a loop of { hog_slice_rounds(slice_us) rounds of rpc_work; yield
//          to the runtime } until the point ends; the server reports how many slices they
//          completed (kHogSlicesKey), and a point whose hogs completed none fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace coopbench::loadgen {

enum class Protocol { echo, http, rpc };

// rpc_work — the rpc protocol's CPU work: R rounds of a 64-bit LCG step (Knuth's MMIX
// constants, TAOCP vol. 2 §3.3.4) followed by an xorshift (x ^= x >> 29), each round
// dependent on the last, so that neither a compiler nor a CPU can shorten the chain (no
// closed form, no parallelism): the same cost in every language's compiled loop. Go's io.go
// and tokio's io.rs hold the same function.
inline std::uint64_t rpc_work(std::uint64_t seed, std::uint64_t rounds) {
    std::uint64_t x = seed;
    for (std::uint64_t i = 0; i < rounds; ++i) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x ^= x >> 29;
    }
    return x;
}
inline constexpr std::size_t kRpcHeader = 16;  // round count, seed

inline std::uint64_t load_le64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
inline void store_le64(unsigned char* p, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
// rpc_answer — what a server does to a whole request of the rpc protocol, in place.
inline void rpc_answer(unsigned char* msg) {
    store_le64(msg, rpc_work(load_le64(msg + 8), load_le64(msg)));
}

// hog_slice_rounds — the rounds of rpc_work in one slice of echo-hogs' hogs: a count, not a
// time (as rpc's `work`), so that every backend's hogs do the same work between two yields,
// at rpc's 600 rounds a microsecond (about 1.6 ns a round on this project's machines:
// docs/io-workloads.md; the load generator times one slice, counter slice_timed_us). Go's
// io.go and tokio's io.rs hold the same function.
inline constexpr std::uint64_t kHogRoundsPerUs = 600;
inline std::uint64_t hog_slice_rounds(std::uint64_t slice_us) { return slice_us * kHogRoundsPerUs; }
// hog_count — the hogs echo-hogs runs for its parameter `hogs` on `processors` processors:
// the parameter, or two per processor when it is 0 (the default), so that every processor
// has a hog to switch to whichever one a handler runs on. Go's io.go and tokio's main.rs
// hold the same rule (their processors: GOMAXPROCS, the runtime's workers).
inline unsigned hog_count(std::uint64_t hogs, unsigned processors) {
    return hogs > 0 ? static_cast<unsigned>(hogs) : 2 * (processors > 0 ? processors : 1);
}
// The line an external server prints when its stdin ends (echo-hogs): {"hogs": K,
// "hog_slices": N}, the hogs it ran and the slices they completed over its life.
inline constexpr const char* kHogSlicesKey = "hog_slices";
// The test-only environment variable that makes every server skip starting its hogs (the
// fixture of tests/io/test_hogs.py: a point whose hogs never ran must fail).
inline constexpr const char* kLazyHogsEnv = "COOPBENCH_TEST_LAZY_HOGS";

inline constexpr std::string_view kHttpRequest = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
inline constexpr std::string_view kHttpResponse =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!";
// A request head longer than this is refused (the server closes the connection): a
// responder's buffer is bounded, as every HTTP server's is.
inline constexpr std::size_t kHttpMaxHead = 8192;

// HttpHeads — the request framing every C++ server uses: feed it the bytes read, and it
// counts the complete heads in them. `scan` remembers where the search for "\r\n\r\n" stops,
// so that a head split over reads is found once and no byte is scanned twice for long.
struct HttpHeads {
    std::size_t scan = 0;  // bytes of buf already known to hold no complete terminator
    // complete — how many heads end within buf[0, len); `used` = the bytes up to the end of
    // the last of them (the caller drops them and calls reset_after(used)).
    std::size_t complete(const char* buf, std::size_t len, std::size_t& used) {
        std::size_t n = 0;
        used = 0;
        std::size_t i = scan;
        while (len >= 4 && i + 4 <= len) {
            const void* hit = std::memchr(buf + i, '\r', len - i);
            if (hit == nullptr) {
                i = len;
                break;
            }
            const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(hit) - buf);
            if (at + 4 > len) {
                i = at;
                break;
            }
            if (std::memcmp(buf + at, "\r\n\r\n", 4) == 0) {
                ++n;
                used = at + 4;
                i = used;
            } else {
                i = at + 1;
            }
        }
        // Resume from i, less what a terminator split at the end may have begun.
        scan = (i > used + 3 ? i - 3 : used) - used;
        return n;
    }
};

}  // namespace coopbench::loadgen
