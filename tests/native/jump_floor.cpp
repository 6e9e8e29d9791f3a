// jump_floor.cpp — what Boost.Context and the processor alone cost on this machine, the
// floors under coop's switch and lock (docs/scheduler-roadmap.md, "Measured"). Not a test.
//
//   build/release/tests/native/native_jump_floor [pairs]     (default 10^7)
//
// (1) jump_fcontext: two contexts bounce control 2 x pairs times (Boost.Context's own jump,
//     the one coop's switch makes; nothing else in the loop): ns per jump.
// (2) a lock and an unlock as two locked compare-exchanges on one word of the own cache
//     (uncontended, dependent): ns per pair, the floor of a futex-word mutex's fast paths.
// Each: the median of 7 runs, with min and max.
#include <boost/context/detail/fcontext.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>
namespace ctx = boost::context::detail;
static void entry(ctx::transfer_t t) {
    for (;;) t = ctx::jump_fcontext(t.fctx, nullptr);
}
int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 10000000;
    std::vector<char> stack(64 * 1024);
    ctx::fcontext_t c = ctx::make_fcontext(stack.data() + stack.size(), stack.size(), entry);
    std::vector<double> jumps, locks;
    for (int rep = 0; rep < 7; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) c = ctx::jump_fcontext(c, nullptr).fctx;
        auto t1 = std::chrono::steady_clock::now();
        jumps.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * n));
        std::atomic<unsigned> w{0};
        t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) {
            unsigned e = 0;
            w.compare_exchange_strong(e, 1, std::memory_order_acquire);
            e = 1;
            w.compare_exchange_strong(e, 0, std::memory_order_release);
        }
        t1 = std::chrono::steady_clock::now();
        locks.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
    }
    std::sort(jumps.begin(), jumps.end());
    std::sort(locks.begin(), locks.end());
    std::printf("jump_fcontext: %.2f ns per jump (median of 7; min %.2f, max %.2f)\n", jumps[3], jumps[0], jumps[6]);
    std::printf("two locked CAS (lock+unlock): %.2f ns per pair (median of 7; min %.2f, max %.2f)\n", locks[3], locks[0], locks[6]);
}
