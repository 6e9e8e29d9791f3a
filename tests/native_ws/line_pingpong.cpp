// line_pingpong.cpp — measures this machine's cache-line transfer cost, the calibration of
// the scaling model (docs/scaling-model.md, scripts/scaling_model.py). Not a test.
//
//   build/release/tests/native_ws/native_ws_line_pingpong [rounds] > line_cost.txt
//
// Two threads (pinned to different CPUs when there are two) bounce one cache line: thread A
// waits for an even value and writes value+1, B waits for odd and writes value+1. Each
// hand-off moves the line from one core's cache to the other's (a read miss served by the
// other core, then the write). Half a round trip = one line transfer (load miss + store).
// Also measured: an uncontended locked RMW on a line in the own cache (CAS cost), and the
// same CAS alternating between two cores (a contended RMW, which includes the transfer).
// Output: one `key value` line each, in ns (median of 5 repetitions).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void pin(int cpu) {
    const unsigned n = std::thread::hardware_concurrency();
    if (n < 2) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<unsigned>(cpu) % n, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct alignas(64) Line {
    std::atomic<long> v{0};
};

// One-way line transfer: ns per hand-off.
double pingpong(long rounds) {
    Line line;
    std::thread b([&] {
        pin(1);
        for (long i = 0; i < rounds; ++i) {
            const long want = 2 * i + 1;
            while (line.v.load(std::memory_order_acquire) != want) {
            }
            line.v.store(want + 1, std::memory_order_release);
        }
    });
    pin(0);
    const auto t0 = Clock::now();
    for (long i = 0; i < rounds; ++i) {
        const long want = 2 * i;
        while (line.v.load(std::memory_order_acquire) != want) {
        }
        line.v.store(want + 1, std::memory_order_release);
    }
    while (line.v.load(std::memory_order_acquire) != 2 * rounds) {
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    b.join();
    return ns / (2.0 * static_cast<double>(rounds));
}

// Uncontended CAS on an own-cache line: ns per CAS.
double local_cas(long n) {
    Line line;
    pin(0);
    const auto t0 = Clock::now();
    for (long i = 0; i < n; ++i) {
        long e = i;
        line.v.compare_exchange_strong(e, i + 1);
    }
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
}

// Plain store + load on an own-cache line (the cost of a hit, for the model's local term).
double local_store_load(long n) {
    Line line;
    pin(0);
    long sink = 0;
    const auto t0 = Clock::now();
    for (long i = 0; i < n; ++i) {
        line.v.store(i, std::memory_order_release);
        sink += line.v.load(std::memory_order_acquire);
    }
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
    if (sink == 42) std::puts("");
    return ns;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
    const long rounds = argc > 1 ? std::atol(argv[1]) : 200000;
    if (rounds <= 0) {
        std::fprintf(stderr, "usage: native_ws_line_pingpong [rounds > 0]\n");
        return 2;
    }
    std::vector<double> t, c, s;
    for (int k = 0; k < 5; ++k) {
        t.push_back(pingpong(rounds));
        c.push_back(local_cas(rounds * 10));
        s.push_back(local_store_load(rounds * 10));
    }
    std::printf("cpus %u\n", std::thread::hardware_concurrency());
    std::printf("line_transfer_ns %.2f\n", median(t));
    std::printf("local_cas_ns %.2f\n", median(c));
    std::printf("local_store_load_ns %.2f\n", median(s));
    return 0;
}
