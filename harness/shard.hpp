// shard.hpp — one sweep divided among N machines (`coopbench run --shard I/N`, Slurm job
// arrays, Kubernetes Indexed Jobs): a deterministic partition of the sweep's points, balanced
// by their expected cost, so that N shards together run every point exactly once.
//
// The partition depends only on the SET of points (their ids and costs), never on the order
// of flags or of the expansion: points are sorted by (cost descending, id ascending) and each
// goes, in that order, to the shard with the least cost so far (greedy longest processing
// time first; ties go to the lowest shard index). Costs are rounded to whole microseconds, so
// every host computes the same partition with integer arithmetic. A point's cost is its
// workload's estimate of one run on the point's backend (run_cost: WorkloadInfo::cost_on or
// cost, seconds) times the fork's runs (W + I), plus a fixed per-fork overhead (the child
// process, the runtime's start), times the repetitions, which all stay on the point's shard.
//
// Each shard records, in sweep.json's "shard" object, its index and count, a fingerprint of
// the whole sweep's point ids and the shard of every point of the sweep: `coopbench merge`
// (harness/merge.hpp) checks the shards against it and names what is missing.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/plan.hpp"
#include "harness/sweep.hpp"

namespace coopbench {

struct Shard {
    unsigned index = 0;  // 0 .. count-1
    unsigned count = 1;
    std::string name() const;    // "1/3"
    std::string folder() const;  // "shard-1-of-3"
};

// parse_shard — "I/N" with 0 <= I < N; a UsageError otherwise.
Shard parse_shard(const std::string& text);

// Environment — the variables shard_from_environment reads (a struct so tests need not
// touch the process environment). Empty: unset.
struct ShardEnvironment {
    std::string slurm_array_task_id, slurm_array_task_count, job_completion_index;
    static ShardEnvironment from_process();
};

// shard_from_environment — the shard of a Slurm array task (SLURM_ARRAY_TASK_ID of
// SLURM_ARRAY_TASK_COUNT, the array numbered 0..N-1) or of a Kubernetes Indexed Job
// (JOB_COMPLETION_INDEX), or nothing when neither is set. `given_count` (--shards N, 0: none)
// overrides SLURM_ARRAY_TASK_COUNT (needed to rerun part of an array, e.g. `sbatch --array=2`)
// and is required with JOB_COMPLETION_INDEX. Bad values: a UsageError.
std::optional<Shard> shard_from_environment(const ShardEnvironment& env, unsigned given_count);

// point_cost — a point's expected cost in microseconds (see above).
std::uint64_t point_cost(const Point& p, int repetitions, const Machine& machine);

// assign_shards — the shard of each point (same order as `points`).
std::vector<unsigned> assign_shards(const std::vector<Point>& points, unsigned count, int repetitions,
                                    const Machine& machine);

// sweep_fingerprint — 16 hex digits of a hash of the sorted point ids (order-independent).
std::string sweep_fingerprint(const std::vector<Point>& points);

// select_shard — the points of shard `s` (in their original order) and the record that goes
// into sweep.json's "shard" object: {index, count, sweep_points, sweep_fingerprint,
// points: {id: shard}, cost_us: [cost of each shard]}.
std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& s, int repetitions,
                                const Machine& machine, nlohmann::json& record);

// shard_from_record — the Shard of a sweep.json "shard" object.
Shard shard_from_record(const nlohmann::json& record);

// --- the hooks of `coopbench run` (cli.cpp) ---

// choose_shard — before expand(): the shard of a resumed folder (its sweep.json), else
// --shard I/N (`flag`), else the environment with --shards N (`shards`, 0: none) as its count;
// nothing: the whole sweep. --shard with --resume is a UsageError.
std::optional<Shard> choose_shard(const SweepOptions& o, const std::string& flag, unsigned shards,
                                  const ShardEnvironment& env);

// shard_out — a shard's folder: DIR/shard-I-of-N under --out DIR (`out_given`: the folder
// every shard of the sweep shares), else the default folder's name + "-shard-I-of-N".
std::filesystem::path shard_out(const std::filesystem::path& out, bool out_given, const Shard& s);

// apply_shard — after expand(): this shard's points. Records the shard in o.shard ({index,
// count, sweep_points, sweep_fingerprint, cost_us: every shard's expected cost}) and, unless
// `dry_run`, writes OUT/shard.json (the full record with every point's shard). Resuming, it
// refuses a sweep that no longer expands to the points it started with (another commit or
// machine), since the partition would differ.
std::vector<Point> apply_shard(SweepOptions& o, const Shard& s, const std::vector<Point>& all, const Machine& m,
                               bool dry_run);

}  // namespace coopbench
