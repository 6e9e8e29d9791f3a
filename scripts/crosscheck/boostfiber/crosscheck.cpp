// crosscheck-boostfiber — create, switch and one hand-off written as Boost.Fiber's
// documentation and examples write them (fibers joined; this_fiber::yield; an
// unbuffered_channel; work sharing across threads as in examples/work_sharing.cpp, each
// thread installing the algorithm; a pooled_fixedsize_stack as "Stack allocation" offers for
// many fibers), independent of runtimes/boostfiber, for scripts/crosscheck_peers.py.
// Usage: crosscheck-boostfiber P round_robin|shared_work; prints "create NS", "switch NS",
// "handoff NS" (medians of 7 runs; the units of coopbench's create N=10000, switch T=2
// K=20000 and channel T=1 K=20000 C=0).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <boost/fiber/all.hpp>

namespace {

using Clock = std::chrono::steady_clock;
boost::fibers::pooled_fixedsize_stack stacks(32 * 1024);

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
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) fs.emplace_back(std::allocator_arg, stacks, [] {});
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
    boost::fibers::fiber echo(std::allocator_arg, stacks, [&] {
        for (int j = 0; j < k; ++j) {
            int v = 0;
            ping.pop(v);
            pong.push(v + 1);
        }
    });
    for (int j = 0; j < k; ++j) {
        ping.push(j);
        int v = 0;
        pong.pop(v);
    }
    echo.join();
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
    if (algo == "shared_work") {
        for (int i = 1; i < p; ++i)
            helpers.emplace_back([&] {
                boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
                std::unique_lock<boost::fibers::mutex> lk(m);
                cv.wait(lk, [&] { return done; });
            });
        boost::fibers::use_scheduling_algorithm<boost::fibers::algo::shared_work>(true);
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
