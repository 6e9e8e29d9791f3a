#include "harness/shard.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <numeric>

namespace coopbench {

namespace {

// Every point pays for its child process and the runtime's start-up and shut-down.
constexpr double kPointOverheadSeconds = 0.02;

// parse_count — a non-negative decimal integer (no sign, no spaces), or nothing.
std::optional<unsigned long> parse_number(const std::string& s) {
    if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::nullopt;
    return std::stoul(s);
}

std::string getenv_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

}  // namespace

std::string Shard::name() const { return std::to_string(index) + "/" + std::to_string(count); }

std::string Shard::folder() const { return "shard-" + std::to_string(index) + "-of-" + std::to_string(count); }

Shard parse_shard(const std::string& text) {
    auto slash = text.find('/');
    auto i = parse_number(text.substr(0, slash));
    auto n = slash == std::string::npos ? std::nullopt : parse_number(text.substr(slash + 1));
    if (!i || !n) throw UsageError("--shard takes I/N (shard I of N, 0 <= I < N), got '" + text + "'");
    if (*n < 1) throw UsageError("--shard " + text + ": N must be >= 1");
    if (*i >= *n) throw UsageError("--shard " + text + ": I must be below N (shards are numbered 0.." +
                                   std::to_string(*n - 1) + ")");
    return Shard{static_cast<unsigned>(*i), static_cast<unsigned>(*n)};
}

ShardEnvironment ShardEnvironment::from_process() {
    return {getenv_or_empty("SLURM_ARRAY_TASK_ID"), getenv_or_empty("SLURM_ARRAY_TASK_COUNT"),
            getenv_or_empty("JOB_COMPLETION_INDEX")};
}

std::optional<Shard> shard_from_environment(const ShardEnvironment& env, unsigned given_count) {
    std::string var, id_text, count_text;
    if (!env.slurm_array_task_id.empty()) {
        var = "SLURM_ARRAY_TASK_ID";
        id_text = env.slurm_array_task_id;
        count_text = env.slurm_array_task_count;
    } else if (!env.job_completion_index.empty()) {
        var = "JOB_COMPLETION_INDEX";
        id_text = env.job_completion_index;
        if (given_count == 0)
            throw UsageError("JOB_COMPLETION_INDEX=" + id_text + " is set but the shard count is not: give --shards N");
    } else {
        if (given_count) throw UsageError("--shards " + std::to_string(given_count) +
                                          " needs SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX (or use --shard I/N)");
        return std::nullopt;
    }
    auto id = parse_number(id_text);
    if (!id) throw UsageError(var + "='" + id_text + "' is not a shard index (a non-negative integer)");
    unsigned long count = given_count;
    if (!count) {
        auto c = parse_number(count_text);
        if (!c || *c < 1)
            throw UsageError("SLURM_ARRAY_TASK_COUNT='" + count_text + "' is not a shard count (give --shards N)");
        count = *c;
    }
    if (*id >= count)
        throw UsageError(var + "=" + id_text + " is not below the shard count " + std::to_string(count) +
                         " (number the array 0.." + std::to_string(count - 1) +
                         ", e.g. sbatch --array=0-" + std::to_string(count - 1) +
                         "; when resubmitting part of an array, give --shards N)");
    return Shard{static_cast<unsigned>(*id), static_cast<unsigned>(count)};
}

namespace {
// costs_us — each point's cost in microseconds; one WorkloadInfo per workload (info() builds every plan).
std::vector<std::uint64_t> costs_us(const std::vector<Point>& points, int repetitions, const Machine& machine) {
    std::map<std::string, std::optional<WorkloadInfo>> infos;
    const auto& workloads = Registry::instance().workloads();
    for (auto& p : points)
        if (!infos.count(p.workload)) {
            auto it = workloads.find(p.workload);
            infos[p.workload] = it == workloads.end() ? std::nullopt : std::optional(it->second.info(machine));
        }
    std::vector<std::uint64_t> cost(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
        double seconds = kPointOverheadSeconds;
        // One run's estimate on the point's own backend (run_cost, WorkloadInfo::
        // cost_on, harness/plan.hpp): pthreads' switch points cost ~20x native's; times the
        // fork's runs (warm-up and timed).
        if (auto& info = infos[points[i].workload])
            seconds += run_cost(*info, points[i].params, cost_of(points[i])) * std::max(1, points[i].runs());
        // Whole microseconds: every host then partitions with the same integer arithmetic.
        cost[i] = static_cast<std::uint64_t>(std::llround(std::min(seconds * 1e6 * std::max(1, repetitions), 1e18)));
    }
    return cost;
}
}  // namespace

std::uint64_t point_cost(const Point& p, int repetitions, const Machine& machine) {
    return costs_us({p}, repetitions, machine).front();
}

std::vector<unsigned> assign_shards(const std::vector<Point>& points, unsigned count, int repetitions,
                                    const Machine& machine) {
    if (count < 1) throw UsageError("the shard count must be >= 1");
    const auto cost = costs_us(points, repetitions, machine);
    std::vector<std::string> ids(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) ids[i] = points[i].id();
    std::vector<std::size_t> order(points.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        if (cost[a] != cost[b]) return cost[a] > cost[b];
        return ids[a] < ids[b];
    });
    std::vector<std::uint64_t> load(count, 0);
    std::vector<unsigned> shard(points.size(), 0);
    for (std::size_t i : order) {
        // The least loaded shard; min_element keeps the first (lowest index) of equal loads.
        auto s = static_cast<unsigned>(std::min_element(load.begin(), load.end()) - load.begin());
        shard[i] = s;
        load[s] += cost[i];
    }
    return shard;
}

std::string sweep_fingerprint(const std::vector<Point>& points) {
    std::vector<std::string> ids;
    for (auto& p : points) ids.push_back(p.id());
    std::sort(ids.begin(), ids.end());
    std::uint64_t h = 1469598103934665603ULL;  // FNV-1a, 64 bits
    for (auto& id : ids) {
        for (unsigned char c : id + "\n") {
            h ^= c;
            h *= 1099511628211ULL;
        }
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return buf;
}

std::vector<Point> select_shard(const std::vector<Point>& points, const Shard& s, int repetitions,
                                const Machine& machine, nlohmann::json& record) {
    const auto shard = assign_shards(points, s.count, repetitions, machine);
    const auto cost = costs_us(points, repetitions, machine);
    std::vector<Point> mine;
    nlohmann::json assignment = nlohmann::json::object();
    std::vector<std::uint64_t> load(s.count, 0);
    for (std::size_t i = 0; i < points.size(); ++i) {
        assignment[points[i].id()] = shard[i];
        load[shard[i]] += cost[i];
        if (shard[i] == s.index) mine.push_back(points[i]);
    }
    record = {{"index", s.index},
              {"count", s.count},
              {"sweep_points", points.size()},
              {"sweep_fingerprint", sweep_fingerprint(points)},
              {"cost_us", load},
              {"points", assignment}};
    return mine;
}

Shard shard_from_record(const nlohmann::json& record) {
    return Shard{record.at("index").get<unsigned>(), record.at("count").get<unsigned>()};
}

std::optional<Shard> choose_shard(const SweepOptions& o, const std::string& flag, unsigned shards,
                                  const ShardEnvironment& env) {
    if (o.resume) {
        if (!flag.empty() || shards)
            throw UsageError("--shard/--shards cannot be combined with --resume: the shard is in the folder's sweep.json");
        if (o.shard.is_null()) return std::nullopt;
        try {
            Shard s = shard_from_record(o.shard);
            if (s.count < 1 || s.index >= s.count) throw UsageError("");
            return s;
        } catch (const std::exception&) {
            throw UsageError("cannot resume " + o.out.string() + ": its sweep.json has a broken \"shard\" entry");
        }
    }
    if (!flag.empty()) {
        if (shards) throw UsageError("give either --shard I/N or --shards N (with the index from the environment)");
        return parse_shard(flag);
    }
    return shard_from_environment(env, shards);
}

std::filesystem::path shard_out(const std::filesystem::path& out, bool out_given, const Shard& s) {
    if (out_given) return out / s.folder();
    return out.parent_path() / (out.filename().string() + "-" + s.folder());
}

std::vector<Point> apply_shard(SweepOptions& o, const Shard& s, const std::vector<Point>& all, const Machine& m,
                               bool dry_run) {
    nlohmann::json record;
    auto mine = select_shard(all, s, o.request.repetitions, m, record);
    if (o.resume) {
        const std::string was = o.shard.value("sweep_fingerprint", std::string());
        if (was != record.at("sweep_fingerprint").get<std::string>())
            throw UsageError("cannot resume shard " + s.name() + " in " + o.out.string() + ": the sweep now expands to " +
                             std::to_string(all.size()) + " points (fingerprint " +
                             record.at("sweep_fingerprint").get<std::string>() + "), it began with " +
                             std::to_string(o.shard.value("sweep_points", 0)) + " (fingerprint " + was +
                             "); run it with the same commit on the same kind of machine");
    }
    o.shard = {{"index", s.index},
               {"count", s.count},
               {"sweep_points", all.size()},
               {"sweep_fingerprint", record.at("sweep_fingerprint")},
               {"cost_us", record.at("cost_us")}};  // every shard's expected cost, for --dry-run and the curious
    if (!dry_run) {
        std::error_code ec;
        std::filesystem::create_directories(o.out, ec);
        std::ofstream f(o.out / "shard.json");
        f << record.dump(1) << "\n";
        if (ec || !f) throw UsageError("cannot write " + (o.out / "shard.json").string());
    }
    return mine;
}

}  // namespace coopbench
