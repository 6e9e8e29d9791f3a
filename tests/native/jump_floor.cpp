// jump_floor.cpp — what Boost.Context alone costs on this machine, the floor under coop's
// switch (docs/scheduler-roadmap.md, "Measured"). Not a test. The other floor, a locked RMW on
// a line of the own cache, is native_ws_line_pingpong's `local_cas_ns`.
//
//   build/release/tests/native/native_jump_floor [jumps/2]     (default 10^7)
//
// Two contexts bounce control 2 x n times (Boost.Context's own jump, the one coop's switch
// makes with COOP_CACS=OFF; nothing else in the loop): ns per jump, the median of 7 runs, with
// min and max. Built with COOP_CACS on x86-64, the same for coop's context-aware jump
// (coop/src/switch.hpp `jump`, what coop's switch makes then), on a line of its own.
#include <boost/context/detail/fcontext.hpp>

#include "coop/src/switch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace ctx = boost::context::detail;

namespace {
void entry(ctx::transfer_t t) {
    for (;;) t = ctx::jump_fcontext(t.fctx, nullptr);
}
#if COOP_CACS_ACTIVE
void coop_entry(ctx::transfer_t t) noexcept {
    for (;;) t = coop::internal::jump(t.fctx, nullptr);
}
#endif

// median_ns — ns per jump of `bounce(n)` (2n jumps): the median, min and max of 7 runs.
template <class F>
void report(const char* name, long n, F bounce) {
    std::vector<double> jumps;
    for (int rep = 0; rep < 7; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        bounce(n);
        const auto t1 = std::chrono::steady_clock::now();
        jumps.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * static_cast<double>(n)));
    }
    std::sort(jumps.begin(), jumps.end());
    std::printf("%s %.2f (median of 7; min %.2f, max %.2f)\n", name, jumps[3], jumps[0], jumps[6]);
}
}  // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 10000000;
    std::vector<char> stack(64 * 1024);
    ctx::fcontext_t c = ctx::make_fcontext(stack.data() + stack.size(), stack.size(), entry);
    report("jump_fcontext_ns", n, [&](long k) {
        for (long i = 0; i < k; ++i) c = ctx::jump_fcontext(c, nullptr).fctx;
    });
#if COOP_CACS_ACTIVE
    std::vector<char> coop_stack(64 * 1024);
    void* d = coop::internal::make_context(coop_stack.data() + coop_stack.size(), coop_stack.size(), &coop_entry);
    report("coop_cacs_jump_ns", n, [&](long k) {
        for (long i = 0; i < k; ++i) d = coop::internal::jump(d, nullptr).fctx;
    });
#endif
}
