// runner.hpp — measure one point, isolated in a child process (as JMH forks) or inline.
#pragma once

#include <string>
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

// measure — run one fork of `point`: point.runs() runs of the workload in one process. Never throws for a failing point: a crash, a timeout, a
// wrong answer or a refused thread is a failed Measurement with the reason.
Measurement measure(const Point& point, const RunnerOptions& opts);

// outcome_to_json / outcome_from_json — the child-to-parent wire format: one JSON line
// per run, written as each run ends (a child that crashes later keeps the runs before).
std::string outcome_to_json(const Outcome& o);
Outcome outcome_from_json(const std::string& s);

}  // namespace coopbench
