// jump_floor.cpp — what Boost.Context alone costs on this machine, the floor under coop's
// switch (docs/scheduler-roadmap.md, "Measured"). Not a test. The other floor, a locked RMW on
// a line of the own cache, is native_ws_line_pingpong's `local_cas_ns`.
//
//   build/release/tests/native/native_jump_floor [jumps/2]     (default 10^7)
//
// Two contexts bounce control 2 x n times (Boost.Context's own jump, the one coop's switch
// makes; nothing else in the loop): ns per jump, the median of 7 runs, with min and max.
#include <boost/context/detail/fcontext.hpp>

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
}  // namespace

int main(int argc, char** argv) {
    const long n = argc > 1 ? std::atol(argv[1]) : 10000000;
    std::vector<char> stack(64 * 1024);
    ctx::fcontext_t c = ctx::make_fcontext(stack.data() + stack.size(), stack.size(), entry);
    std::vector<double> jumps;
    for (int rep = 0; rep < 7; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) c = ctx::jump_fcontext(c, nullptr).fctx;
        const auto t1 = std::chrono::steady_clock::now();
        jumps.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / (2.0 * static_cast<double>(n)));
    }
    std::sort(jumps.begin(), jumps.end());
    std::printf("jump_fcontext_ns %.2f (median of 7; min %.2f, max %.2f)\n", jumps[3], jumps[0], jumps[6]);
}
