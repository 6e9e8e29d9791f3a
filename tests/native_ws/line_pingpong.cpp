// line_pingpong.cpp — measures this machine's cache-line transfer cost, the calibration of
// the scaling model (docs/scaling-model.md, scripts/scaling_model.py). Not a test.
//
//   build/release/tests/native_ws/native_ws_line_pingpong [batches] > line_cost.txt
//
// Two threads (pinned to different CPUs when there are two) bounce one cache line: thread A
// waits for an even value and writes value+1, B waits for odd and writes value+1. Each
// hand-off moves the line from one core's cache to the other's (a read miss served by the
// other core, then the write). Half a round trip = one line transfer (load miss + store).
// Also measured: an uncontended locked RMW on a line in the own cache (CAS cost), a plain
// store+load, and one push+pop of the ws ring vs one enqueue+dequeue of the global Queue
// on one thread (the local part of a switch that native-ws changes).
// Output: one `key value` line each, in ns (transfer: the 10th percentile over batches of
// 200 round trips, with min and median; local costs: median of 5 runs).
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "coop/queue.hpp"
#include "coop/src/ws/local_queue.hpp"

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

// One-way line transfer: ns per hand-off, per batch of kBatch round trips. On a shared,
// loaded machine a batch in which either thread was descheduled is far slower, so the
// caller takes a low percentile over batches (the cost when both threads run).
constexpr long kBatch = 200;
std::vector<double> pingpong(long batches) {
    Line line;
    std::vector<double> per_batch;
    std::thread b([&] {
        pin(1);
        for (long i = 0; i < batches * kBatch; ++i) {
            const long want = 2 * i + 1;
            while (line.v.load(std::memory_order_acquire) != want) {
            }
            line.v.store(want + 1, std::memory_order_release);
        }
    });
    pin(0);
    for (long batch = 0; batch < batches; ++batch) {
        const auto t0 = Clock::now();
        for (long i = batch * kBatch; i < (batch + 1) * kBatch; ++i) {
            const long want = 2 * i;
            while (line.v.load(std::memory_order_acquire) != want) {
            }
            line.v.store(want + 1, std::memory_order_release);
        }
        // Wait for B's last reply so the batch covers whole round trips.
        while (line.v.load(std::memory_order_acquire) != 2 * (batch + 1) * kBatch) {
        }
        per_batch.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                            (2.0 * kBatch));
    }
    b.join();
    return per_batch;
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

// One push+pop of the work-stealing ring vs one enqueue+dequeue of coop's global Queue, on
// one thread (4 items queued, as in the callgrind programs): the local part of a switch
// that native-ws saves, in ns per pair.
struct Job : coop::QueueItem {};
template <class F>
double time_pairs(long n, F&& pair) {
    const auto t0 = Clock::now();
    for (long i = 0; i < n; ++i) pair();
    return std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / static_cast<double>(n);
}
double ring_pair(long n) {
    static coop::ws::LocalQueue<Job, 256> ring;
    static Job jobs[4];
    auto none = [](Job*) {};
    if (ring.empty_hint())
        for (auto& j : jobs) ring.push(&j, none);
    return time_pairs(n, [&] {
        Job* j = ring.pop();
        ring.push(j, none);
        asm volatile("" : : "r"(j) : "memory");
    });
}
double queue_pair(long n) {
    static coop::Queue<Job>* q = [] {
        coop::bind_processor(0);
        auto* queue = new coop::Queue<Job>;  // lives until exit (nodes stay in use)
        static Job jobs[4];
        for (auto& j : jobs) queue->enqueue(&j);
        return queue;
    }();
    return time_pairs(n, [&] {
        Job* j = q->dequeue();
        q->enqueue(j);
        asm volatile("" : : "r"(j) : "memory");
    });
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
    const long batches = argc > 1 ? std::atol(argv[1]) : 2000;
    if (batches <= 0) {
        std::fprintf(stderr, "usage: native_ws_line_pingpong [batches > 0]\n");
        return 2;
    }
    const std::vector<double> t = pingpong(batches);
    std::vector<double> c, s, rp, qp;
    for (int k = 0; k < 5; ++k) {
        c.push_back(local_cas(1000000));
        s.push_back(local_store_load(1000000));
        rp.push_back(ring_pair(1000000));
        qp.push_back(queue_pair(1000000));
    }
    std::printf("cpus %u\n", std::thread::hardware_concurrency());
    std::printf("batches %ld\n", batches);
    // p10 of batches: the transfer cost when neither thread was preempted (see pingpong).
    std::printf("line_transfer_ns %.2f\n", percentile(t, 0.10));
    std::printf("line_transfer_min_ns %.2f\n", percentile(t, 0.0));
    std::printf("line_transfer_median_ns %.2f\n", percentile(t, 0.5));
    std::printf("local_cas_ns %.2f\n", percentile(c, 0.5));
    std::printf("local_store_load_ns %.2f\n", percentile(s, 0.5));
    // min of 5: the machine is shared; the fastest run is the least disturbed one.
    std::printf("ring_push_pop_ns %.2f\n", percentile(rp, 0.0));
    std::printf("queue_enqueue_dequeue_ns %.2f\n", percentile(qp, 0.0));
    return 0;
}
