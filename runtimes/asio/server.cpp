// coopbench-asio — the `asio` backend: the I/O workloads' echo server (workloads/io/echo.hpp)
// as a Boost.Asio user writes one, run by the harness as an external program
// (docs/adding-a-backend.md, "Serving an I/O workload").
//
// - An io_context per thread, one thread per processor, connections given to the contexts
//   round-robin: Asio's "io_context-per-CPU" design (Boost.Asio examples, cpp03/http/server2,
//   io_context_pool.hpp: "A pool of io_context objects"; the docs' "Threads and Boost.Asio":
//   one io_context per thread avoids the locking that threads sharing one io_context pay).
//   The acceptor runs on the first context.
// - Completion handlers, a session object kept alive by shared_from_this (Boost.Asio
//   examples, cpp11/echo/async_tcp_echo_server.cpp), reading a whole message with
//   asio::async_read (the composed operation: until the buffer is full) and writing it back
//   with asio::async_write.
// - http-hello (harness/loadgen/protocol.hpp): a session as Asio's HTTP server example writes
//   one (cpp11/http/server/connection.cpp: socket.async_read_some into a fixed buffer, the
//   request parsed from what came, then asio::async_write of the reply; that example closes
//   after one reply, this one keeps the connection and reads again, keep-alive); here every
//   complete request head in the buffer is answered by one async_write of as many
//   responses, the rest kept for the next read.
// - rpc: echo's session, the work (protocol.hpp's rpc_answer) done in the read's completion
//   handler, on the io_context's thread, before the write: what an Asio user does with work
//   this short (no post to a thread_pool).
// - echo-hogs: echo's sessions, and K hogs beside them, given to the contexts round-robin:
//   a hog is a handler that computes one slice (protocol.hpp's rpc_work) and then posts
//   itself again to its io_context (asio::post: "the handler is queued for execution",
//   behind what is ready), which is how an Asio program yields: a handler cannot be
//   suspended, so a long computation is cut into handlers (there is no coroutine here).
//   Between two, the context's thread runs the other ready handlers and its reactor's turn
//   (the epoll reactor is a task in the same queue: asio/detail/impl/scheduler.ipp,
//   do_run_one). The slices they completed are printed when stdin ends (serve.hpp).
// - TCP_NODELAY on every connection (asio::ip::tcp::no_delay).
// - Boost 1.74's Asio (libboost-dev), its default reactor on Linux: epoll.
// The end of stdin stops every context.
// <utility> first: Boost 1.74's asio/awaitable.hpp uses std::exchange without including it,
// which g++ 12 in C++20 mode does not bring in otherwise.
#include <utility>

#include <boost/asio.hpp>
#include <boost/version.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/loadgen/serve.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

std::atomic<bool> corrupt_once{false};

class Session : public std::enable_shared_from_this<Session> {
  public:
    Session(tcp::socket s, std::size_t size, bool rpc) : socket_(std::move(s)), buf_(size), rpc_(rpc) {}
    void start() { read(); }

  private:
    void read() {
        auto self = shared_from_this();
        asio::async_read(socket_, asio::buffer(buf_), [this, self](boost::system::error_code ec, std::size_t) {
            if (ec) return;
            if (rpc_) coopbench::loadgen::rpc_answer(buf_.data());  // rpc: the work, in the handler
            if (corrupt_once.exchange(false)) buf_[0] ^= 0xFF;  // --inject-fault
            write();
        });
    }
    void write() {
        auto self = shared_from_this();
        asio::async_write(socket_, asio::buffer(buf_), [this, self](boost::system::error_code ec, std::size_t) {
            if (!ec) read();
        });
    }
    tcp::socket socket_;
    std::vector<unsigned char> buf_;
    bool rpc_;
};

using coopbench::loadgen::kHttpMaxHead;
using coopbench::loadgen::kHttpResponse;
using coopbench::loadgen::Protocol;

class HttpSession : public std::enable_shared_from_this<HttpSession> {
  public:
    explicit HttpSession(tcp::socket s) : socket_(std::move(s)), buf_(kHttpMaxHead) {}
    void start() { read(); }

  private:
    void read() {
        if (have_ == buf_.size()) return;  // a head longer than kHttpMaxHead: close
        auto self = shared_from_this();
        socket_.async_read_some(asio::buffer(buf_.data() + have_, buf_.size() - have_),
                                [this, self](boost::system::error_code ec, std::size_t n) {
                                    if (ec) return;
                                    have_ += n;
                                    std::size_t used = 0;
                                    const std::size_t heads = heads_.complete(buf_.data(), have_, used);
                                    std::memmove(buf_.data(), buf_.data() + used, have_ - used);
                                    have_ -= used;
                                    if (heads == 0) return read();
                                    out_.clear();
                                    for (std::size_t k = 0; k < heads; ++k) out_.append(kHttpResponse);
                                    if (corrupt_once.exchange(false)) out_[0] ^= static_cast<char>(0xFF);  // --inject-fault
                                    write();
                                });
    }
    void write() {
        auto self = shared_from_this();
        asio::async_write(socket_, asio::buffer(out_), [this, self](boost::system::error_code ec, std::size_t) {
            if (!ec) read();
        });
    }
    tcp::socket socket_;
    std::vector<char> buf_;
    std::size_t have_ = 0;
    coopbench::loadgen::HttpHeads heads_;
    std::string out_;
};

class Server {
  public:
    Server(std::vector<std::unique_ptr<asio::io_context>>& pool, std::size_t size, Protocol proto)
        : pool_(pool),
          acceptor_(*pool[0], tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)),
          size_(size),
          proto_(proto) {
        accept();
    }
    unsigned short port() const { return acceptor_.local_endpoint().port(); }

  private:
    void accept() {
        asio::io_context& next = *pool_[next_++ % pool_.size()];
        acceptor_.async_accept(next, [this](boost::system::error_code ec, tcp::socket s) {
            if (!ec) {
                s.set_option(tcp::no_delay(true));
                if (proto_ == Protocol::http) std::make_shared<HttpSession>(std::move(s))->start();
                else std::make_shared<Session>(std::move(s), size_, proto_ == Protocol::rpc)->start();
            }
            if (ec != asio::error::operation_aborted) accept();
        });
    }
    std::vector<std::unique_ptr<asio::io_context>>& pool_;
    tcp::acceptor acceptor_;
    std::size_t size_;
    Protocol proto_;
    std::size_t next_ = 0;
};

// Hog — a compute-bound handler that re-posts itself after each slice, until stopped; its
// counts are its context thread's own (read after that thread's join).
struct Hog {
    asio::io_context* ctx;
    std::uint64_t rounds;
    const std::atomic<bool>* stop;
    std::uint64_t slices = 0;
    std::uint64_t x = 0;  // the work's result, kept so that the work is not dead code
    void run() {
        // relaxed: the flag carries no data (the counts are read after the join).
        if (stop->load(std::memory_order_relaxed)) return;
        x = coopbench::loadgen::rpc_work(x + 0x9E3779B97F4A7C15ull, rounds);
        ++slices;
        asio::post(*ctx, [this] { run(); });
    }
};

}  // namespace

int main(int argc, char** argv) {
    using namespace coopbench::serve;
    if (argc > 1 && std::string(argv[1]) == "--list") {
        std::cout << list_reply({{"asio", "Boost.Asio " + std::to_string(BOOST_VERSION / 100000) + "." +
                                              std::to_string(BOOST_VERSION / 100 % 1000) + " (libboost-dev)"},
                                 {"server", "io_context per thread (one thread per processor), completion handlers, "
                                            "async_read/async_write of whole messages, TCP_NODELAY; http-hello: async_read_some, "
                                            "every complete request head answered by one async_write; echo-hogs: hogs as "
                                            "handlers that re-post themselves (asio::post) after each slice"}})
                  << std::endl;
        return 0;
    }
    try {
        const Request req = read_request();
        corrupt_once = req.inject_fault;
        std::vector<std::unique_ptr<asio::io_context>> pool;
        for (unsigned i = 0; i < req.processors; ++i) pool.push_back(std::make_unique<asio::io_context>(1));
        std::vector<asio::executor_work_guard<asio::io_context::executor_type>> work;
        for (auto& c : pool) work.push_back(asio::make_work_guard(*c));
        Server server(pool, req.protocol() == Protocol::http ? 0 : req.size(), req.protocol());
        std::vector<std::thread> threads;
        for (auto& c : pool) threads.emplace_back([&c] { c->run(); });
        std::atomic<bool> stop_hogs{false};
        std::vector<std::unique_ptr<Hog>> hogs;
        if (!req.lazy_hogs())
            for (unsigned i = 0; i < req.hogs(); ++i) {
                hogs.push_back(std::make_unique<Hog>(Hog{pool[i % pool.size()].get(), req.slice_rounds(), &stop_hogs}));
                asio::post(*hogs.back()->ctx, [h = hogs.back().get()] { h->run(); });
            }
        say_listening(server.port());
        wait_for_stdin_end();
        stop_hogs.store(true, std::memory_order_relaxed);
        for (auto& c : pool) c->stop();
        for (auto& t : threads) t.join();
        if (req.workload == "echo-hogs") {
            std::uint64_t total = 0;
            for (auto& h : hogs) total += h->slices;
            say_hog_slices(req.hogs(), total);
        }
        return 0;
    } catch (const std::exception& e) {
        reply_failed(e.what());
        return 0;
    }
}
