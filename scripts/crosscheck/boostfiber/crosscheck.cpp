// crosscheck-boostfiber — create, switch and one hand-off written as Boost.Fiber's
// documentation and examples write them (fibers joined; this_fiber::yield; an
// unbuffered_channel; work sharing across threads as in examples/work_sharing.cpp: every
// thread installs shared_work with its default constructor, the helpers wait at a thread
// barrier until all have, then park their main fiber on a condition variable; a
// pooled_fixedsize_stack as "Stack allocation" offers for many fibers, locked when P > 1),
// independent of runtimes/boostfiber, for scripts/crosscheck_peers.py. shared_work() is
// Boost's default, suspend = false: an idle helper polls the shared queue (a CPU each). With
// suspend = true an idle helper sleeps and, in Boost 1.74, nothing wakes it when another
// thread queues a fiber (shared_work::awakened notifies no one): the helpers would never run
// a fiber and "P = 2" would be one thread.
// Usage: crosscheck-boostfiber P round_robin|shared_work; prints "create NS", "switch NS",
// "handoff NS" (medians of 7 runs; the units of coopbench's create N=10000, switch T=2
// K=20000 and channel T=1 K=20000 C=0). The work is the workload's: each created fiber sets its
// own byte (create's self-check), and both ends of the hand-off are fibers that the main fiber
// joins (channel's pair): with the main fiber as one end, it stays on its thread (Boost never
// migrates a main context) and shared_work at P=2 moved only the other end between the threads.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/fiber/all.hpp>

namespace {

using Clock = std::chrono::steady_clock;
boost::fibers::pooled_fixedsize_stack pool(32 * 1024);
std::mutex pool_mutex;
bool pool_shared = false;  // set before any fiber starts: P > 1

// Stacks — the pool, locked when P > 1: boost::pool (under pooled_fixedsize_stack) is not
// thread-safe, and with shared_work a fiber's stack is freed on whichever thread ends it
// (unlocked, P = 2 crashed in ontop_fcontext within a few runs).
struct Stacks {
    boost::context::stack_context allocate() {
        if (!pool_shared) return pool.allocate();
        std::lock_guard<std::mutex> g(pool_mutex);
        return pool.allocate();
    }
    void deallocate(boost::context::stack_context& sctx) noexcept {
        if (!pool_shared) return pool.deallocate(sctx);
        std::lock_guard<std::mutex> g(pool_mutex);
        pool.deallocate(sctx);
    }
} stacks;

double ns_since(Clock::time_point t0) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
}

template <class F>
double median(F f) {
    f();  // warm-up
    std::vector<double> xs;
    for (int i = 0; i < 7; ++i) xs.push_back(f());
    std::sort(xs.begin(), xs.end());
    return xs[xs.size() / 2];
}

double create(int n) {
    std::vector<boost::fibers::fiber> fs;
    fs.reserve(n);
    std::vector<std::uint8_t> ran(n, 0);  // each fiber sets its own byte, as the workload's self-check does
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) fs.emplace_back(std::allocator_arg, stacks, [flag = &ran[i]] { *flag = 1; });
    for (auto& f : fs) f.join();
    return ns_since(t0) / n;
}

double yields(int t, int k) {
    std::vector<boost::fibers::fiber> fs;
    const auto t0 = Clock::now();
    for (int i = 0; i < t; ++i)
        fs.emplace_back(std::allocator_arg, stacks, [k] {
            for (int j = 0; j < k; ++j) boost::this_fiber::yield();
        });
    for (auto& f : fs) f.join();
    return ns_since(t0) / (static_cast<double>(t) * k);
}

double handoff(int k) {
    boost::fibers::unbuffered_channel<int> ping, pong;
    const auto t0 = Clock::now();
    // Both ends are fibers and the main fiber joins them, as in the workload's pair.
    boost::fibers::fiber a(std::allocator_arg, stacks, [&] {
        for (int j = 0; j < k; ++j) {
            ping.push(j);
            int v = 0;
            pong.pop(v);
        }
    });
    boost::fibers::fiber b(std::allocator_arg, stacks, [&] {
        for (int j = 0; j < k; ++j) {
            int v = 0;
            ping.pop(v);
            pong.push(v + 1);
        }
    });
    a.join();
    b.join();
    return ns_since(t0) / (2.0 * k);
}

}  // namespace

int main(int argc, char** argv) {
    const int p = argc == 3 ? std::atoi(argv[1]) : 0;
    const std::string algo = argc == 3 ? argv[2] : "";
    if (p < 1 || (algo != "round_robin" && algo != "shared_work") || (algo == "round_robin" && p != 1)) {
        std::fprintf(stderr, "usage: crosscheck-boostfiber P round_robin|shared_work (round_robin: P=1)\n");
        return 2;
    }
    boost::fibers::mutex m;
    boost::fibers::condition_variable cv;
    bool done = false;
    std::vector<std::thread> helpers;
    std::latch installed(p);  // a thread barrier, as the example's barrier.hpp (outlives the helpers' wait)
    if (algo == "shared_work") {
        pool_shared = p > 1;
        for (int i = 1; i < p; ++i)
            helpers.emplace_back([&] {
                boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
                installed.arrive_and_wait();
                std::unique_lock<boost::fibers::mutex> lk(m);
                cv.wait(lk, [&] { return done; });
            });
        boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>();
        installed.arrive_and_wait();
    }
    std::printf("create %.2f\n", median([] { return create(10000); }));
    std::printf("switch %.2f\n", median([] { return yields(2, 20000); }));
    std::printf("handoff %.2f\n", median([] { return handoff(20000); }));
    std::fflush(stdout);
    {
        std::unique_lock<boost::fibers::mutex> lk(m);
        done = true;
    }
    cv.notify_all();
    for (auto& t : helpers) t.join();
    return 0;
}
