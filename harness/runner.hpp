// runner.hpp — measure one fork of a point, isolated in a child process (as JMH forks) or
// inline, by the runner of its kind of backend (PointRunner).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "harness/plan.hpp"

namespace coopbench {

enum class Isolation { process, none };

// Measurement — one fork: the outcome of each run of the workload in it (warm-up
// iterations first; a failed run, if any, is the last), plus what the parent saw of the
// child process.
struct Measurement {
    std::vector<Outcome> runs;
    double peak_rss_kib = -1;  // from wait4's rusage (-1: not measured)
    double cpu_seconds = -1;   // user + system time of the child (-1: not measured)
};

struct RunnerOptions {
    Isolation isolation = Isolation::process;
    double timeout_seconds = 300;  // per point; 0 = none
    std::size_t memory_limit_bytes = 0;  // RLIMIT_AS of the child; 0 = none
    bool inject_fault = false;
};

// PointRunner — how the points of one kind of backend are measured, chosen once per point
// (runner_for): a C++ backend's point in a forked child process (ForkRunner, runner.cpp) or
// in this process (InlineRunner, --isolation none), an external backend's program exec'd in
// its own process (ProgramRunner, external.cpp). The process machinery they share:
// child_process.hpp.
class PointRunner {
  public:
    virtual ~PointRunner() = default;
    // measure — one fork of `point`: point.runs() runs of the workload in one process. Never
    // throws for a failing point: a crash, a timeout, a wrong answer or a refused thread is a
    // failed Measurement with the reason.
    virtual Measurement measure(const Point& point, const RunnerOptions& opts) const = 0;
};

// runner_for — the runner of `point`: its program's for an external backend (always its own
// process, whatever opts.isolation says), else a forked child, or this process with
// Isolation::none.
const PointRunner& runner_for(const Point& point, const RunnerOptions& opts);

// measure — one fork of `point` by its runner: runner_for(point, opts).measure(point, opts).
Measurement measure(const Point& point, const RunnerOptions& opts);

// refuse_implausible — the first ok run of `m` whose seconds are not finite and above 0, or
// whose value is not finite, or not above 0 (0 allowed for a rate, a `unit` ending in "/s":
// e.g. acquisitions/s when every attempt gave up), becomes a failed run saying so, and the
// runs after it are dropped (a failed run is a fork's last): a folder holds no impossible
// measurement as ok. Every workload's value is a time per operation, a time, or a rate.
void refuse_implausible(Measurement& m, const std::string& unit);

// kRefusalPrefix — how a backend's capacity check (runtimes/concept.hpp: B::capacity) begins
// its reason when a limit of the system says in advance that a run cannot fit: the OS
// threads' os::thread_capacity_problem (more threads than kernel.pid_max leaves room for,
// ...), Boost.Fiber's (fibers beyond half of MemAvailable or vm.max_map_count), native's
// (activity descriptors beyond MemAvailable); an external program's `refused` reply gets it
// too (external.cpp). A capacity check's other reasons (a bad option) stay failures.
inline constexpr std::string_view kRefusalPrefix = "system limit: ";

// is_refusal — a run refused before it started by such a limit: a result (status
// "refused"), not a failure; it does not make the exit code 3.
inline bool is_refusal(const Outcome& o) { return !o.ok && o.reason.rfind(kRefusalPrefix, 0) == 0; }

// outcome_to_json / outcome_from_json — the child-to-parent wire format: one JSON line
// per run, written as each run ends (a child that crashes later keeps the runs before).
std::string outcome_to_json(const Outcome& o);
Outcome outcome_from_json(const std::string& s);

}  // namespace coopbench
