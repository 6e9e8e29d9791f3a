// bench_native.cpp — a benchmark main (not a test): the micro workloads through the
// harness's runner on `native` (and `pthreads` for the lock ratios), printing one line per
// point: backend workload P params value unit (best of R repetitions).
//
//   bench_native [reps]
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/native/native.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "workloads/micro/all.hpp"

namespace {

int g_reps = 3;

template <class B, class W>
double point(unsigned processors, coopbench::Params params) {
    double best = 1e300;
    for (int r = 0; r < g_reps; ++r) {
        coopbench::Context ctx;
        ctx.params = params;
        ctx.options.processors = processors;
        auto out = coopbench::run_point<B, W>(ctx);
        if (!out.ok) {
            std::printf("FAILED %s\n", out.reason.c_str());
            return -1;
        }
        if (out.value < best) best = out.value;
    }
    std::string ps;
    for (auto& [k, v] : params) ps += k + "=" + v + " ";
    std::printf("%-9s %-12s P=%u %-22s %10.1f %s\n", std::string(B::name).c_str(),
                W::info(coopbench::Machine{}).name.c_str(), processors, ps.c_str(), best,
                W::info(coopbench::Machine{}).unit.c_str());
    std::fflush(stdout);
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) g_reps = std::atoi(argv[1]);
    using coopbench::NativeBackend;
    using coopbench::PthreadsBackend;
    for (unsigned p : {1u, 2u}) {
        for (const char* n : {"1000", "100000", "1000000", "10000000"})
            point<NativeBackend, coopbench::Create>(p, {{"N", n}});
        for (const char* t : {"2", "10", "100", "1000", "10000"})
            point<NativeBackend, coopbench::Switch>(p, {{"T", t}, {"K", t[1] && t[2] && t[3] ? "200" : "20000"}});
        point<NativeBackend, coopbench::LockLocal>(p, {{"T", "1"}, {"K", "1000000"}});
        point<PthreadsBackend, coopbench::LockLocal>(p, {{"T", "1"}, {"K", "1000000"}});
        point<NativeBackend, coopbench::LockGlobal>(p, {{"T", "64"}, {"K", "20000"}});
        point<PthreadsBackend, coopbench::LockGlobal>(p, {{"T", "64"}, {"K", "2000"}});
    }
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("peak RSS %.0f MiB\n", ru.ru_maxrss / 1024.0);
}
