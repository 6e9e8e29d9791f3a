// sweep.hpp — the sweep, a plain loop: forks (--repetitions, each a fresh child process) in
// rounds over the points (every point's first fork, then every point's second, ..., in a seeded
// random order inside each round: each point's forks spread over the sweep) x (warm-up + measured iterations inside the fork), each
// fork's rows handed to the reporters (results.csv/points.jsonl, Google Benchmark's
// benchmark.json) when it ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/plan.hpp"
#include "harness/runner.hpp"

namespace coopbench {

struct SweepOptions {
    SweepRequest request;
    RunnerOptions runner;
    std::filesystem::path out;                // the result folder
    bool resume = false;                      // continue the sweep in `out`
    bool quiet = false;                       // no progress on stderr
    std::vector<std::string> benchmark_args;  // --benchmark_* flags, passed to Google Benchmark
    std::string command;                      // the command line, recorded in context.json
    // shard: null, or {index, count, sweep_points, sweep_fingerprint, ...} when this run
    // is one shard of a larger sweep (harness/shard.hpp); kept in sweep.json, named in context.json.
    nlohmann::json shard;
    // order_seed: the seed of the points' order inside each round (fork_order in sweep.cpp), kept in
    // sweep.json so a resume measures what is left in the same order; none (a folder written before it
    // existed): every round in the points' own order, as then.
    std::optional<std::uint32_t> order_seed;
    std::filesystem::path proc_root = "/proc";  // the noise guard's /proc (tests: a fake one)
};

// kExitPointsFailed — run's exit code when the sweep ran to its end and a fork failed (as
// pytest exits 1 when tests failed): every point is measured and the result files are whole
// (figures can be made), but not every point has a value. A caller tells it apart from
// success without reading stderr, and from bad input (2) or an interruption (128+N).
inline constexpr int kExitPointsFailed = 3;

// kExitWriteError — the driver stopped on an error that is neither bad input nor a point's:
// a result file it could not write (a full disk: WriteError, reporter.hpp) or an error of its
// own. One line on stderr; every result file holds whole forks only (a fork is in all of them
// or in none), and --resume continues once the cause is gone.
inline constexpr int kExitWriteError = 4;

// run_sweep — measure every point (skipping those `out` already holds when resuming);
// returns the process exit code: 0 when every fork of the folder succeeded, else
// kExitPointsFailed (after --resume, a fork that failed before the resume counts too: the
// code describes the folder's results).
int run_sweep(const SweepOptions& opts, const std::vector<Point>& points);

// filtered_points — the points --benchmark_filter (in `benchmark_args`) keeps: a POSIX
// extended expression on point ids, as Google Benchmark's; a UsageError when it matches none.
std::vector<Point> filtered_points(const std::vector<Point>& points, const std::vector<std::string>& benchmark_args);

// refuse_folder_with_results — a UsageError when `out` holds a sweep's files: a new sweep
// there would mix two sweeps in one folder (rows measured twice, a context.json and
// sweep.json that describe only the second), so it is refused before anything is touched. A
// shard.json alone (a shard stopped before its sweep began) is no result: the shard may run.
void refuse_folder_with_results(const std::filesystem::path& out);

// never_began — `out` holds only what a new sweep makes before its record (sweep.json) is
// written (results.csv with its header at most, an empty points.jsonl, benchmark.json, the
// lock, a temporary record, a shard's shard.json): a sweep killed at its start, which measured
// nothing and cannot be resumed. A new sweep takes such a folder (refuse_folder_with_results
// lets it; run_sweep clears it).
bool never_began(const std::filesystem::path& out);

// progress_text — the live progress line on a terminal `columns` wide, for fork `rep` (0-based) of
// `repetitions` of point `p`: "[counter] id (repetition r of R)  elapsed, left", at most
// columns - 1 characters. Too long, it leaves out (each step only while still too long) the
// parameters named in `shared` (every point of p's workload has the same value: they tell no
// two apart) as one "..." component of the id, then shortens the repetition to "(r/R)", drops
// `elapsed`, then `left`, then the repetition, and last cuts the line's end, marked "...". The id is never cut inside
// a component before that last step.
std::string progress_text(const std::string& counter, const Point& p, const std::set<std::string>& shared, int rep,
                          int repetitions, const std::string& elapsed, const std::string& left, std::size_t columns);

// request_to_json / request_from_json — sweep.json, so --resume can rebuild the sweep.
std::string request_to_json(const SweepOptions& opts);
SweepOptions request_from_json(const std::string& text);

}  // namespace coopbench
