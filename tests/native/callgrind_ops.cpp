// callgrind_ops.cpp — a loop program for counting the instructions of coop's hot operations
// (not a test: the machine has no hardware counters).
//
//   native_callgrind_ops MODE N [P [SCHED [API]]]   MODE: yield | create | create1 |
//                                    create1-warm | lock | lockg
//                                    SCHED: global (default) | work_stealing | parasail
//                                    API: typed (default: coop::Algo<SCHED>'s spawn, join,
//                                    yield, as the harness's backends) | untyped (coop::spawn,
//                                    Thread::join, coop::yield: one branch on the algorithm)
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/release/tests/native/native_callgrind_ops yield 100000
//   callgrind_annotate cg.out
//
// Run it twice with different N and divide the difference of the totals by the difference
// of the operation counts: what remains is the cost of one operation (start-up and
// shut-down cancel out).
//   yield:  2 activities yield N times each (2N switches, as `switch` with T=2;
//           callgrind's difference per N is therefore two switches)
//   create: the main activity spawns N activities with an empty body, then joins them all
//   create1: N times, evict the caches (write one byte of every line of 8 MiB), then spawn
//           one activity and join it (the harness's create N=1: one spawn and one join per
//           timed interval, on caches that the driver's work between intervals cooled).
//           Built with valgrind's callgrind.h, the spawn+join of every iteration after the
//           first two is the only part callgrind collects, so with
//             valgrind --tool=callgrind --collect-atstart=no --cache-sim=yes
//               --D1=32768,8,64 --LL=524288,8,64 native_callgrind_ops create1 102 1 work_stealing
//           (one command)
//           the totals / 100 are one cold spawn+join's instructions and missed lines (the
//           first two iterations map the first stack and slab: not the steady state).
//           Without the header (valgrind not installed when this was built) everything is
//           collected and the totals mean nothing.
//   create1-warm: create1 without the eviction (a warm spawn+join, clock to clock)
//   lock:   one activity locks and unlocks a coop::Mutex N times (uncontended)
//   lockg:  64 activities lock and unlock one coop::Mutex N/64 times each (lock-global)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <coop/coop.hpp>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define COOP_TOOL_TOGGLE_COLLECT() CALLGRIND_TOGGLE_COLLECT
#else
#define COOP_TOOL_TOGGLE_COLLECT() ((void)0)
#endif

namespace {
template <class Api>
int run(const char* mode, long n, unsigned p, coop::Scheduling scheduling) {
    using Thread = typename Api::Thread;
    long sink = 0;
    coop::Options o{.processors = p};
    o.scheduling = scheduling;
    coop::Runtime rt(o);
    double ns = 0;
    rt.run([&] {
        auto t0 = std::chrono::steady_clock::now();
        if (std::strcmp(mode, "yield") == 0) {
            long a = 0, b = 0;
            Thread t1 = Api::spawn([&] { for (long i = 0; i < n; ++i) { Api::yield(); ++a; } });
            Thread t2 = Api::spawn([&] { for (long i = 0; i < n; ++i) { Api::yield(); ++b; } });
            t1.join();
            t2.join();
            sink = a + b;
        } else if (std::strcmp(mode, "create") == 0) {
            std::vector<unsigned char> ran(static_cast<std::size_t>(n));
            std::vector<Thread> ts;
            ts.reserve(static_cast<std::size_t>(n));
            t0 = std::chrono::steady_clock::now();  // as the harness: after the bookkeeping
            for (long i = 0; i < n; ++i) ts.push_back(Api::spawn([f = &ran[static_cast<std::size_t>(i)]] { *f = 1; }));
            for (auto& t : ts) t.join();
            for (auto r : ran) sink += r;
        } else if (std::strcmp(mode, "create1") == 0 || std::strcmp(mode, "create1-warm") == 0) {
            const bool evict = std::strcmp(mode, "create1") == 0;
            std::vector<unsigned char> junk(std::size_t{8} << 20);
            std::vector<Thread> ts;
            ts.reserve(1);
            unsigned char ran = 0;
            ns = 0;
            for (long i = 0; i < n; ++i) {
                if (evict)
                    for (std::size_t j = 0; j < junk.size(); j += 64) ++junk[j];
                const bool collect = i >= 2;
                const auto s0 = std::chrono::steady_clock::now();
                if (collect) COOP_TOOL_TOGGLE_COLLECT();
                ts.push_back(Api::spawn([&ran] { ran = 1; }));
                ts.back().join();
                ts.clear();
                if (collect) COOP_TOOL_TOGGLE_COLLECT();
                if (collect) ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - s0).count();
                sink += ran;
                ran = 0;
            }
            sink += junk[0];
        } else if (std::strcmp(mode, "lockg") == 0) {
            coop::Mutex m;
            std::vector<coop::Thread> ts;
            const long per = n / 64;
            for (int i = 0; i < 64; ++i)
                ts.push_back(coop::spawn([&m, &sink, per] {
                    for (long j = 0; j < per; ++j) {
                        m.lock();
                        ++sink;
                        m.unlock();
                    }
                }));
            for (auto& t : ts) t.join();
        } else {
            coop::Mutex m;
            for (long i = 0; i < n; ++i) {
                m.lock();
                ++sink;
                m.unlock();
            }
        }
        if (std::strncmp(mode, "create1", 7) != 0)  // create1 summed its spawn+joins alone
            ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    });
    // The wall time of the loop (as the harness measures it) per operation, on stderr.
    // yield: per switch (2N of them); create, create1: per create+run+join; lock: per
    // lock+unlock.
    const double ops = std::strncmp(mode, "create1", 7) == 0 ? static_cast<double>(n > 2 ? n - 2 : 1)
                                                         : static_cast<double>(n) * (std::strcmp(mode, "yield") == 0 ? 2 : 1);
    std::fprintf(stderr, "%s N=%ld P=%u: %.1f ns/op\n", mode, n, p, ns / ops);
    std::printf("%ld\n", sink);
    return 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s yield|create|create1|create1-warm|lock|lockg N [P [SCHED [typed|untyped]]]\n", argv[0]);
        return 2;
    }
    const char* mode = argv[1];
    const long n = std::atol(argv[2]);
    const unsigned p = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
    coop::Scheduling k = coop::Scheduling::global;
    if (argc > 4 && std::strcmp(argv[4], "work_stealing") == 0) k = coop::Scheduling::work_stealing;
    if (argc > 4 && std::strcmp(argv[4], "parasail") == 0) k = coop::Scheduling::parasail;
    if (argc > 5 && std::strcmp(argv[5], "untyped") == 0) return run<coop::AnyAlgo>(mode, n, p, k);
    switch (k) {
        case coop::Scheduling::work_stealing: return run<coop::Algo<coop::Scheduling::work_stealing>>(mode, n, p, k);
        case coop::Scheduling::parasail: return run<coop::Algo<coop::Scheduling::parasail>>(mode, n, p, k);
        case coop::Scheduling::global: break;
    }
    return run<coop::Algo<coop::Scheduling::global>>(mode, n, p, k);
}
