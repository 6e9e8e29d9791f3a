// merge.hpp — `coopbench merge OUT DIR...`: the shards of one sweep (harness/shard.hpp), run on
// one or many machines, put back together into one results folder, with nothing lost and
// nothing counted twice.
//
// Each DIR is a shard's folder (it has sweep.json with a "shard" entry) or a folder holding
// shard-I-of-N folders (the --out DIR every shard of a sweep shares). The shards must be the
// same sweep: the same request (plan, backends, workloads, parameters, processors, options,
// repetitions), the same shard count, the same commit, and the same expansion into points
// (sweep_fingerprint: plans scale with the machine's cores, so shards on different kinds of
// machine can expand differently); otherwise merge refuses with a UsageError naming the
// difference. A shard given twice, a measurement in two folders, or one that belongs to
// another shard is refused too.
//
// OUT gets results.csv (with a `host` column: the shard's machine), points.jsonl (with
// "host"), context.json (values equal in every shard kept; differing ones joined, and `hosts`,
// `machines`, `shards`), sweep.json (the request and where the shards came from) and, under
// shards/<folder>/, each shard's own context.json, sweep.json, shard.json and benchmark*.json.
// Missing shards and missing measurements are reported with the command that completes them
// (`coopbench run ... --shard I/N`, `coopbench run --resume DIR`); the merged folder is still
// written, and merge returns 1.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace coopbench {

struct MergeResult {
    std::size_t shards = 0;         // shard folders merged
    std::size_t rows = 0;           // measurements written
    std::size_t expected_rows = 0;  // points x repetitions of the whole sweep
    std::vector<std::string> hosts;
    std::vector<std::string> missing;  // one line per missing shard or incomplete shard (with the fix)
    bool complete() const { return missing.empty(); }
};

// rerun_command — a shard's command line (its context.json's coopbench_command) made into the
// one for shard `index` of `count`: its --shard/--shards removed, --shard index/N added.
std::string rerun_command(const std::string& command, unsigned index, unsigned count);

// merge_shards — write OUT from the shard folders; UsageError when they cannot be merged.
MergeResult merge_shards(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
                         const std::string& command = "coopbench merge");

// merge_main — the `coopbench merge` command: prints the report; 0 complete, 1 incomplete
// (the folder written all the same), and UsageError (exit 2) for a refusal.
int merge_main(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs,
               const std::string& command);

}  // namespace coopbench
