#include "harness/merge.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <sstream>

#include "harness/plan.hpp"
#include "harness/csv.hpp"
#include "harness/shard.hpp"

namespace coopbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct ShardDir {
    fs::path dir;
    json sweep;    // sweep.json
    json context;  // context.json
    json record;   // shard.json: every point's shard
    Shard shard;
    std::string host;
    std::vector<std::string> header;             // results.csv
    std::vector<std::vector<std::string>> rows;  // complete lines only
    std::map<std::string, int> runs;             // point -> warm-up + measured iterations per fork (points.jsonl)
};

json read_json(const fs::path& p, bool required) {
    std::ifstream in(p);
    if (!in) {
        if (required) throw UsageError("cannot merge: " + p.string() + " not found");
        return json::object();
    }
    try {
        return json::parse(in);
    } catch (const json::exception& e) {
        throw UsageError("cannot merge: " + p.string() + " is not valid JSON (" + e.what() + ")");
    }
}

std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
// context_text — a context value as text, whatever its type (folders before the typed context
// wrote every value as a string), or `otherwise` when it is absent.
std::string context_text(const json& context, const std::string& key, const std::string& otherwise) {
    return context.contains(key) ? text_of(context[key]) : otherwise;
}

// shard_folder_name — "shard-I-of-N" (digits). No std::regex: GCC 12 warns inside it under ASan.
bool shard_folder_name(const std::string& name) {
    auto digits = [&](std::size_t from, std::size_t to) {
        return to > from && std::all_of(name.begin() + static_cast<long>(from), name.begin() + static_cast<long>(to),
                                        [](char c) { return c >= '0' && c <= '9'; });
    };
    if (name.rfind("shard-", 0) != 0) return false;
    auto of = name.find("-of-", 6);
    return of != std::string::npos && digits(6, of) && digits(of + 4, name.size());
}

// inputs_of — the shard folders named by the arguments (a folder of shard-I-of-N folders counts as all of them).
std::vector<fs::path> inputs_of(const std::vector<fs::path>& args) {
    std::vector<fs::path> dirs;
    for (auto& a : args) {
        if (!fs::is_directory(a)) throw UsageError("cannot merge: " + a.string() + " is not a folder");
        if (fs::exists(a / "sweep.json")) {
            dirs.push_back(a);
            continue;
        }
        std::vector<fs::path> inner;
        for (auto& e : fs::directory_iterator(a))
            if (e.is_directory() && shard_folder_name(e.path().filename().string()) &&
                fs::exists(e.path() / "sweep.json"))
                inner.push_back(e.path());
        if (inner.empty())
            throw UsageError("cannot merge: " + a.string() + " is neither a shard folder (no sweep.json) nor holds any shard-I-of-N folder");
        std::sort(inner.begin(), inner.end());
        dirs.insert(dirs.end(), inner.begin(), inner.end());
    }
    return dirs;
}

ShardDir load_shard(const fs::path& dir) {
    ShardDir s;
    s.dir = dir;
    s.sweep = read_json(dir / "sweep.json", true);
    if (!s.sweep.contains("shard"))
        throw UsageError("cannot merge: " + dir.string() +
                         " is a whole sweep, not a shard of one (its sweep.json has no shard; shards come from coopbench run --shard I/N)");
    s.context = read_json(dir / "context.json", true);
    s.record = read_json(dir / "shard.json", true);
    try {
        s.shard = shard_from_record(s.sweep.at("shard"));
        if (s.shard.count < 1 || s.shard.index >= s.shard.count || shard_from_record(s.record).index != s.shard.index ||
            !s.record.at("points").is_object())
            throw UsageError("");
    } catch (const std::exception&) {
        throw UsageError("cannot merge: " + dir.string() + ": sweep.json and shard.json do not describe one shard");
    }
    s.host = context_text(s.context, "host", "unknown");
    std::ifstream in(dir / "results.csv");
    std::string line;
    if (in && std::getline(in, line)) {
        s.header = parse_csv_line(line);
        while (std::getline(in, line)) {
            auto f = parse_csv_line(line);
            if (f.size() == s.header.size()) s.rows.push_back(std::move(f));  // else: a torn last line from a crash
        }
    }
    // The rows a whole fork has (one row per iteration), from points.jsonl.
    std::ifstream jl(dir / "points.jsonl");
    for (std::string l; std::getline(jl, l);) {
        try {
            auto j = json::parse(l);
            if (j.contains("warmup") && j.contains("iterations"))
                s.runs[j.at("point").get<std::string>()] = j.at("warmup").get<int>() + j.at("iterations").get<int>();
        } catch (const std::exception&) {
        }
    }
    return s;
}

// as_set — lists sorted (recursively): `--backends a,b` and `--backends b,a` ask for the same sweep.
json as_set(json v) {
    if (v.is_array()) {
        for (auto& x : v) x = as_set(x);
        std::sort(v.begin(), v.end());
    } else if (v.is_object()) {
        for (auto& [k, x] : v.items()) x = as_set(x);
    }
    return v;
}

// check_same_sweep — a UsageError naming the first difference between two shards' sweeps.
void check_same_sweep(const ShardDir& a, const ShardDir& b) {
    const std::string where = "refusing to merge " + a.dir.string() + " and " + b.dir.string() + ": not the same sweep: ";
    json ra = a.sweep, rb = b.sweep;
    // order_seed: the order each shard ran its own forks in (a seed drawn per run), not what
    // was measured: shards of one sweep differ there.
    for (const char* k : {"shard", "order_seed"}) {
        ra.erase(k);
        rb.erase(k);
    }
    std::set<std::string> keys;
    for (auto& [k, v] : ra.items()) keys.insert(k);
    for (auto& [k, v] : rb.items()) keys.insert(k);
    for (auto& k : keys) {
        json va = ra.contains(k) ? as_set(ra[k]) : json(), vb = rb.contains(k) ? as_set(rb[k]) : json();
        if (va != vb) throw UsageError(where + k + " differs (" + va.dump() + " vs " + vb.dump() + ")");
    }
    if (a.shard.count != b.shard.count)
        throw UsageError(where + "the shard count differs (" + std::to_string(a.shard.count) + " vs " +
                         std::to_string(b.shard.count) + ")");
    const std::string ca = context_text(a.context, "git_commit", "unknown"),
                      cb = context_text(b.context, "git_commit", "unknown");
    if (ca != cb) throw UsageError(where + "the commit differs (" + ca + " vs " + cb + ")");
    const std::string fa = a.record.value("sweep_fingerprint", std::string()),
                      fb = b.record.value("sweep_fingerprint", std::string());
    if (fa != fb)
        throw UsageError(where + "it expanded to different points (" + std::to_string(a.record.value("sweep_points", 0)) +
                         " on " + a.host + " with " + context_text(a.context, "cores_available", "?") + " cores, " +
                         std::to_string(b.record.value("sweep_points", 0)) + " on " + b.host + " with " +
                         context_text(b.context, "cores_available", "?") +
                         " cores): plans scale with the cores, so run every shard on the same kind of machine "
                         "or fix the sizes with --processors and --param");
}


void write_text(const fs::path& p, const std::string& text) {
    std::ofstream f(p);
    f << text;
    if (!f) throw UsageError("cannot write " + p.string());
}

// load_shards — the shard folders of `args`, checked: the same sweep, each shard once.
std::vector<ShardDir> load_shards(const std::vector<fs::path>& args, std::map<unsigned, const ShardDir*>& by_index) {
    if (args.empty()) throw UsageError("coopbench merge OUT DIR...: no shard folders given");
    std::vector<ShardDir> shards;
    for (auto& d : inputs_of(args)) shards.push_back(load_shard(d));
    for (auto& s : shards) {
        check_same_sweep(shards.front(), s);
        auto [it, fresh] = by_index.emplace(s.shard.index, &s);
        if (!fresh)
            throw UsageError("refusing to merge: shard " + s.shard.name() + " is given twice (" + it->second->dir.string() +
                             " and " + s.dir.string() + ")");
    }
    return shards;
}

// merged_columns — every shard's columns, parameters as their union, `host` after `workload`.
std::vector<std::string> merged_columns(const std::vector<ShardDir>& shards) {
    std::set<std::string> params;
    std::vector<std::string> leading, trailing;
    for (auto& s : shards) {
        // Leading columns, param.*, then from `processors` on the trailing ones (a shard
        // without points has no param.* column at all).
        std::vector<std::string> lead, trail;
        bool after = false;
        for (auto& h : s.header) {
            after = after || h == "processors";
            if (h.rfind("param.", 0) == 0) params.insert(h);
            else (after ? trail : lead).push_back(h);
        }
        if (s.header.empty()) continue;
        if (leading.empty() && trailing.empty()) {
            leading = lead;
            trailing = trail;
        }
        std::vector<std::string> mine = lead, known = leading;
        mine.insert(mine.end(), trail.begin(), trail.end());
        known.insert(known.end(), trailing.begin(), trailing.end());
        std::sort(mine.begin(), mine.end());
        std::sort(known.begin(), known.end());
        if (mine != known)
            throw UsageError("cannot merge: " + s.dir.string() + "/results.csv has other columns than " +
                             shards.front().dir.string() + "/results.csv (another version of coopbench)");
    }
    std::vector<std::string> columns;
    for (auto& c : leading) {
        columns.push_back(c);
        if (c == "workload") columns.push_back("host");
    }
    if (std::find(columns.begin(), columns.end(), "host") == columns.end()) columns.push_back("host");
    columns.insert(columns.end(), params.begin(), params.end());
    columns.insert(columns.end(), trailing.begin(), trailing.end());
    return columns;
}

using ForkKey = std::pair<std::string, std::string>;  // point, repetition

// MergedRows — the merged results.csv's lines, and the forks they hold with the shard of each.
struct MergedRows {
    std::vector<std::string> lines;
    std::map<ForkKey, const ShardDir*> forks;
    std::map<ForkKey, std::pair<int, bool>> fork_rows;  // rows, an ended one (failed or refused)
};

// check_owner — a row's point is the sweep's and belongs to the shard whose folder holds it.
void check_owner(const ShardDir& s, const std::string& point, const json& assignment, unsigned count) {
    if (!assignment.contains(point))
        throw UsageError("refusing to merge: " + s.dir.string() + " holds " + point + ", which is not a point of the sweep");
    if (assignment[point].get<unsigned>() != s.shard.index)
        throw UsageError("refusing to merge: " + s.dir.string() + " (shard " + s.shard.name() + ") holds " + point +
                         ", which belongs to shard " + std::to_string(assignment[point].get<unsigned>()) + "/" +
                         std::to_string(count));
}

// merged_rows — each (point, repetition) fork from one shard, the one that owns the point,
// and each of its iterations once, in `columns`.
MergedRows merged_rows(const std::vector<ShardDir>& shards, const std::vector<std::string>& columns, const json& assignment,
                       unsigned count) {
    MergedRows m;
    std::set<std::tuple<std::string, std::string, std::string>> seen_rows;
    for (auto& s : shards) {
        std::map<std::string, std::size_t> col;
        for (std::size_t i = 0; i < s.header.size(); ++i) col[s.header[i]] = i;
        if (!s.rows.empty() && (!col.count("point") || !col.count("repetition")))
            throw UsageError("cannot merge: " + s.dir.string() + "/results.csv has no point or repetition column");
        for (auto& r : s.rows) {
            const std::string& point = r[col["point"]];
            const std::string& rep = r[col["repetition"]];
            check_owner(s, point, assignment, count);
            const std::string iteration = col.count("iteration") ? r[col["iteration"]] : "0";
            auto& fr = m.fork_rows[{point, rep}];
            ++fr.first;
            fr.second |= col.count("status") && (r[col["status"]] == "failed" || r[col["status"]] == "refused");  // the fork ended
            auto [it, fresh] = m.forks.emplace(std::make_pair(point, rep), &s);
            if ((!fresh && it->second != &s) || !seen_rows.emplace(point, rep, iteration).second)
                throw UsageError("refusing to merge: " + point + " repetition " + rep + " is measured twice (in " +
                                 it->second->dir.string() + " and " + s.dir.string() + "); it would count double");
            std::string line;
            for (std::size_t i = 0; i < columns.size(); ++i) {
                std::string v = columns[i] == "host" && !col.count("host") ? s.host
                                : col.count(columns[i])                    ? r[col[columns[i]]]
                                                                           : "";
                line += csv_field(v) + (i + 1 < columns.size() ? "," : "\n");
            }
            m.lines.push_back(std::move(line));
        }
    }
    // A fork counts when it is whole: a failed or refused row, or all its iterations.
    for (auto it = m.forks.begin(); it != m.forks.end();) {
        const auto& fr = m.fork_rows[it->first];
        auto want = it->second->runs.find(it->first.first);
        const bool whole = fr.second || want == it->second->runs.end() || fr.first >= want->second;
        it = whole ? std::next(it) : m.forks.erase(it);
    }
    return m;
}

// what_is_missing — the counts of the merge, and each shard that is missing or incomplete
// with the command that completes it.
MergeResult what_is_missing(const std::vector<ShardDir>& shards, const std::map<unsigned, const ShardDir*>& by_index,
                            const std::map<ForkKey, const ShardDir*>& forks) {
    const ShardDir& first = shards.front();
    const json& assignment = first.record.at("points");
    const int repetitions = first.sweep.value("repetitions", 1);
    const unsigned count = first.shard.count;
    MergeResult res;
    res.shards = shards.size();
    res.rows = forks.size();  // whole forks (each of one or more iteration rows)
    res.expected_rows = assignment.size() * static_cast<std::size_t>(std::max(1, repetitions));
    std::vector<std::size_t> points_of(count, 0);
    for (auto& [point, k] : assignment.items())
        if (k.get<unsigned>() < count) ++points_of[k.get<unsigned>()];
    for (unsigned i = 0; i < count; ++i)
        if (!by_index.count(i))
            res.missing.push_back("shard " + std::to_string(i) + "/" + std::to_string(count) + " is missing (" +
                                  std::to_string(points_of[i]) + " points); run it: " +
                                  rerun_command(context_text(first.context, "coopbench_command", ""), i, count));
    for (auto& s : shards) {
        std::size_t want = points_of[s.shard.index] * static_cast<std::size_t>(std::max(1, repetitions)), have = 0;
        std::string example;
        for (auto& [point, k] : assignment.items()) {
            if (k.get<unsigned>() != s.shard.index) continue;
            for (int r = 0; r < repetitions; ++r) {
                if (forks.count({point, std::to_string(r)})) ++have;
                else if (example.empty()) example = point + " repetition " + std::to_string(r);
            }
        }
        if (have < want)
            res.missing.push_back("shard " + s.shard.name() + " (" + s.dir.string() + ") lacks " + std::to_string(want - have) +
                                  " of " + std::to_string(want) + " measurements (e.g. " + example +
                                  "); finish it: coopbench run --resume " + s.dir.string());
    }
    return res;
}

// write_merged_rows — results.csv and points.jsonl of the merged folder (made here).
void write_merged_rows(const fs::path& out, const std::vector<ShardDir>& shards, const std::vector<std::string>& columns,
                       const std::vector<std::string>& lines) {
    std::error_code ec;
    if (fs::exists(out / "results.csv"))
        throw UsageError("cannot merge into " + out.string() + ": it already holds a results.csv");
    fs::create_directories(out, ec);
    if (ec) throw UsageError("cannot create " + out.string());
    std::string csv;
    for (std::size_t i = 0; i < columns.size(); ++i) csv += columns[i] + (i + 1 < columns.size() ? "," : "\n");
    for (auto& l : lines) csv += l;
    write_text(out / "results.csv", csv);
    std::string jsonl;
    for (auto& s : shards) {
        std::ifstream in(s.dir / "points.jsonl");
        for (std::string line; std::getline(in, line);) {
            json j = json::parse(line, nullptr, false);
            if (j.is_discarded() || !j.is_object()) continue;  // a torn last line
            j["host"] = s.host;
            jsonl += j.dump() + "\n";
        }
    }
    write_text(out / "points.jsonl", jsonl);
}

// agreed_context — what every shard's context.json agrees on; a key they disagree on is
// listed in `differing` (shard "I/N" -> value) and keeps, as its own value, its strings
// joined with ", " (string keys, readable in a caption) or null (others: a number or an
// object cannot be two values).
json agreed_context(const std::vector<ShardDir>& shards, json& differing) {
    json ctx = json::object();
    std::set<std::string> keys;
    for (auto& s : shards)
        for (auto& [k, v] : s.context.items()) keys.insert(k);
    for (auto& k : keys) {
        std::vector<std::string> vals;
        for (auto& s : shards) {
            std::string v = context_text(s.context, k, "");
            if (std::find(vals.begin(), vals.end(), v) == vals.end()) vals.push_back(v);
        }
        if (vals.size() == 1) {
            ctx[k] = shards.front().context.contains(k) ? shards.front().context[k] : json();
            continue;
        }
        std::string joined;
        for (auto& v : vals) joined += (joined.empty() ? "" : ", ") + v;
        json per_shard = json::object();
        bool all_strings = true;
        for (auto& s : shards) {
            const json v = s.context.contains(k) ? s.context[k] : json();
            per_shard[s.shard.name()] = v;
            all_strings = all_strings && v.is_string();
        }
        differing[k] = per_shard;
        ctx[k] = all_strings ? json(joined) : json();
    }
    return ctx;
}

// merged_context — context.json of the merged folder: what the shards agree on (and what
// they do not), then hosts and their machines, typed as schema.json's "context" says.
json merged_context(const std::vector<ShardDir>& shards, MergeResult& res, const std::string& command) {
    const ShardDir& first = shards.front();
    json differing = json::object();
    json ctx = agreed_context(shards, differing);
    json machines = json::object();
    for (auto& s : shards) {
        if (std::find(res.hosts.begin(), res.hosts.end(), s.host) == res.hosts.end()) res.hosts.push_back(s.host);
        machines[s.host] = context_text(s.context, "cpu_model", "?") + ", " +
                           context_text(s.context, "cores_available", "?") + " cores";
    }
    std::set<std::string> machine_kinds;
    for (auto& [h, m] : machines.items()) machine_kinds.insert(m.get<std::string>());
    std::string hosts;
    for (auto& h : res.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    ctx.erase("shard");
    // Keys the merge writes itself are not "differing": each shard's own is in shards/.
    for (const char* k : {"shard", "host", "points", "coopbench_command", "sweep"}) differing.erase(k);
    ctx["host"] = hosts;
    ctx["hosts"] = res.hosts.size();
    ctx["machines"] = machines;
    ctx["mixed_machines"] = machine_kinds.size() > 1;
    ctx["shards"] = first.shard.count;
    ctx["points"] = first.record.at("points").size();
    ctx["sweep_fingerprint"] = first.record.value("sweep_fingerprint", std::string());
    ctx["merged_by"] = command;
    json request = first.sweep;
    request.erase("shard");
    request.erase("order_seed");  // each shard's own (shards/ keeps them)
    ctx["sweep"] = request;  // an object, as a single run writes it
    if (!differing.empty()) ctx["differing"] = differing;
    if (!res.complete()) ctx["merge_incomplete"] = std::to_string(res.expected_rows - res.rows) + " measurements missing";
    return ctx;
}

// write_merged_records — sweep.json (the request, and the shards it was merged from), and
// every shard's own .json files under shards/, so nothing of what they recorded is lost.
void write_merged_records(const fs::path& out, const std::vector<ShardDir>& shards) {
    json sweep = shards.front().sweep;
    sweep.erase("shard");
    sweep.erase("order_seed");  // each shard's own (shards/ keeps them)
    json from = json::array();
    for (auto& s : shards) from.push_back({{"shard", s.shard.name()}, {"dir", s.dir.string()}, {"host", s.host}});
    sweep["merged_from"] = from;
    write_text(out / "sweep.json", sweep.dump(2) + "\n");
    std::error_code ec;
    for (auto& s : shards) {
        fs::path dst = out / "shards" / s.shard.folder();
        fs::create_directories(dst, ec);
        for (auto& e : fs::directory_iterator(s.dir)) {
            const std::string name = e.path().filename().string();
            if (e.is_regular_file() && e.path().extension() == ".json")
                fs::copy_file(e.path(), dst / name, fs::copy_options::overwrite_existing, ec);
        }
    }
}

// write_merged_benchmark — benchmark.json of the merged folder, for Google's tools: every
// shard's benchmark*.json entries in one file, with the first shard's context and the
// hosts that measured them (each shard's own files stay under shards/). A shard file that is
// not valid JSON (an older driver's, torn) is left out and said.
void write_merged_benchmark(const fs::path& out, const std::vector<ShardDir>& shards) {
    json merged;
    json entries = json::array();
    std::string hosts;
    for (auto& s : shards) {
        std::vector<fs::path> files;
        std::error_code ec;
        for (auto& e : fs::directory_iterator(s.dir, ec)) {
            const std::string name = e.path().filename().string();
            if (e.is_regular_file() && name.rfind("benchmark", 0) == 0 && e.path().extension() == ".json")
                files.push_back(e.path());
        }
        std::sort(files.begin(), files.end());
        for (auto& f : files) {
            std::ifstream in(f);
            json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
            if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) {
                std::fprintf(stderr, "coopbench: merge: %s is not Google Benchmark's JSON; left out of benchmark.json\n",
                             f.c_str());
                continue;
            }
            if (merged.is_null()) merged = j;
            for (auto& b : j["benchmarks"]) entries.push_back(b);
        }
        hosts += (hosts.empty() ? "" : ", ") + s.host;
    }
    if (merged.is_null()) return;
    merged["benchmarks"] = entries;
    if (merged.contains("context") && merged["context"].is_object()) merged["context"]["host"] = hosts;
    write_text(out / "benchmark.json", merged.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
}

}  // namespace

MergeResult merge_shards(const fs::path& out, const std::vector<fs::path>& args, const std::string& command) {
    std::map<unsigned, const ShardDir*> by_index;
    const std::vector<ShardDir> shards = load_shards(args, by_index);
    const std::vector<std::string> columns = merged_columns(shards);
    const MergedRows rows = merged_rows(shards, columns, shards.front().record.at("points"), shards.front().shard.count);
    MergeResult res = what_is_missing(shards, by_index, rows.forks);
    write_merged_rows(out, shards, columns, rows.lines);
    const json ctx = merged_context(shards, res, command);
    write_text(out / "context.json", ctx.dump(2) + "\n");
    write_merged_records(out, shards);
    write_merged_benchmark(out, shards);
    return res;
}

int merge_main(const fs::path& out, const std::vector<fs::path>& inputs, const std::string& command) {
    MergeResult r = merge_shards(out, inputs, command);
    std::string hosts;
    for (auto& h : r.hosts) hosts += (hosts.empty() ? "" : ", ") + h;
    std::printf("coopbench merge: %zu shard folder(s) from %zu host(s) (%s): %zu of %zu measurements -> %s\n", r.shards,
                r.hosts.size(), hosts.c_str(), r.rows, r.expected_rows, out.c_str());
    for (auto& m : r.missing) std::fprintf(stderr, "coopbench merge: INCOMPLETE: %s\n", m.c_str());
    return r.complete() ? 0 : 1;
}

std::string rerun_command(const std::string& command, unsigned index, unsigned count) {
    std::istringstream in(command);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] == "--shard" || words[i] == "--shards") {
            ++i;
            continue;
        }
        if (words[i].rfind("--shard=", 0) == 0 || words[i].rfind("--shards=", 0) == 0) continue;
        out += (out.empty() ? "" : " ") + words[i];
    }
    if (out.empty()) out = "coopbench run ...";
    return out + " --shard " + std::to_string(index) + "/" + std::to_string(count);
}

}  // namespace coopbench
