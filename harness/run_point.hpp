// run_point.hpp — how one fork's runs execute inside the process that measures them: B's
// runtime constructed from the point's options, the workload run in it once per warm-up and
// measured iteration, each run's CPU time and the runtime's counters taken around it. The
// registry (registry.hpp) records run_point<B, W> as the runner of each (backend, workload);
// the driver calls it in the point's child process (runner.cpp), the tests call it directly.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <exception>
#include <map>
#include <new>
#include <stdexcept>
#include <string>

#include "harness/workload.hpp"
#include "runtimes/concept.hpp"

namespace coopbench {

// process_cpu_seconds — user + system CPU time of this process so far (all its threads).
inline double process_cpu_seconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// exception_reason — a failed run's reason from the exception that ended it: the sizes'
// allocation failures say what they mean (a bare "std::bad_alloc" or "vector::reserve" does
// not tell a user that N was too large for the machine).
inline std::string exception_reason(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return std::string("out of memory: the point's sizes need more memory than this process may use (") + e.what() + ")";
    if (dynamic_cast<const std::length_error*>(&e))
        return std::string("the point's sizes are larger than a container can hold (") + e.what() + ")";
    return e.what();
}

// run_point — construct B's runtime from the context's options, run the workload inside
// it ctx.runs times (the fork's warm-up and measured iterations: fresh threads each time,
// one runtime instance, as Boost.Fiber's work_stealing allows one per process), tear the
// runtime down. Each run's outcome goes to ctx.on_run as it ends, with the process's CPU
// time of that run; a failed run ends the series. Exceptions become failed outcomes.
// Returns the last outcome (the failed one, if any).
template <Backend B, class W>
Outcome run_point(const Context& ctx) {
    Outcome out = Outcome::failed("workload did not run");
    int done = 0;
    auto report = [&](int i, Outcome o) {
        out = std::move(o);
        ++done;
        if (ctx.on_run) ctx.on_run(i, out);
    };
    try {
        typename B::Runtime rt(ctx.options);
        rt.run([&] {
            for (int i = 0; i < std::max(1, ctx.runs); ++i) {
                const double cpu0 = process_cpu_seconds();
                // A runtime that counts (e.g. native's scheduler: steals, parks): this run's
                // share of its counters (after - before) joins the run's own counters (the
                // workload's win on a name clash). Counters are readable while running.
                std::map<std::string, double> before;
                if constexpr (requires { rt.counters(); })
                    for (auto& [k, v] : rt.counters()) before[k] = static_cast<double>(v);
                Outcome o;
                try {
                    o = W::template run<B>(ctx);
                } catch (const std::exception& e) {
                    o = Outcome::failed(exception_reason(e));
                }
                if (o.ok && !(o.seconds >= 0)) o = Outcome::failed("workload reported a negative time");
                o.cpu_seconds = process_cpu_seconds() - cpu0;
                if constexpr (requires { rt.counters(); })
                    for (auto& [k, v] : rt.counters()) o.counters.emplace(k, static_cast<double>(v) - before[k]);
                const bool ok = o.ok;
                report(i, std::move(o));
                if (!ok) break;
            }
        });
    } catch (const std::exception& e) {
        report(done, Outcome::failed(std::string("runtime: ") + exception_reason(e)));
    }
    return out;
}

}  // namespace coopbench
