// serve.hpp — the server side of the I/O serving protocol (docs/adding-a-backend.md,
// "Serving an I/O workload") for the project's own C++ server programs (runtimes/epoll,
// runtimes/asio): --list, the request on stdin, {"listening": PORT} on stdout, the end of
// stdin as the cue to stop (echo-hogs: then the line {"hogs": K, "hog_slices": N}).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/loadgen/protocol.hpp"

namespace coopbench::serve {

using loadgen::Protocol;

// The workloads a C++ server program serves (workloads/io/): echo's, HTTP's and rpc's two loops
// (churn and echo-idle are echo's: an idle connection is one that never sends; echo-hogs is
// echo's with compute-bound hogs beside it).
inline bool serves(const std::string& workload) {
    return workload == "echo" || workload == "echo-open" || workload == "http-hello" || workload == "http-hello-open" ||
           workload == "rpc" || workload == "rpc-open" || workload == "churn" || workload == "echo-idle" ||
           workload == "echo-hogs";
}

struct Request {
    std::string workload;
    std::map<std::string, std::string> params;
    unsigned processors = 1;
    bool inject_fault = false;
    std::map<std::string, std::string> options;
    Protocol protocol() const {
        if (workload.rfind("http-", 0) == 0) return Protocol::http;
        if (workload.rfind("rpc", 0) == 0) return Protocol::rpc;
        return Protocol::echo;
    }
    std::size_t size() const {
        auto it = params.find("size");
        if (it != params.end()) return static_cast<std::size_t>(std::stoull(it->second));
        return protocol() == Protocol::rpc ? 128 : workload == "churn" ? 64 : 512;
    }
    std::uint64_t param_or(const char* name, std::uint64_t fallback) const {
        auto it = params.find(name);
        return it == params.end() ? fallback : std::stoull(it->second);
    }
    // echo-hogs: the hogs to run (the parameter `hogs`; 0: two per processor) and the rounds
    // of each slice (protocol.hpp); none when the test-only kLazyHogsEnv is set.
    unsigned hogs() const {
        if (workload != "echo-hogs") return 0;
        return loadgen::hog_count(param_or("hogs", 0), processors);
    }
    bool lazy_hogs() const { return std::getenv(loadgen::kLazyHogsEnv) != nullptr; }
    std::uint64_t slice_rounds() const { return loadgen::hog_slice_rounds(param_or("slice_us", 1000)); }
};

// list_reply — the --list answer of a program serving the I/O workloads.
inline std::string list_reply(const nlohmann::json& context) {
    return nlohmann::json{{"protocol", 1},
                          {"iterations", true},
                          {"workloads", {"echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle",
                                         "echo-hogs"}},
                          {"context", context}}
        .dump();
}

// read_request — the request line on stdin.
inline Request read_request() {
    std::string line;
    if (!std::getline(std::cin, line)) throw std::runtime_error("no request on stdin");
    const auto j = nlohmann::json::parse(line);
    Request r;
    r.workload = j.value("workload", "");
    if (j.contains("params"))
        for (auto& [k, v] : j["params"].items())
            if (v.is_string()) r.params[k] = v.get<std::string>();
    if (j.contains("options"))
        for (auto& [k, v] : j["options"].items())
            if (v.is_string()) r.options[k] = v.get<std::string>();
    r.processors = static_cast<unsigned>(std::max<std::int64_t>(1, j.value("processors", 1)));
    r.inject_fault = j.value("inject_fault", false);
    if (!serves(r.workload))
        throw std::runtime_error("this program serves echo, http-hello and rpc (and their -open), churn, echo-idle and echo-hogs, not '" +
                                 r.workload + "'");
    return r;
}

// listen_loopback — a listening socket on 127.0.0.1:port (0: any free port), SO_REUSEPORT
// when asked (one listener per thread on one port: socket(7), "SO_REUSEPORT"); -1 and errno.
inline int listen_loopback(int port, bool reuseport, int flags = 0) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | flags, 0);
    if (fd < 0) return -1;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (reuseport) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 4096) != 0) {
        const int e = errno;
        ::close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

inline int port_of(int fd) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) return 0;
    return ntohs(a.sin_port);
}

// say_listening — the line the load generator waits for.
inline void say_listening(int port) {
    std::cout << nlohmann::json{{"listening", port}}.dump() << std::endl;
}

// reply_failed — a reply instead of listening (the point fails with `why`).
inline void reply_failed(const std::string& why) {
    std::cout << nlohmann::json{{"status", "failed"}, {"reason", why}}.dump() << std::endl;
}

// say_hog_slices — echo-hogs' last line, once stdin has ended: the hogs run, the slices they
// completed over the program's life (the load generator fails the point when it is 0).
inline void say_hog_slices(unsigned hogs, std::uint64_t slices) {
    std::cout << nlohmann::json{{"hogs", hogs}, {loadgen::kHogSlicesKey, slices}}.dump() << std::endl;
}

// wait_for_stdin_end — block until the load generator closes our stdin.
inline void wait_for_stdin_end() {
    char buf[256];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EINTR)) return;
    }
}

}  // namespace coopbench::serve
