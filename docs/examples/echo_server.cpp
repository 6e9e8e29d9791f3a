// echo_server.cpp — a TCP echo server on coop (coop/net.hpp): one activity per connection,
// each parked in read() while its peer is silent. Usage: coop_echo_server [port] [processors]
#include <coop/coop.hpp>
#include <coop/net.hpp>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const auto port = static_cast<std::uint16_t>(argc > 1 ? std::atoi(argv[1]) : 7000);
    coop::Runtime rt({.processors = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 1});
    rt.run([port] {
        std::error_code ec;
        auto listener = coop::net::Listener::listen(coop::net::Endpoint::any_v4(port), ec);
        if (ec) return (void)std::fprintf(stderr, "listen: %s\n", ec.message().c_str());
        std::printf("echo on port %u\n", static_cast<unsigned>(listener.local_endpoint().port()));
        std::fflush(stdout);
        std::vector<coop::Thread> connections;  // coop::Thread joins when destroyed: keep them
        for (;;) {
            coop::net::Stream s = listener.accept(ec);
            if (ec) {  // EMFILE and the like: say so, back off, go on
                std::fprintf(stderr, "accept: %s\n", ec.message().c_str());
                coop::sleep_for(std::chrono::milliseconds(10));
                continue;
            }
            connections.push_back(coop::spawn([s = std::move(s)]() mutable {
                char buf[16384];
                std::error_code e;
                while (std::size_t n = s.read(buf, sizeof buf, e))
                    if (s.write_all(buf, n, e) < n) break;
            }));
        }
    });
}
