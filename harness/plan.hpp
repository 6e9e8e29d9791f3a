// plan.hpp — from what the user asked (backends, workloads, plan, --param overrides) to
// the list of points to measure, with every bad input rejected by a UsageError.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/registry.hpp"

namespace coopbench {

// UsageError — bad input; the driver prints what() on one line and exits with code 2.
class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// SweepRequest — what the user asked for (all lists may be empty: "all" / "default").
struct SweepRequest {
    std::vector<std::string> backends;   // registered names or families ("boostfiber")
    std::vector<std::string> workloads;  // registered names
    std::string plan;                    // a plan name, or empty: each workload's defaults
    std::map<std::string, std::vector<std::string>> params;  // --param NAME=v1,v2
    std::vector<unsigned> processors;    // --processors; empty: the plan's, else all cores
    std::map<std::string, std::string> backend_options;     // --backend-opt key=value
    std::size_t stack_size = 0;
    bool pin = false;
    int repetitions = 1;   // forks per point (JMH's -f)
    int warmup = -1;       // --warmup: untimed iterations per fork; -1: each point's default
    int iterations = -1;   // --iterations: measured iterations per fork; -1: each point's default
    double budget_seconds = 2;  // the default iterations' time budget per fork (default_iterations)
};

// Point — one (backend, workload, parameters, processors) to measure.
struct Point {
    std::string backend;
    std::string workload;
    Params params;  // complete: defaults filled in
    RuntimeOptions options;
    int warmup = 1;      // untimed iterations per fork (recorded with phase "warmup")
    int iterations = 5;  // measured iterations per fork, after the warm-up

    // runs — warm-up plus measured iterations: the rows one complete fork writes.
    int runs() const { return warmup + iterations; }

    // id — "backend/workload/K=v/.../P=processors", parameters sorted by name.
    std::string id() const;
};

// expand — the points of a request, in measuring order (workload, grid, backend).
std::vector<Point> expand(const SweepRequest& req, const Machine& machine);

// run_cost — one run's expected seconds on `on`'s backend: WorkloadInfo::cost_on when the
// workload has one, else WorkloadInfo::cost; 0 when it has neither (or it is not positive).
double run_cost(const WorkloadInfo& info, const Params& params, const CostOf& on);

// cost_of — the CostOf of a point (its backend, the backend's family, its P).
CostOf cost_of(const Point& point);

// default_iterations — W and I of a point when --warmup/--iterations do not say: the
// workload's own (WorkloadInfo::iterations), else W=1, I=5, reduced so that the fork's
// expected time (run_cost per run, on the point's backend `on`) stays within
// `budget_seconds`: W=1 and fewer timed runs while a warm-up and one timed run fit, else a
// point whose two runs are expected to take longer than the budget runs once (W=0, I=1),
// cold. A fork's timed runs are all warm or it is one cold run, never both.
WorkloadInfo::Iterations default_iterations(const WorkloadInfo& info, const Params& params, double budget_seconds,
                                            const CostOf& on = {});

// plan_names — every plan any workload defines, sorted.
std::vector<std::string> plan_names(const Machine& machine);

// closest — the candidates nearest to `name` by edit distance (for "did you mean").
std::string closest(const std::string& name, const std::vector<std::string>& candidates);

// split_list — "a,b,,c" -> {"a","b","c"}.
std::vector<std::string> split_list(const std::string& s, char sep = ',');

}  // namespace coopbench
