// workload.hpp — what a workload is, for the harness.
//
// A workload is a plain struct with two static members:
//
//   struct Create {
//     static WorkloadInfo info(const Machine& m);          // name, parameters, plans
//     template <coopbench::Backend B>
//     static Outcome run(const Context& ctx);             // runs INSIDE B's runtime
//   };
//
// and one line in its folder's list (workloads/<area>/all.hpp). `run` is called from
// within `B::Runtime::run`, so it may spawn, lock, yield; runtime start-up and shut-down
// are outside of it. It times only what it measures (Stopwatch), checks its own answer,
// and returns Outcome::failed(reason) instead of a time when the answer is wrong.
// Threads it spawns start behind the one start gate (StartGate with spawn_behind or
// spawn_gated, workloads/common.hpp), so a refused spawn fails the point with the
// backend's reason instead of leaving started threads waiting forever.
//
// Optional: `template <Backend B> static constexpr bool supports()` — false leaves the
// pair (B, workload) out of the registry (e.g. spin locks on a cooperative backend).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "runtimes/concept.hpp"

namespace coopbench {

// Params — a point's parameters by name; values are strings (integers or choices).
using Params = std::map<std::string, std::string>;

// ParamSpec — one parameter of a workload. `choices` empty: an integer >= min.
struct ParamSpec {
    std::string name;
    std::string default_value;
    std::string help;
    std::int64_t min = 1;
    std::vector<std::string> choices = {};
};

// Grid — a cross product of parameter values; the key "processors" sweeps the
// runtime's processor count instead of a workload parameter.
using Grid = std::map<std::string, std::vector<std::string>>;

// Machine — what info() may scale plans with.
struct Machine {
    unsigned cores = 1;  // processing units the harness may use
};

// CostOf — the backend a cost estimate is for (WorkloadInfo::cost_on).
struct CostOf {
    std::string backend;     // e.g. "pthreads", "boostfiber/work_stealing"; empty: unknown
    std::string family;      // the part before '/'
    unsigned processors = 0; // the point's P; 0: unknown
};

// WorkloadInfo — a workload's description for `coopbench list`, validation and plans.
struct WorkloadInfo {
    std::string name;         // e.g. "create"
    std::string origin;       // paper and figure/table, e.g. "Negele et al. 2017, Fig. 7"
    std::string description;  // one sentence
    std::string unit;         // unit of the primary value, e.g. "ns/thread", "ms"
    std::vector<ParamSpec> params;
    std::map<std::string, std::vector<Grid>> plans;  // plan name -> grids: every workload has "tiny"
                                                     // (CI: well under a second), "quick", "paper"
    // cost — a point's expected run time in seconds, roughly: only ratios matter, since
    // `coopbench run --shard` balances the shards of a sweep by it (harness/shard.hpp).
    // Empty: every point of the workload counts alike.
    std::function<double(const Params&)> cost = {};
    // cost_on — when set, the expected run time on one backend (seconds, roughly), used
    // instead of `cost` wherever the point's backend is known (default_iterations, --shard,
    // the dry run's estimate; run_cost): for a workload whose cost differs between backends
    // by more than the budget's margin (switch: an OS thread's yield is a kernel context
    // switch, ~20x a user-level one). `cost` stays the estimate without a backend.
    std::function<double(const Params&, const CostOf&)> cost_on = {};
    // iterations — warm-up and measured iterations per fork for a point (JMH's -wi/-i): each
    // iteration is a complete run of `run` inside the fork's one runtime.
    // Empty: the harness's default (harness/plan.cpp, default_iterations: W=1, I=5 within a
    // per-point time budget estimated from `cost_on` or `cost`). --warmup/--iterations override both.
    struct Iterations {
        int warmup = 1;
        int measure = 5;
    };
    std::function<Iterations(const Params&)> iterations = {};
    // io — an I/O workload: a server measured by the harness's load generator in a process of
    // its own (harness/io_point.hpp; an external backend's program serves it through
    // `coopbench-loadgen host`, docs/adding-a-backend.md "Serving an I/O workload").
    bool io = false;
};

// param_number — a numeric parameter of a point as a double (`fallback` when absent or
// not a number); for WorkloadInfo::cost.
inline double param_number(const Params& p, const std::string& name, double fallback = 1) {
    auto it = p.find(name);
    if (it == p.end()) return fallback;
    try {
        return std::stod(it->second);
    } catch (...) {
        return fallback;
    }
}

// Outcome — one measured point.
struct Outcome {
    bool ok = true;
    std::string reason;                      // why it failed (empty when ok)
    double seconds = 0;                      // the measured (manually timed) interval
    double value = 0;                        // the primary value, in WorkloadInfo::unit
    std::map<std::string, double> counters;  // further values (name -> number)
    double cpu_seconds = -1;                 // filled by the harness: the process's CPU time
                                             // during this run (all threads; -1: unknown)

    static Outcome failed(std::string why) {
        Outcome o;
        o.ok = false;
        o.reason = std::move(why);
        return o;
    }
    // measured — a point that took `secs` and whose primary value is `value`.
    static Outcome measured(double secs, double value) {
        Outcome o;
        o.seconds = secs;
        o.value = value;
        return o;
    }
};

// Context — what run() gets: the point's parameters and options.
struct Context {
    Params params;
    RuntimeOptions options;
    bool inject_fault = false;  // tests: perturb the result so the self-check must fail
    // runs — how many times the harness runs the workload inside one runtime instance (the
    // fork's warm-up plus measured iterations); on_run, when set, gets each run's outcome as
    // it ends (iteration 0 first). A failed run ends the series. Workloads read neither.
    int runs = 1;
    std::function<void(int iteration, const Outcome&)> on_run = {};

    std::int64_t i64(const std::string& name) const { return std::stoll(params.at(name)); }
    std::size_t size(const std::string& name) const { return static_cast<std::size_t>(i64(name)); }
    const std::string& str(const std::string& name) const { return params.at(name); }
};

// Stopwatch — wall-clock interval on the steady clock.
class Stopwatch {
  public:
    Stopwatch() : start_(std::chrono::steady_clock::now()) {}
    void restart() { start_ = std::chrono::steady_clock::now(); }
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

  private:
    std::chrono::steady_clock::time_point start_;
};

// pow10_values — "1", "10", ... up to and including `max` (for plans).
inline std::vector<std::string> pow10_values(std::int64_t from, std::int64_t max) {
    std::vector<std::string> v;
    for (std::int64_t x = from; x <= max; x *= 10) v.push_back(std::to_string(x));
    return v;
}

// values — integers as plan strings.
inline std::vector<std::string> values(std::initializer_list<std::int64_t> xs) {
    std::vector<std::string> v;
    for (auto x : xs) v.push_back(std::to_string(x));
    return v;
}

}  // namespace coopbench
