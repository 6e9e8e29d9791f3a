// gbench_reporter.hpp — the reporter of Google Benchmark's formats: benchmark.json (what
// Google's compare.py reads) and, with --benchmark_format=console, Google Benchmark's
// console tables on stdout.
#pragma once

#include <benchmark/benchmark.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "harness/reporter.hpp"

namespace coopbench {

// GbenchReporter — Google Benchmark's own reporters fed by our loop: JSONReporter writes
// benchmark.json, ConsoleReporter the table on stdout (--benchmark_format=console only).
// A fork is what Google Benchmark calls a repetition (the unit of replication: Georges et al.,
// "Statistically Rigorous Java Performance Evaluation", OOPSLA 2007, section 4), so that
// Google's compare.py, which groups the entries of one name and runs its U test over them,
// counts forks, not iterations. Each fork writes:
//   - one run named by the point id, run_type "iteration", repetition_index the fork,
//     repetitions the sweep's forks, iterations the fork's timed iterations; real_time (manual
//     time) and cpu_time the medians of its timed iterations' intervals and CPU times (the
//     child process's, all threads), counter `value` their values' median;
//   - one run per run of the workload in the fork (warm-up included), named
//     "<id>/iteration:<i>" (i as results.csv's iteration: 0 the cold one, the first W the
//     warm-up), repetition_index the fork: a name of its own, so compare.py never pools them
//     with the forks (and compares iteration i over forks);
//   - at the point's last fork (repetition r-1): the aggregates over the forks of this file,
//     "<id>_mean", "_median", "_stddev", "_cv" (run_type "aggregate"), as Google Benchmark
//     writes after its repetitions.
// A failed fork is one run with error_occurred (named by the point).
//
// CPU time: a run's own (Outcome::cpu_seconds: getrusage around the run in the child, or an
// external program's reply "cpu_seconds"); when a run has none, the fork's whole-process CPU
// time (wait4's rusage, start-up included) over its number of runs.
class GbenchReporter : public Reporter {
  public:
    // The file is created (or emptied) and checked writable; throws UsageError. `context`
    // becomes Google Benchmark's custom context; `display`: the console tables on stdout
    // (their context block on stderr unless `quiet`); `name_width`: the longest run name.
    GbenchReporter(const std::filesystem::path& file, const nlohmann::json& context, bool display, bool quiet,
                   std::size_t name_width);
    ~GbenchReporter() override;
    GbenchReporter(const GbenchReporter&) = delete;
    GbenchReporter& operator=(const GbenchReporter&) = delete;

    void report(const ForkResult& fork) override;
    void retract_last() override;
    void finish() override;
    // set_repetitions — the sweep's forks per point (each run's `repetitions`; the point's
    // aggregates are written with its fork r-1).
    void set_repetitions(int r) { repetitions_ = r; }
    const std::filesystem::path& file() const { return file_; }

  private:
    static constexpr std::string_view kClosing = "\n  ]\n}\n";  // JSONReporter::Finalize's text

    // append_closed — what JSONReporter wrote since the last call, then the closing text,
    // written over the previous closing text in one call. A write that fails (a full disk)
    // puts the closing text back at offset_ (over bytes the file already holds: no new space)
    // and throws WriteError: the file stays valid JSON with the forks before.
    void append_closed();
    // close_at — the closing text at `at`, the file cut after it.
    bool close_at(off_t at);
    std::int64_t family_of(const std::string& id);

    std::filesystem::path file_;
    int fd_ = -1;
    off_t offset_ = 0;        // where the closing text begins
    off_t last_offset_ = -1;  // where it began before the last fork (retract_last)
    bool display_;
    int repetitions_ = 1;
    std::ostringstream buf_;
    std::ostream discard_{nullptr};  // no buffer: writes are dropped
    benchmark::JSONReporter json_;
    benchmark::ConsoleReporter console_{benchmark::ConsoleReporter::OO_Tabular};
    std::map<std::string, std::int64_t> families_;
    // The forks' (real, cpu, value) of each point so far in this file, for its aggregates;
    // last_point_: the point of the last fork (retract_last takes its entry back).
    struct ForkValues {
        double real, cpu, value;
    };
    std::map<std::string, std::vector<ForkValues>> forks_;
    std::string last_point_;
    bool last_added_ = false;
};

}  // namespace coopbench
