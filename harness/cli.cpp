#include "harness/cli.hpp"

#include "build_facts.hpp"  // generated: harness/CMakeLists.txt

#include <CLI/CLI.hpp>
#include <regex.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "harness/csv.hpp"  // clean_text
#include "harness/external.hpp"
#include "harness/machine.hpp"
#include "harness/merge.hpp"
#include "harness/numbers.hpp"
#include "harness/plan.hpp"
#include "harness/reporter.hpp"  // WriteError
#include "harness/shard.hpp"
#include "harness/sweep.hpp"

namespace coopbench {

namespace {

// relative_origin — a registering file's path relative to the source tree.
// A path __FILE__ gave relative to the build folder (ninja compiles build/release's sources
// as ../../runtimes/...) loses its leading ../ parts: the rest is relative to the source tree.
std::string relative_origin(const std::string& origin) {
    const std::string root = std::string(COOPBENCH_SOURCE_DIR) + "/";
    if (origin.rfind(root, 0) == 0) return origin.substr(root.size());
    std::string o = origin;
    while (o.rfind("../", 0) == 0) o.erase(0, 3);
    return o;
}

std::string utc_stamp() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
    return buf;
}

// print_list_json — `coopbench list --json`: backends, workloads and the left-out manifests.
void print_list_json(const Machine& m) {
    const auto& reg = Registry::instance();
    nlohmann::json j;
    for (auto& b : reg.backends()) {
        nlohmann::json jb = {{"name", b.name},       {"family", b.family},         {"description", b.description},
                             {"origin", relative_origin(b.origin)},   {"preemptive", b.preemptive}, {"fixed_options", b.fixed},
                             {"external", external_backend(b.name) != nullptr}};
        for (auto& o : b.options)
            jb["options"].push_back({{"name", o.name}, {"default", o.default_value}, {"help", o.help},
                                     {"choices", o.choices}});
        for (auto& [w, fn] : b.runners) jb["workloads"].push_back(w);
        j["backends"].push_back(jb);
    }
    for (auto& [n, w] : reg.workloads()) {
        auto info = w.info(m);
        nlohmann::json jw = {{"name", info.name}, {"origin", relative_origin(info.origin)}, {"description", info.description},
                             {"unit", info.unit}};
        for (auto& p : info.params)
            jw["params"].push_back({{"name", p.name}, {"default", p.default_value}, {"help", p.help},
                                    {"min", p.min}, {"choices", p.choices}});
        for (auto& [plan, g] : info.plans) jw["plans"].push_back(plan);
        j["workloads"].push_back(jw);
    }
    // The build's external backends whose manifest could not be used (their program not
    // built, most often): names, manifests and reasons.
    j["left_out"] = nlohmann::json::array();
    for (auto& l : left_out_backends())
        j["left_out"].push_back({{"name", l.name}, {"manifest", l.manifest}, {"reason", l.reason}});
    std::cout << j.dump(2) << "\n";
}

// print_list — `coopbench list`: every backend (its origin, options, and for a program the
// workloads it implements), the left-out manifests, every workload, the plans.
void print_list(bool as_json) {
    const Machine m = detect_machine();
    const auto& reg = Registry::instance();
    if (as_json) return print_list_json(m);
    std::cout << "Backends (" << reg.backends().size() << "):\n";
    for (auto& b : reg.backends()) {
        std::cout << "  " << b.name << "  — " << b.description << "\n";
        std::cout << "      from " << relative_origin(b.origin)
                  << (external_backend(b.name) ? "; an external program" : b.preemptive ? "; preemptive OS threads" : "; cooperative")
                  << "\n";
        if (const ExternalBackend* x = external_backend(b.name)) {
            // A program implements only the workloads it lists: say which, and which of its
            // names this harness does not know.
            std::string runs, unknown;
            for (auto& [w, fn] : b.runners) runs += (runs.empty() ? "" : ", ") + w;
            for (auto& w : x->listed)
                if (!b.runners.count(w)) unknown += (unknown.empty() ? "" : ", ") + w;
            std::cout << "      implements: " << (runs.empty() ? std::string("(none of the harness's workloads)") : runs)
                      << (unknown.empty() ? "" : "; unknown to this harness, left out: " + unknown) << "\n";
        }
        for (auto& [k, v] : b.fixed) std::cout << "      fixed option " << k << "=" << v << "\n";
        for (auto& o : b.options) {
            std::cout << "      --backend-opt " << o.name << "=" << (o.default_value.empty() ? "..." : o.default_value)
                      << "  " << o.help;
            if (!o.choices.empty()) {
                std::cout << " (";
                for (std::size_t i = 0; i < o.choices.size(); ++i) std::cout << (i ? "|" : "") << o.choices[i];
                std::cout << ")";
            }
            std::cout << "\n";
        }
    }
    if (!left_out_backends().empty()) {
        std::cout << "\nLeft out (" << left_out_backends().size() << "): the build's external backends that cannot run\n";
        for (auto& l : left_out_backends()) std::cout << "  " << l.name << "  — " << l.reason << "\n      manifest " << l.manifest << "\n";
    }
    std::cout << "\nWorkloads (" << reg.workloads().size() << "):\n";
    for (auto& [n, w] : reg.workloads()) {
        auto info = w.info(m);
        std::cout << "  " << info.name << "  — " << info.description << " [" << info.unit << "]\n";
        std::cout << "      " << relative_origin(info.origin) << "\n";
        for (auto& p : info.params) {
            std::cout << "      --param " << p.name << "=" << p.default_value << "  " << p.help;
            if (!p.choices.empty()) {
                std::cout << " (";
                for (std::size_t i = 0; i < p.choices.size(); ++i) std::cout << (i ? "|" : "") << p.choices[i];
                std::cout << ")";
            } else {
                std::cout << " (integer >= " << p.min << ")";
            }
            std::cout << "\n";
        }
        std::cout << "      plans:";
        for (auto& [plan, g] : info.plans) std::cout << " " << plan;
        std::cout << "\n";
    }
    std::cout << "\nPlans:";
    for (auto& p : plan_names(m)) std::cout << " " << p;
    std::cout << "\nThis machine: " << m.cores << " processors available.\n";
}

// benchmark_flag — one --benchmark_* flag, checked: the repetitions of
// --benchmark_repetitions=N (returned), the others kept in `args` for the reporters. Anything
// else, or a bad value, is a UsageError (one line, exit 2).
std::optional<int> benchmark_flag(const std::string& flag, std::vector<std::string>& args) {
    const auto eq = flag.find('=');
    const std::string name = flag.substr(0, eq), value = eq == std::string::npos ? "" : flag.substr(eq + 1);
    if (eq == std::string::npos || value.empty()) throw UsageError(name + " takes a value: " + name + "=...");
    if (name == "--benchmark_repetitions") {
        std::string why;
        auto v = parse_integer(value, why);
        if (!v) throw UsageError(name + ": '" + value + "' " + why);
        if (*v < 1 || *v > 1000000) throw UsageError(name + " must be from 1 to 1000000, got " + value);
        return static_cast<int>(*v);
    }
    if (name == "--benchmark_filter") {
        // POSIX extended, as Google Benchmark's own filter (and std::regex trips GCC 12's
        // -Wmaybe-uninitialized under ASan).
        regex_t re;
        const int rc = regcomp(&re, value.c_str(), REG_EXTENDED | REG_NOSUB);
        if (rc != 0) {
            char msg[128];
            regerror(rc, &re, msg, sizeof msg);
            throw UsageError(name + ": '" + value + "' is not a regular expression (" + msg + ")");
        }
        regfree(&re);
    } else if (name == "--benchmark_out_format") {
        if (value != "json") throw UsageError(name + " takes json (the only file format coopbench writes), got '" + value + "'");
    } else if (name == "--benchmark_format") {
        if (value != "json" && value != "console")
            throw UsageError(name + " takes json or console, got '" + value + "'");
    } else if (name != "--benchmark_out") {
        throw UsageError("unsupported flag " + name +
                         " (coopbench takes --benchmark_filter, --benchmark_repetitions, --benchmark_out, "
                         "--benchmark_out_format, --benchmark_format)");
    }
    args.push_back(flag);
    return std::nullopt;
}

// The largest stack one thread may ask for, and the largest memory limit: beyond them a value
// is a typo (18446744073709551615 is -1 read as unsigned), and a backend handed such a stack
// would crash in mmap arithmetic instead of failing with a reason.
constexpr std::int64_t kMaxStackSize = std::int64_t{1} << 30;      // bytes
constexpr std::int64_t kMaxMemoryLimitMb = std::int64_t{1} << 30;  // MiB (1 PiB)
constexpr double kMaxSeconds = 365.0 * 24 * 3600;
constexpr double kMinTimeoutSeconds = 1;  // --timeout's smallest value but 0 (none)

// size_flag — a size typed on the command line (parse_integer's forms), from 0 to `most`.
std::size_t size_flag(const std::string& flag, const std::string& text, std::int64_t most, const std::string& unit) {
    std::string why;
    auto v = parse_integer(text, why);
    if (!v || *v < 0 || *v > most)
        throw UsageError(flag + " must be from 0 to " + std::to_string(most) + " " + unit + ", got " + text);
    return static_cast<std::size_t>(*v);
}

// check_seconds — a duration in seconds: finite, not negative, at most a year; 0 only where
// it means "none".
void check_seconds(const std::string& flag, double v, bool zero_ok) {
    if (!std::isfinite(v) || v < 0 || (!zero_ok && v == 0) || v > kMaxSeconds) {
        std::ostringstream got;
        got << v;
        throw UsageError(flag + " must be " + (zero_ok ? "from 0" : "above 0") + " to " +
                         std::to_string(static_cast<long>(kMaxSeconds)) + " seconds, got " + got.str());
    }
}

// resume_options — the sweep recorded in DIR/sweep.json, to be continued; a UsageError (one
// line) when it is missing, unreadable, or the folder is a merge of shards (a merge is not
// a sweep this process can continue: its shards are, each in its own folder).
SweepOptions resume_options(const std::string& dir, const std::vector<std::string>& benchmark_args) {
    const auto path = std::filesystem::path(dir) / "sweep.json";
    std::ifstream in(path);
    if (!in)
        throw UsageError("cannot resume: " + path.string() + " not found" +
                         (never_began(dir) ? std::string(": the sweep was stopped before it began (nothing was measured): "
                                                         "run it again with --out " + dir)
                                           : std::string()));
    std::stringstream ss;
    ss << in.rdbuf();
    const auto j = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains("merged_from")) {
        // The shards merged (their folders), and those an incomplete merge never had: each
        // needs its own run (--shard I/N, into shard-I-of-N beside the others), and the new
        // merge must name its folder too.
        std::string shards, first, never;
        std::set<unsigned> merged;
        unsigned count = 0;
        if (j["merged_from"].is_array())
            for (auto& m : j["merged_from"]) {
                if (!m.is_object()) continue;
                if (m.contains("dir") && m["dir"].is_string()) {
                    shards += (shards.empty() ? "" : " ") + m["dir"].get<std::string>();
                    if (first.empty()) first = m["dir"].get<std::string>();
                }
                unsigned i = 0, n = 0;
                if (m.contains("shard") && m["shard"].is_string() &&
                    std::sscanf(m["shard"].get<std::string>().c_str(), "%u/%u", &i, &n) == 2 && i < n) {
                    merged.insert(i);
                    count = n;
                }
            }
        if (count > 0 && !first.empty()) {
            std::ifstream cin(std::filesystem::path(dir) / "context.json");
            const auto ctx = nlohmann::json::parse(cin, nullptr, /*allow_exceptions=*/false);
            const std::string command = ctx.is_object() ? ctx.value("coopbench_command", std::string()) : std::string();
            const auto parent = std::filesystem::path(first).parent_path();
            for (unsigned i = 0; i < count; ++i) {
                if (merged.count(i)) continue;
                const std::string folder =
                    (parent / ("shard-" + std::to_string(i) + "-of-" + std::to_string(count))).string();
                never += (never.empty() ? "" : "; ") + rerun_command(command, i, count);
                shards += " " + folder;
            }
        }
        throw UsageError("cannot resume " + dir + ": it is a merge of shard folders; finish each shard (coopbench run --resume " +
                         (first.empty() ? std::string("SHARD_DIR") : first) + ", ...)" +
                         (never.empty() ? std::string() : ", run each shard it lacks (" + never + ")") +
                         " and merge them again into a new folder: coopbench merge NEW_DIR " +
                         (shards.empty() ? std::string("SHARD_DIR...") : shards));
    }
    SweepOptions o;
    try {
        o = request_from_json(ss.str());
    } catch (const std::exception& e) {
        std::string what = e.what();
        if (what.size() > 200) what = what.substr(0, 200) + "...";
        throw UsageError("cannot resume: " + path.string() + " is not a sweep's record (" + what + ")");
    }
    // The filter the sweep was made with (sweep.json) holds unless the resume gives its own:
    // the folder's results.csv has the columns of the points it kept.
    const bool filter_given = std::any_of(benchmark_args.begin(), benchmark_args.end(), [](const std::string& a) {
        return a.rfind("--benchmark_filter=", 0) == 0;
    });
    std::vector<std::string> recorded = o.benchmark_args;
    o.benchmark_args = benchmark_args;
    if (!filter_given)
        for (auto& a : recorded) o.benchmark_args.push_back(a);
    o.resume = true;
    o.out = dir;
    return o;
}

// check_path — a path the user gave (--out, --resume, merge's folders): each of its names at
// most NAME_MAX (255) bytes, which the system refuses otherwise (ENAMETOOLONG) at whatever call
// comes first; said here once, naming the flag.
void check_path(const std::string& what, const std::string& path) {
    for (auto& part : std::filesystem::path(path))
        if (part.native().size() > NAME_MAX)
            throw UsageError(what + ": the name '" + cut_text(clean_text(part.native()), 40) + "' is " +
                             std::to_string(part.native().size()) + " bytes, longer than the " + std::to_string(NAME_MAX) +
                             " a name in a path may have");
}

// list_flag — a flag's comma-separated list; an empty item ("1,,2", "native,", ",") is bad
// input, not an item to drop: the user meant something there.
std::vector<std::string> list_flag(const std::string& flag, const std::string& text) {
    auto items = split_list(text);
    if (items.empty() || std::count(text.begin(), text.end(), ',') + 1 != static_cast<std::ptrdiff_t>(items.size()))
        throw UsageError(flag + " takes a comma-separated list without empty items, got '" + text + "'");
    return items;
}

// refuse_empty_values — a flag that takes a path, a name, a list or a number, given an empty
// value (--resume "", --out "", --shard '', -r ''), or --shards 0: bad input, where it would
// otherwise fall back to the default (a new sweep into results/, an unsharded run) or be read
// as 0.
void refuse_empty_values(CLI::App& run, unsigned shard_count) {
    for (const char* f : {"--backends", "--workloads", "--plan", "--processors", "--out", "--resume", "--isolation",
                          "--stack-size", "--memory-limit-mb", "--proc-root", "--shard", "--shards", "--repetitions",
                          "--warmup", "--iterations", "--budget", "--timeout"})
        if (run.count(f) > 0 && run.get_option(f)->as<std::string>().empty())
            throw UsageError(std::string(f) + " takes a value, got ''");
    if (run.count("--shards") > 0 && shard_count == 0) throw UsageError("--shards takes a shard count of 1 or more, got 0");
}

void print_points(const std::vector<Point>& points) {
    for (auto& p : points) {
        std::cout << p.id();
        for (auto& [k, v] : p.options.extra) std::cout << " " << k << "=" << v;
        std::cout << "\n";
    }
    std::cout << points.size() << " points\n";
}

// RunFlags — what `coopbench run` was given, as CLI11 parsed it (checked by new_sweep).
struct RunFlags {
    std::string backends, workloads, plan, processors, out, resume, isolation = "process";
    std::vector<std::string> params, backend_opts;
    std::string repetitions = "1", warmup, iterations;  // counts_from_flags checks them
    double timeout = 600, budget = 2;
    std::string proc_root = "/proc";
    std::string stack_size_text, memory_limit_text;
    bool pin = false, quiet = false, dry_run = false, inject_fault = false;
    std::string shard_flag;
    unsigned shard_count = 0;
    std::string order_seed;  // the points' order in each round (SweepOptions::order_seed); default: random
};

// add_run_flags — the flags of `coopbench run`. A flag that takes one value may be given once:
// CLI11 keeps the last (TakeLast) and given_twice says so in our words after the parse.
void add_run_flags(CLI::App& run, RunFlags& f) {
    run.add_option("--backends,-b", f.backends, "comma-separated backends or families (default: all)");
    run.add_option("--workloads,-w", f.workloads, "comma-separated workloads (default: all of the plan)");
    run.add_option("--plan", f.plan, "a named sweep plan: tiny, quick, paper, ... (see `coopbench list`)");
    run.add_option("--param,-p", f.params, "NAME=v1,v2,... sweep a parameter (repeatable; 1e6 and 10^6 accepted)");
    run.add_option("--processors,-P", f.processors, "comma-separated processor counts (default: the plan's, else one P: every core this process may use)");
    run.add_option("--repetitions,-r", f.repetitions, "repetitions of every point (default 1)");
    run.add_option("--warmup,-W", f.warmup,
                   "untimed warm-up iterations in each fork (default: each point's, 1 for micro points; "
                   "iteration 0 is the cold one)");
    run.add_option("--iterations,-I", f.iterations,
                   "measured iterations in each fork, after the warm-up (default: each point's, 5 for micro points)");
    run.add_option("--budget", f.budget,
                   "seconds one fork of a point should take when --warmup/--iterations do not say: fewer default "
                   "iterations for a point whose expected run time exceeds it (default 2)");
    run.add_option("--out,-o", f.out, "result folder (default results/<host>-<UTC timestamp>)");
    run.add_option("--resume", f.resume, "continue the interrupted sweep in this result folder");
    run.add_option("--order-seed", f.order_seed,
                   "seed of the points' random order inside each round, kept in sweep.json (default: a random one)");
    run.add_option("--isolation", f.isolation, "process: each point in a child process (default); none: in-process")
        ->check(CLI::IsMember({"process", "none"}));
    run.add_option("--timeout", f.timeout, "seconds a point may take before it is killed and recorded as failed (0: none)");
    run.add_option("--stack-size", f.stack_size_text,
                   "bytes per thread stack, up to 1 GiB (default: each backend's; below a backend's minimum: refused with it)");
    run.add_option("--memory-limit-mb", f.memory_limit_text,
                   "address-space limit of each point's process in MiB, 1 to 2^30 (default, or 0: none)");
    run.add_option("--backend-opt", f.backend_opts, "KEY=VALUE backend option (repeatable; see `coopbench list`)");
    run.add_flag("--pin", f.pin, "pin threads / workers to the chosen cores");
    run.add_flag("--quiet,-q", f.quiet, "no progress on stderr");
    run.add_flag("--dry-run", f.dry_run, "print the points and exit");
    run.add_flag("--inject-fault", f.inject_fault, "tests: perturb every result so the self-checks must fail")->group("");
    run.add_option("--proc-root", f.proc_root, "tests: the noise guard's /proc (loadavg, stat)")->group("");
    // Sharding: one part of a sweep per run, for a cluster's job array (harness/shard.hpp).
    run.add_option("--shard", f.shard_flag,
                   "I/N: run shard I (0..N-1) of the sweep only, into OUT/shard-I-of-N (default: from "
                   "SLURM_ARRAY_TASK_ID/SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX)");
    run.add_option("--shards", f.shard_count, "N: the shard count, with the index from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX");
    run.allow_extras();
    for (CLI::Option* o : run.get_options())
        if (o->get_expected_max() == 1 && o->get_name() != "--param" && o->get_name() != "--backend-opt")
            o->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

// given_twice — a one-value flag typed more than once (-P 1 -P 2): bad input, one line (CLI11
// says "At Most 1 required but received 2"); a list is one value with commas.
void given_twice(const CLI::App& run) {
    for (const CLI::Option* o : run.get_options())
        if (o->get_expected_max() == 1 && o->get_name() != "--param" && o->get_name() != "--backend-opt" &&
            o->count() > 1)
            throw UsageError(o->get_name() + " is given " + std::to_string(o->count()) +
                             " times; give it once (a list in one value: 1,2,4)");
}

// count_flag — a whole number typed for `flag` (parse_integer's forms: 5, 1e3, 10^3), from
// `least` to `most`; the range in one line otherwise (CLI11's "Could not convert" gave none).
int count_flag(const std::string& flag, const std::string& text, int least, int most) {
    std::string why;
    const auto v = parse_integer(text, why);
    if (!v || *v < least || *v > most)
        throw UsageError(flag + " must be from " + std::to_string(least) + " to " + std::to_string(most) + ", got " + text);
    return static_cast<int>(*v);
}

// unknown_command — a first word that is no command ("bench"): say so (exit 2), instead of
// CLI11's "A subcommand is required" or "not expected".
bool unknown_command(int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') return false;
    const std::string word = argv[1];
    const std::vector<std::string> commands = {"list", "run", "merge"};
    if (std::find(commands.begin(), commands.end(), word) != commands.end()) return false;
    std::fprintf(stderr, "coopbench: unknown command '%s'%s; the commands are list, run and merge (see coopbench --help)\n",
                 word.c_str(), closest(word, commands).c_str());
    return true;
}

// command_line — argv as one line, recorded where a folder says how it was made.
std::string command_line(int argc, char** argv) {
    std::string command = "coopbench";
    for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
    return command;
}

// resumed_sweep — --resume continues the sweep sweep.json records: a flag that would change
// it (or where it goes) cannot apply, and is refused rather than ignored.
SweepOptions resumed_sweep(const CLI::App& run, const RunFlags& f, bool benchmark_repetitions,
                           const std::vector<std::string>& benchmark_args) {
    std::vector<std::string> given;
    for (const char* flag : {"--backends", "--workloads", "--plan", "--param", "--processors", "--repetitions",
                             "--warmup", "--iterations", "--budget", "--out", "--isolation", "--timeout",
                             "--stack-size", "--memory-limit-mb", "--backend-opt", "--pin", "--shard", "--shards",
                             "--order-seed", "--inject-fault"})
        if (run.count(flag) > 0) given.push_back(flag);
    if (benchmark_repetitions) given.push_back("--benchmark_repetitions");
    if (!given.empty()) {
        std::string list;
        for (auto& g : given) list += (list.empty() ? "" : ", ") + g;
        throw UsageError("--resume continues the sweep recorded in " + f.resume + "/sweep.json and takes no " + list +
                         " (a new sweep: coopbench run ... --out ANOTHER_FOLDER)");
    }
    return resume_options(f.resume, benchmark_args);
}

// requested_points — what to sweep: backends, workloads, plan, parameters, processors and
// backend options, each checked.
SweepRequest requested_points(const CLI::App& run, const RunFlags& f) {
    SweepRequest r;
    if (run.count("--backends") > 0) r.backends = list_flag("--backends", f.backends);
    if (run.count("--workloads") > 0) r.workloads = list_flag("--workloads", f.workloads);
    r.plan = f.plan;
    for (auto& p : f.params) {
        auto eq = p.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError("--param takes NAME=v1,v2,... , got '" + p + "'");
        const std::string name = p.substr(0, eq);
        // Given twice, one would be dropped unseen (the last won): refused, as a one-value flag is.
        if (r.params.count(name))
            throw UsageError("--param " + name + " is given 2 times; give its values in one list: --param " + name +
                             "=v1,v2,...");
        r.params[name] = list_flag("--param " + name, p.substr(eq + 1));
    }
    for (auto& p : run.count("--processors") > 0 ? list_flag("--processors", f.processors) : std::vector<std::string>{}) {
        std::string why;
        auto v = parse_integer(p, why);
        if (!v || *v < 1 || *v > 65536) throw UsageError("--processors takes integers from 1 to 65536, got '" + p + "'");
        r.processors.push_back(static_cast<unsigned>(*v));
    }
    for (auto& kv : f.backend_opts) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw UsageError("--backend-opt takes KEY=VALUE, got '" + kv + "'");
        if (r.backend_options.count(kv.substr(0, eq)))
            throw UsageError("--backend-opt " + kv.substr(0, eq) + " is given 2 times (a point takes one value of it; "
                             "sweep another value into another --out)");
        r.backend_options[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    r.stack_size = f.stack_size_text.empty() ? 0 : size_flag("--stack-size", f.stack_size_text, kMaxStackSize, "bytes (1 GiB)");
    r.pin = f.pin;
    return r;
}

// new_sweep — a new sweep's options: the points, how many runs of each, and how each fork
// runs (isolation, timeout, memory limit) and where its results go.
SweepOptions new_sweep(const CLI::App& run, const RunFlags& f, std::optional<int> benchmark_repetitions,
                       const std::vector<std::string>& benchmark_args) {
    SweepOptions o;
    o.benchmark_args = benchmark_args;
    o.request = requested_points(run, f);
    SweepRequest& r = o.request;
    r.repetitions = count_flag("--repetitions", f.repetitions, 1, 1000000);
    // Not given: -1, each point's own (SweepRequest).
    r.warmup = run.count("--warmup") > 0 ? count_flag("--warmup", f.warmup, 0, 1000000) : -1;
    r.iterations = run.count("--iterations") > 0 ? count_flag("--iterations", f.iterations, 1, 1000000) : -1;
    if (run.count("--repetitions") > 0 && benchmark_repetitions && *benchmark_repetitions != r.repetitions)
        throw UsageError("--repetitions " + std::to_string(r.repetitions) + " and --benchmark_repetitions=" +
                         std::to_string(*benchmark_repetitions) + " disagree: give one of them");
    if (benchmark_repetitions) r.repetitions = *benchmark_repetitions;
    check_seconds("--budget", f.budget, /*zero_ok=*/false);
    check_seconds("--timeout", f.timeout, /*zero_ok=*/true);
    // A fork needs a process started (a program's runtime loaded) before it measures: below a
    // second every point would time out, which is no measurement.
    if (f.timeout > 0 && f.timeout < kMinTimeoutSeconds) {
        std::ostringstream got;
        got << f.timeout;
        throw UsageError("--timeout must be 0 (none) or at least " + std::to_string(static_cast<int>(kMinTimeoutSeconds)) +
                         " s, got " + got.str());
    }
    r.budget_seconds = f.budget;
    o.runner.isolation = f.isolation == "none" ? Isolation::none : Isolation::process;
    o.runner.timeout_seconds = f.timeout;
    o.runner.memory_limit_bytes = f.memory_limit_text.empty()
                                      ? 0
                                      : size_flag("--memory-limit-mb", f.memory_limit_text, kMaxMemoryLimitMb, "MiB") << 20;
    o.out = f.out.empty() ? std::filesystem::path("results") / (hostname() + "-" + utc_stamp()) : std::filesystem::path(f.out);
    o.order_seed = run.count("--order-seed") > 0
                       ? static_cast<std::uint32_t>(count_flag("--order-seed", f.order_seed, 0, 2147483647))
                       : static_cast<std::uint32_t>(std::random_device{}() & 0x7fffffffU);
    return o;
}

// print_dry_run — the points, and a shard's expected share of the sweep's time.
void print_dry_run(const SweepOptions& o, const std::vector<Point>& points, const std::optional<Shard>& shard) {
    print_points(points);
    if (!shard) {
        // The cost model's estimate (harness/shard.hpp, point_cost), as a shard's dry run gives it.
        const Machine machine = detect_machine();
        double total = 0;
        for (auto& p : points) total += static_cast<double>(point_cost(p, o.request.repetitions, machine));
        // On stderr: stdout stays the points and their count, which scripts read.
        std::fprintf(stderr, "coopbench: expected ~%.0f s for these points (the cost model's estimate; a busy machine takes longer)\n",
                     total / 1e6);
        return;
    }
    auto cost = o.shard.at("cost_us").get<std::vector<double>>();
    double total = 0;
    for (double c : cost) total += c;
    auto [lo, hi] = std::minmax_element(cost.begin(), cost.end());
    std::printf("shard %s of %zu points: expected ~%.0f s of the sweep's ~%.0f s (shards %.0f..%.0f s)\n",
                shard->name().c_str(), o.shard.at("sweep_points").get<std::size_t>(), cost[shard->index] / 1e6,
                total / 1e6, *lo / 1e6, *hi / 1e6);
}

// run_command — `coopbench run`: the sweep's options, its points (a shard's), then the sweep
// (or, with --dry-run, its points).
int run_command(CLI::App& run, const RunFlags& f, int argc, char** argv) {
    given_twice(run);
    refuse_empty_values(run, f.shard_count);
    std::vector<std::string> benchmark_args;
    std::optional<int> benchmark_repetitions;
    for (auto& extra : run.remaining()) {
        if (extra.rfind("--benchmark_", 0) != 0) throw UsageError("unknown argument '" + extra + "' (see coopbench run --help)");
        if (auto reps = benchmark_flag(extra, benchmark_args)) benchmark_repetitions = reps;
    }
    if (!f.out.empty()) check_path("--out", f.out);
    if (!f.resume.empty()) check_path("--resume", f.resume);
    SweepOptions o = !f.resume.empty() ? resumed_sweep(run, f, benchmark_repetitions.has_value(), benchmark_args)
                                       : new_sweep(run, f, benchmark_repetitions, benchmark_args);
    o.quiet = f.quiet;
    o.runner.inject_fault = f.inject_fault;
    o.proc_root = f.proc_root;
    o.command = command_line(argc, argv);
    // --benchmark_filter keeps the same points in a dry run as in the run (a filter that
    // matches none is refused in both).
    const auto shard = choose_shard(o, f.shard_flag, f.shard_count, ShardEnvironment::from_process());
    if (shard && !o.resume) o.out = shard_out(o.out, !f.out.empty(), *shard);
    if (!o.resume && !f.dry_run) refuse_folder_with_results(o.out);  // before a shard writes shard.json there
    auto points = expand(o.request, detect_machine());
    if (shard) points = apply_shard(o, *shard, points, detect_machine(), f.dry_run);
    if (f.dry_run) {
        print_dry_run(o, filtered_points(points, o.benchmark_args), shard);
        return 0;
    }
    return run_sweep(o, points);
}

}  // namespace

int cli_main(int argc, char** argv) {
    CLI::App app{"coopbench — run the lock-free scheduler paper's workloads on pluggable threading backends"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "coopbench 0.1");
    auto* list = app.add_subcommand("list", "list backends (with options and origin), workloads (with parameters) and plans");
    bool list_json = false;
    list->add_flag("--json", list_json, "print as JSON");
    auto* run = app.add_subcommand("run", "run a sweep: every selected backend x workload x parameter point");
    RunFlags flags;
    add_run_flags(*run, flags);
    auto* merge = app.add_subcommand("merge", "merge the shard folders of one sweep (coopbench run --shard) into OUT");
    std::string merge_out;
    std::vector<std::string> merge_in;
    merge->add_option("OUT", merge_out, "the merged results folder (new)")->required();
    merge->add_option("DIR", merge_in, "shard folders, or folders holding shard-I-of-N folders")->required();

    if (unknown_command(argc, argv)) return 2;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ConversionError& e) {
        // CLI11 says "Could not convert: --shards = -1": name the form the flag takes too.
        const std::string what = e.what(), lead = "Could not convert: ";
        const auto eq = what.find(" = ");
        if (what.rfind(lead, 0) == 0 && eq != std::string::npos) {
            const std::string name = what.substr(lead.size(), eq - lead.size());
            for (CLI::App* a : {&app, run, merge, list})
                if (const CLI::Option* opt = a->get_option_no_throw(name)) {
                    std::fprintf(stderr, "coopbench: %s takes %s (%s), got '%s'\n", name.c_str(),
                                 opt->get_type_name() == "FLOAT"                                  ? "a number"
                                 : opt->get_type_name() == "UINT" || opt->get_type_name() == "INT" ? "a whole number"
                                                                                                  : opt->get_type_name().c_str(),
                                 opt->get_description().c_str(), clean_text(what.substr(eq + 3)).c_str());
                    return 2;
                }
        }
        std::fprintf(stderr, "coopbench: %s (see coopbench --help)\n", clean_text(what).c_str());
        return 2;
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "coopbench: %s (see coopbench --help)\n", e.what());
        return 2;
    }
    try {
        load_external_backends();  // backends that are programs (harness/external.hpp)
        if (list->parsed()) {
            print_list(list_json);
            return 0;
        }
        if (merge->parsed()) {
            check_path("merge OUT", merge_out);
            for (auto& d : merge_in) check_path("merge DIR", d);
        }
        if (merge->parsed()) return merge_main(merge_out, {merge_in.begin(), merge_in.end()}, command_line(argc, argv));
        return run_command(*run, flags, argc, argv);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "coopbench: %s\n", clean_text(e.what()).c_str());
        return 2;
    } catch (const WriteError& e) {
        std::fprintf(stderr, "coopbench: %s\n", e.what());  // sweep.cpp says how to continue
        return kExitWriteError;
    } catch (const std::filesystem::filesystem_error& e) {
        // A path the system refuses (a name over 255 bytes, a loop of links): bad input.
        std::fprintf(stderr, "coopbench: cannot use the path '%s': %s\n", cut_text(clean_text(e.path1().string()), 120).c_str(),
                     e.code().message().c_str());
        return 2;
    } catch (const std::exception& e) {
        // Anything else on the run path: one line and a documented exit code, never an abort.
        std::fprintf(stderr, "coopbench: error: %s\n", clean_text(e.what()).c_str());
        return kExitWriteError;
    }
}

}  // namespace coopbench
