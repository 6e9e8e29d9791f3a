#include "harness/sweep.hpp"

#include <regex.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

#include "harness/child_process.hpp"  // interrupt_running_child
#include "harness/external.hpp"  // external backends' context (their --list answers)
#include "harness/machine.hpp"
#include "harness/gbench_reporter.hpp"
#include "harness/noise_guard.hpp"
#include "harness/point_line.hpp"
#include "harness/results.hpp"
#include "harness/resume.hpp"

namespace coopbench {

namespace fs = std::filesystem;

std::string request_to_json(const SweepOptions& o) {
    nlohmann::json j;
    const SweepRequest& r = o.request;
    j["backends"] = r.backends;
    j["workloads"] = r.workloads;
    j["plan"] = r.plan;
    j["params"] = r.params;
    j["processors"] = r.processors;
    j["backend_options"] = r.backend_options;
    j["stack_size"] = r.stack_size;
    j["pin"] = r.pin;
    j["repetitions"] = r.repetitions;
    j["warmup"] = r.warmup;
    j["iterations"] = r.iterations;
    j["budget_seconds"] = r.budget_seconds;
    j["isolation"] = o.runner.isolation == Isolation::process ? "process" : "none";
    j["timeout_seconds"] = o.runner.timeout_seconds;
    j["memory_limit_bytes"] = o.runner.memory_limit_bytes;
    if (!o.shard.is_null()) j["shard"] = o.shard;  // which shard of which sweep (harness/shard.hpp)
    if (o.order_seed) j["order_seed"] = *o.order_seed;  // the points' order in each round (fork_order)
    // --benchmark_filter: which points the folder is for (a resume keeps them).
    for (auto& a : o.benchmark_args)
        if (a.rfind("--benchmark_filter=", 0) == 0) j["benchmark_filter"] = a.substr(19);
    return j.dump(2);
}

SweepOptions request_from_json(const std::string& text) {
    auto j = nlohmann::json::parse(text);
    SweepOptions o;
    SweepRequest& r = o.request;
    r.backends = j.at("backends").get<std::vector<std::string>>();
    r.workloads = j.at("workloads").get<std::vector<std::string>>();
    r.plan = j.at("plan").get<std::string>();
    r.params = j.at("params").get<std::map<std::string, std::vector<std::string>>>();
    r.processors = j.at("processors").get<std::vector<unsigned>>();
    r.backend_options = j.at("backend_options").get<std::map<std::string, std::string>>();
    r.stack_size = j.at("stack_size").get<std::size_t>();
    r.pin = j.at("pin").get<bool>();
    r.repetitions = j.at("repetitions").get<int>();
    // Folders written before forks ran warm-up and measured iterations ran one cold shot per fork.
    r.warmup = j.value("warmup", 0);
    r.iterations = j.value("iterations", 1);
    r.budget_seconds = j.value("budget_seconds", 2.0);
    o.runner.isolation = j.at("isolation").get<std::string>() == "none" ? Isolation::none : Isolation::process;
    o.runner.timeout_seconds = j.at("timeout_seconds").get<double>();
    o.runner.memory_limit_bytes = j.at("memory_limit_bytes").get<std::size_t>();
    if (j.contains("shard")) o.shard = j["shard"];  // which shard of which sweep (harness/shard.hpp)
    if (j.contains("order_seed")) o.order_seed = j.at("order_seed").get<std::uint32_t>();
    if (j.contains("benchmark_filter")) o.benchmark_args.push_back("--benchmark_filter=" + j.at("benchmark_filter").get<std::string>());
    // The values the command line would have refused (a hand-edited or damaged file).
    auto refuse = [](const std::string& what) { throw std::runtime_error(what); };
    if (r.repetitions < 1 || r.repetitions > 1000000) refuse("repetitions out of range");
    if (r.warmup < -1 || r.warmup > 1000000) refuse("warmup out of range");
    if (r.iterations != -1 && (r.iterations < 1 || r.iterations > 1000000)) refuse("iterations out of range");
    if (!std::isfinite(r.budget_seconds) || r.budget_seconds <= 0 || r.budget_seconds > 365.0 * 24 * 3600)
        refuse("budget_seconds out of range");
    if (!std::isfinite(o.runner.timeout_seconds) || o.runner.timeout_seconds < 0 ||
        o.runner.timeout_seconds > 365.0 * 24 * 3600)
        refuse("timeout_seconds out of range");
    return o;
}

namespace {

std::string clock_text(double secs) {
    long s = static_cast<long>(secs + 0.5);
    char buf[32];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

// terminal_columns — the width of the terminal on `fd`, or 80 when it does not say.
std::size_t terminal_columns(int fd) {
    winsize ws{};
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

// write_file — `text` as the whole of `p`, or `p` left as it was: written to a temporary file
// beside it, fsync'ed and renamed over it (rename is atomic), so a full disk or a kill never
// leaves a torn context.json or sweep.json.
void write_file(const fs::path& p, const std::string& text) {
    const fs::path tmp = p.string() + ".tmp";
    const std::string all = text + "\n";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = fd < 0 ? errno : 0;
    for (std::size_t done = 0; err == 0 && done < all.size();) {
        const ssize_t n = ::write(fd, all.data() + done, all.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) err = n < 0 ? errno : EIO;
        else done += static_cast<std::size_t>(n);
    }
    if (err == 0 && fsync(fd) != 0) err = errno;
    if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && std::rename(tmp.c_str(), p.c_str()) != 0) err = errno;
    if (err == 0) return;
    ::unlink(tmp.c_str());
    throw WriteError("cannot write " + p.string() + ": " + std::strerror(err));
}

fs::path next_benchmark_json(const fs::path& dir) {
    if (!fs::exists(dir / "benchmark.json")) return dir / "benchmark.json";
    for (int i = 2;; ++i) {
        auto p = dir / ("benchmark-" + std::to_string(i) + ".json");
        if (!fs::exists(p)) return p;
    }
}

volatile sig_atomic_t g_interrupted = 0;  // the signal that interrupted the sweep (0: none)
const char* g_out_dir = nullptr;

// on_interrupt — SIGINT/SIGTERM during a sweep: say how to continue, then die of the signal.
// A point running in a child is killed first (its whole tree: run_child ends it and
// returns; the sweep loop then dies of the signal, before recording the point).
void on_interrupt(int sig) {
    if (!g_interrupted) {
        g_interrupted = sig;
        const char msg[] = "\ncoopbench: interrupted; every finished point is saved. Continue with: coopbench run --resume ";
        [[maybe_unused]] auto r1 = write(STDERR_FILENO, msg, sizeof msg - 1);
        if (g_out_dir) [[maybe_unused]] auto r2 = write(STDERR_FILENO, g_out_dir, std::strlen(g_out_dir));
        [[maybe_unused]] auto r3 = write(STDERR_FILENO, "\n", 1);
    }
    if (interrupt_running_child()) return;
    signal(sig, SIG_DFL);
    raise(sig);
}

// die_if_interrupted — after a point that an interrupt ended: die of that signal.
void die_if_interrupted() {
    const int sig = g_interrupted;
    if (!sig) return;
    signal(sig, SIG_DFL);
    raise(sig);
}

}  // namespace

// progress_text — the live progress line (sweep.hpp). Each step below runs only while the line
// is still longer than `columns` - 1 (a longer line wraps on a terminal, and "\r" then returns
// to its last row only, leaving the rows above behind): the id's parameters that every point of
// its workload shares give way first, whole, as one "..." component (they tell no two points
// apart, and the sweep's first lines name them); then the repetition's words; then "elapsed";
// then the time left; then the repetition; last the line's end, marked "...". So an id is whole, or loses shared
// parameters only, unless the terminal cannot hold its varying parts at all.
std::string progress_text(const std::string& counter, const Point& p, const std::set<std::string>& shared, int rep,
                          int repetitions, const std::string& elapsed, const std::string& left, std::size_t columns) {
    const std::size_t room = columns > 1 ? columns - 1 : 79;
    std::string full = p.backend + "/" + p.workload, kept = full;
    bool elided = false;
    for (auto& [k, v] : p.params) {
        full += "/" + k + "=" + v;
        if (shared.count(k) == 0) kept += "/" + k + "=" + v;
        else if (!elided) kept += "/...", elided = true;
    }
    const std::string procs = "/P=" + std::to_string(p.options.processors);
    full += procs;
    kept += procs;
    const std::string n = std::to_string(rep + 1), of = std::to_string(repetitions);
    const std::string rep_long = repetitions > 1 ? " (repetition " + n + " of " + of + ")" : "";
    const std::string rep_short = repetitions > 1 ? " (" + n + "/" + of + ")" : "";
    const std::string both = left.empty() ? elapsed : elapsed + ", " + left;
    const std::string steps[][3] = {{full, rep_long, both}, {kept, rep_long, both}, {kept, rep_short, both},
                                    {kept, rep_short, left}, {kept, rep_short, ""}, {kept, "", ""}};
    std::string line;
    for (auto& [id, r, tally] : steps) {
        line = counter + " " + id + r + (tally.empty() ? "" : "  " + tally);
        if (line.size() <= room) return line;
    }
    if (room <= 3) return line.substr(0, room);
    return line.substr(0, room - 3) + "...";
}

namespace {

// BenchmarkFlags — the --benchmark_* flags a sweep honours (cli.cpp checked their values).
struct BenchmarkFlags {
    std::string filter;            // --benchmark_filter: a POSIX extended expression on point ids
    std::string out_file;          // --benchmark_out: benchmark.json's path instead of the folder's
    std::string out_format = "json";
    std::string display = "lines";  // --benchmark_format: lines (one per point), console or json
};

BenchmarkFlags benchmark_flags(const std::vector<std::string>& args) {
    BenchmarkFlags f;
    for (auto& a : args) {
        const auto eq = a.find('=');
        const std::string name = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
        if (name == "--benchmark_filter") f.filter = value;
        else if (name == "--benchmark_out") f.out_file = value;
        else if (name == "--benchmark_out_format") f.out_format = value;
        else if (name == "--benchmark_format") f.display = value;
    }
    if (f.out_format != "json") throw UsageError("--benchmark_out_format: coopbench writes json only");
    return f;
}

// what_to_run — the points --benchmark_filter keeps (Google Benchmark's regular expressions,
// POSIX extended, on point ids). A filter that matches none is bad input, as Google
// Benchmark's "Failed to match any benchmarks" (a shard may hold no point at all: no error).
std::vector<Point> what_to_run(const std::vector<Point>& all, const std::string& filter) {
    if (filter.empty() || filter == "all" || filter == ".") return all;
    regex_t re;
    if (regcomp(&re, filter.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
        throw UsageError("--benchmark_filter: '" + filter + "' is not a regular expression");
    std::vector<Point> points;
    for (auto& p : all)
        if (regexec(&re, p.id().c_str(), 0, nullptr, 0) == 0) points.push_back(p);
    regfree(&re);
    if (points.empty() && !all.empty())
        throw UsageError("--benchmark_filter=" + filter + " matches none of the sweep's " + std::to_string(all.size()) +
                         " points (ids such as " + all.front().id() + ")");
    return points;
}

// check_benchmark_out — --benchmark_out's folder must exist and be writable before the
// result folder is made.
void check_benchmark_out(const std::string& out_file) {
    if (out_file.empty()) return;
    std::error_code fe;
    const fs::path parent = fs::absolute(fs::path(out_file), fe).parent_path();
    if (fs::is_directory(fs::path(out_file), fe) || !fs::is_directory(parent, fe) || access(parent.c_str(), W_OK) != 0)
        throw UsageError("--benchmark_out=" + out_file + ": cannot write a file there");
}

// resumed_context — a resumed folder keeps the command that made it (its points were
// measured by it, and sweep.json holds its request); each resume is added to `resumed`, with
// the commit that measured what came after it, so a reader can tell how the folder was made.
void resumed_context(nlohmann::json& context, const SweepOptions& opts) {
    std::ifstream in(opts.out / "context.json");
    const auto before = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (!before.is_object()) return;
    if (before.contains("coopbench_command")) context["coopbench_command"] = before["coopbench_command"];
    std::string resumed = before.value("resumed", std::string());
    if (!resumed.empty()) resumed += "; ";
    const std::string first_commit = before.value("git_commit", std::string("unknown"));
    resumed += (opts.command.empty() ? std::string("coopbench run --resume") : opts.command) + " at " +
               context.value("git_commit", std::string("unknown"));
    if (first_commit != context.value("git_commit", std::string())) resumed += " (made at " + first_commit + ")";
    context["resumed"] = resumed;
}

// sweep_context — context.json: the machine, the sweep, and what the points' backends say.
nlohmann::json sweep_context(const SweepOptions& opts, const std::vector<Point>& points, const Machine& machine) {
    nlohmann::json context = machine_context();
    context["plan"] = opts.request.plan.empty() ? "(defaults)" : opts.request.plan;
    // Typed as harness/schema.json's "context" says (numbers as numbers, the sweep an object,
    // null where a value is set per point); tests check every context with context_problems.
    context["sweep"] = nlohmann::json::parse(request_to_json(opts));
    context["points"] = points.size();
    context["repetitions"] = opts.request.repetitions;
    context["warmup"] = opts.request.warmup < 0 ? nlohmann::json() : nlohmann::json(opts.request.warmup);
    context["iterations"] = opts.request.iterations < 1 ? nlohmann::json() : nlohmann::json(opts.request.iterations);
    context["isolation"] = opts.runner.isolation == Isolation::process ? "process" : "none";
    context["coopbench_command"] = opts.command.empty() ? std::string("coopbench run") : opts.command;
    add_external_context(context, points);  // what an external backend's --list reports, e.g. backend.go.go_version
    add_build_context(context, points);     // how each backend was built: backend.<name>.build
    // Each backend's channel (the apps workloads' channels: its own, or the generic one built
    // from its mutex and condition variables), so a reader knows what the channel numbers
    // measured.
    for (auto& p : points)
        if (const BackendEntry* b = Registry::instance().backend(p.backend); b && !b->channel.empty())
            context["backend." + b->name + ".channel"] = b->channel;
    // Oversubscription is a legitimate experiment, but say it once and record it.
    unsigned most = 0;
    for (auto& p : points) most = std::max(most, p.options.processors);
    context["oversubscribed"] = most > machine.cores;
    if (most > machine.cores)
        std::fprintf(stderr, "coopbench: note: %u processors requested, this process may use %u cores: oversubscribed\n",
                     most, machine.cores);
    if (!opts.shard.is_null()) {  // a shard: which part of which sweep this folder holds
        context["shard"] = std::to_string(opts.shard.at("index").get<unsigned>()) + "/" +
                           std::to_string(opts.shard.at("count").get<unsigned>());
        context["sweep_fingerprint"] = opts.shard.at("sweep_fingerprint").get<std::string>();
    }
    if (opts.resume) resumed_context(context, opts);
    return context;
}

// make_folder — the result folder, made and proven writable before anything is measured;
// whether this call made it (a refused new sweep then leaves none behind).
bool make_folder(const fs::path& out) {
    std::error_code ec;
    const bool made = !fs::exists(out, ec);
    fs::create_directories(out, ec);
    auto probe = out / ".coopbench-write-test";
    std::ofstream t(probe);
    if (ec || !t) throw UsageError("cannot write to output folder " + out.string());
    t.close();
    fs::remove(probe, ec);
    return made;
}

using Forks = std::set<std::pair<std::string, int>>;

// prepare_resume — the forks the folder holds whole, after every check (a refused resume
// leaves the folder as it was) and then the repairs of an interrupted run's traces. A
// damaged line before the end is no interruption's trace (the folder was edited or broken
// otherwise, and resuming would leave it among the rows, which readers drop quietly); a
// duplicated row would count a measurement twice (merge refuses it too).
Forks prepare_resume(const fs::path& out, const std::vector<Point>& all_points, const std::vector<std::string>& params) {
    // A fork is done when all its rows are written (or its failed or refused one).
    std::map<std::string, int> runs_of;
    for (auto& p : all_points) runs_of[p.id()] = p.runs();
    const RunsOf runs = [&](const std::string& id) {
        auto it = runs_of.find(id);
        return it == runs_of.end() ? -1 : it->second;
    };
    const fs::path csv = out / "results.csv";
    auto refuse = [&](const std::vector<std::string>& bad, const std::string& what) {
        if (!bad.empty())
            throw UsageError("cannot resume: " + csv.string() + " " + bad.front() +
                             (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : "") + ": " + what +
                             ", then resume");
    };
    refuse(damaged_rows(csv), "repair or remove it");
    refuse(duplicated_rows(csv), "remove the later one");
    // Every row is a point of the sweep sweep.json records: else the record is another
    // sweep's (a sweep.json edited or copied in), and resuming it would mix two sweeps.
    std::vector<std::string> foreign;
    for (auto& [id, rep] : completed(out))
        if (!runs_of.count(id)) foreign.push_back("holds " + id + ", a point that " + (out / "sweep.json").string() +
                                                  " does not have");
    if (!foreign.empty())
        throw UsageError("cannot resume: " + csv.string() + " " + foreign.front() +
                         (foreign.size() > 1 ? " (and " + std::to_string(foreign.size() - 1) + " more)" : "") +
                         ": the sweep.json is not this folder's");
    check_resumable_header(out, params);
    repair_torn_tail(csv);
    repair_torn_tail(out / "points.jsonl");
    repair_unpaired_forks(out);
    repair_incomplete_fork(out, runs);
    return completed(out, runs);
}

// Todo — a point and its forks still to measure.
struct Todo {
    const Point* point;
    std::vector<int> reps;
};

// forks_to_measure — every fork of `points` that `done` does not hold, point by point.
std::vector<Todo> forks_to_measure(const std::vector<Point>& points, int repetitions, const Forks& done) {
    std::vector<Todo> todo;
    for (auto& p : points) {
        Todo t{&p, {}};
        for (int r = 0; r < repetitions; ++r)
            if (!done.count({p.id(), r})) t.reps.push_back(r);
        if (!t.reps.empty()) todo.push_back(std::move(t));
    }
    return todo;
}

// fork_order — the forks of `todo` in rounds: the first fork left of every point, then the
// second of every point, and so on (todo index, repetition). A point's forks are its
// replicates, so they should sample whatever drifts while the sweep runs (the host's load on
// the other guests, where the hypervisor places the virtual CPUs, the page cache): taken back
// to back they would all see the same moment, and an interval over them would leave that
// variation out. Two reproductions of one commit hours apart found such shifts (a lock at
// 1.0 ms in one run, 1.9 ms in every fork of the other, the same binary; docs/reproducing.md,
// "Verdict stability"). Rounds spread each point's forks over the whole sweep, as Kalibera
// and Jones ("Rigorous Benchmarking in Reasonable Time", ISMM 2013) randomise or interleave
// executions, and as coopbench's side-by-side comparisons interleave their rounds.
//
// With a seed, the points' order inside each round is a random permutation of its own (Kalibera
// and Jones randomise the order of executions): in one fixed order every point would always
// follow the same predecessor (its exiting threads, page cache, clock state), a position effect
// that a comparison paired by round (compare.py --paired) does not cancel; a 2 % effect per slot
// would make it flag identical backends in 9 % of sweeps of 6 rounds, 22 % of 10 (a simulation in
// the statistics review). Round k holds every point's fork k, ordered by a hash of (seed, k, the
// point's id), so the forks a resume has left run in the order the whole sweep would have.
std::uint64_t order_key(std::uint32_t seed, int rep, const std::string& id) {
    auto mix = [](std::uint64_t z) {  // splitmix64's finaliser (Steele, Lea and Flood, OOPSLA 2014)
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    };
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the id
    for (unsigned char c : id) h = (h ^ c) * 0x100000001b3ULL;
    return mix(h ^ mix((static_cast<std::uint64_t>(seed) << 32) ^ static_cast<std::uint32_t>(rep)));
}

std::vector<std::pair<std::size_t, int>> fork_order(const std::vector<Todo>& todo, std::optional<std::uint32_t> seed) {
    if (seed) {
        std::vector<std::tuple<int, std::uint64_t, std::size_t>> keyed;
        for (std::size_t i = 0; i < todo.size(); ++i)
            for (int rep : todo[i].reps) keyed.emplace_back(rep, order_key(*seed, rep, todo[i].point->id()), i);
        std::sort(keyed.begin(), keyed.end());
        std::vector<std::pair<std::size_t, int>> order;
        for (auto& [rep, key, i] : keyed) order.emplace_back(i, rep);
        return order;
    }
    std::vector<std::pair<std::size_t, int>> order;
    for (std::size_t round = 0;; ++round) {
        const std::size_t before = order.size();
        for (std::size_t i = 0; i < todo.size(); ++i)
            if (round < todo[i].reps.size()) order.emplace_back(i, todo[i].reps[round]);
        if (order.size() == before) return order;
    }
}

std::size_t fork_count(const std::vector<Todo>& todo) {
    std::size_t n = 0;
    for (auto& t : todo) n += t.reps.size();
    return n;
}

// Tally — how the forks of this run ended.
struct Tally {
    std::size_t measured = 0, failed = 0, refused = 0, noisy_points = 0;
};

// ProgressDisplay — what a person watching the sweep sees on stderr: one live line on a
// terminal, rewritten in place, naming the fork that runs now with the time elapsed and
// expected left (a point may run for minutes: the line must not name the one before); and,
// in a log of one line per point (the default), that line on stdout when the point's forks
// are done. It draws; the fork loop (run_forks) decides nothing here.
class ProgressDisplay {
  public:
    ProgressDisplay(const SweepOptions& opts, const std::vector<Todo>& todo, const std::string& display)
        : live_(!opts.quiet && isatty(STDERR_FILENO)), lines_(display == "lines"),
          repetitions_(opts.request.repetitions), total_(fork_count(todo)), start_(std::chrono::steady_clock::now()) {
        // The result lines' columns line up within a workload: its ids are alike in length,
        // while one workload with many parameters (abortable-lock: 100 characters) would push
        // every other workload's numbers far right.
        for (auto& t : todo) id_width_[t.point->workload] = std::max(id_width_[t.point->workload], t.point->id().size());
        // The parameters every point of a workload shares in this run (the live line may leave them out:
        // they tell no two of its points apart): a name is shared while every point has the first one's value.
        std::map<std::string, Params> first;
        for (auto& t : todo) {
            const Point& p = *t.point;
            auto [it, fresh] = first.emplace(p.workload, p.params);
            std::set<std::string>& names = shared_[p.workload];
            if (fresh)
                for (auto& [k, v] : p.params) names.insert(k);
            for (auto k = names.begin(); k != names.end();) {
                auto v = p.params.find(*k);
                auto w = it->second.find(*k);
                k = (v == p.params.end() || w == it->second.end() || v->second != w->second) ? names.erase(k) : std::next(k);
            }
        }
        if (!opts.quiet)
            std::fprintf(stderr, "coopbench: %zu forks of %zu points -> %s (the machine and the sweep: context.json there)\n",
                         total_, todo.size(), opts.out.c_str());
        // Said once, so that a "..." in the live line's id is never a guess.
        std::string same;
        for (auto& [w, names] : shared_) {
            if (names.empty()) continue;
            same += (same.empty() ? " " : "; ") + w + ":";
            for (auto& k : names) same += " " + k + "=" + first[w].at(k);
        }
        std::size_t longest = 0;
        for (auto& [w, width] : id_width_) longest = std::max(longest, width);
        // 50: the counter, the repetition and the times around the id (the live line's widest form).
        if (live_ && !same.empty() && longest + 50 >= terminal_columns(STDERR_FILENO))
            std::fprintf(stderr, "coopbench: every point of a workload shares (the live line may show them as ...):%s\n",
                         same.c_str());
    }

    // fork_starts — the live line for the fork `rep` of `p`. No newline: the point's result
    // line, the next fork's progress or the summary replaces it.
    void fork_starts(const Point& p, int rep, const Tally& tally) const {
        if (!live_) return;
        const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
        const std::string left =
            tally.measured == 0
                ? std::string("?")
                : clock_text(el / static_cast<double>(tally.measured) * static_cast<double>(total_ - tally.measured));
        std::string text = "~" + left + " left";
        if (tally.failed) text += ", " + std::to_string(tally.failed) + " failed";
        char counter[48];
        std::snprintf(counter, sizeof counter, "[%zu/%zu]", tally.measured + 1, total_);
        const auto shared = shared_.find(p.workload);
        std::fprintf(stderr, "\r\033[K%s",
                     progress_text(counter, p, shared == shared_.end() ? std::set<std::string>{} : shared->second, rep,
                                   repetitions_, "elapsed " + clock_text(el), text, terminal_columns(STDERR_FILENO))
                         .c_str());
    }

    // clear — erase the live line: before anything else is printed (Google's console table,
    // a note, the point's line), which would be glued to it.
    void clear() const {
        if (live_) std::fprintf(stderr, "\r\033[K");
    }

    // reported — after the reporters printed (Google's console table is on std::cout): flush
    // it before the next live line.
    void reported() const {
        if (live_) std::cout.flush();
    }

    // noisy — the first noisy fork of a point: in a log of one line per point that line says
    // "noisy"; the other formats get a line of their own, with the readings.
    void noisy(const ForkResult& fork, unsigned cores) const {
        if (lines_) return;
        std::fprintf(stderr,
                     "coopbench: noisy: %s ran while the machine was busy (%d/%d other runnable before/after, %.2f CPUs "
                     "busy with other work, %u cores)\n",
                     fork.point->id().c_str(), fork.noise.runnable_before, fork.noise.runnable_after,
                     fork.noise.other_cpus, cores);
    }

    // point_done — the point's one line (stdout); the next fork's live line comes below it.
    void point_done(const Point& p, const PointLine& line, const std::string& unit) {
        if (!lines_) return;
        std::printf("%-*s  %s\n", static_cast<int>(id_width_[p.workload]), p.id().c_str(), line.text(unit).c_str());
        std::fflush(stdout);
    }

  private:
    bool live_, lines_;
    int repetitions_;
    std::size_t total_;
    std::chrono::steady_clock::time_point start_;
    std::map<std::string, std::size_t> id_width_;
    std::map<std::string, std::set<std::string>> shared_;  // per workload: the parameters all its points share
};

// ForkMeter — one fork measured, with the noise guard's readings around it.
class ForkMeter {
  public:
    ForkMeter(const SweepOptions& opts, const Machine& machine)
        : opts_(opts), machine_(machine), proc_{opts.proc_root}, proc_cpus_(proc_.cpus()) {}

    ForkResult measure_fork(const Point& p, int rep) const {
        const auto& reg = Registry::instance();
        const WorkloadInfo info = reg.workloads().at(p.workload).info(machine_);
        ForkResult fork;
        fork.point = &p;
        fork.family = reg.backend(p.backend)->family;
        fork.unit = info.unit;
        fork.repetition = rep;
        fork.noise.load_before = proc_.load1();
        fork.noise.runnable_before = proc_.runnable_settled();
        const double busy_before = proc_.busy_seconds();
        const double steal_before = proc_.steal_seconds();
        const auto fork_start = std::chrono::steady_clock::now();
        fork.m = measure(p, opts_.runner);
        die_if_interrupted();  // an interrupted fork is not recorded: --resume measures it again
        refuse_implausible(fork.m, info.unit);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - fork_start).count();
        fork.noise.other_cpus = other_cpus(busy_before, proc_.busy_seconds(), fork.m.cpu_seconds, wall, proc_cpus_,
                                           ProcReader::tick_seconds());
        fork.noise.steal_cpus = steal_cpus(steal_before, proc_.steal_seconds(), wall, proc_cpus_,
                                           ProcReader::tick_seconds());
        fork.noise.load_after = proc_.load1();
        fork.noise.runnable_after = proc_.runnable_settled();
        fork.noise.noisy = is_noisy(fork.noise, machine_.cores, p.options.processors);
        return fork;
    }

  private:
    const SweepOptions& opts_;
    const Machine& machine_;
    const ProcReader proc_;
    const unsigned proc_cpus_;
};

// seed_lines — after --resume, each point's line starts from the rows the folder holds (the
// forks measured before it), so it summarises all the point's forks as results.csv does.
void seed_lines(const fs::path& out, const std::vector<Todo>& todo, std::vector<PointLine>& lines) {
    std::map<std::string, std::size_t> index;
    for (std::size_t i = 0; i < todo.size(); ++i) index[todo[i].point->id()] = i;
    std::ifstream in(out / "results.csv", std::ios::binary);
    std::string line;
    if (!std::getline(in, line)) return;
    const auto header = parse_csv_line(line);
    auto col = [&](const char* name) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const std::size_t ip = col("point"), is = col("status"), iph = col("phase"), iv = col("value"), ir = col("reason"),
                      in_ = col("noisy");
    while (std::getline(in, line)) {
        const auto f = parse_csv_line(line);
        if (f.size() != header.size() || ip >= f.size()) continue;
        auto it = index.find(f[ip]);
        if (it == index.end()) continue;
        double value = NAN;
        try {
            if (iv < f.size() && !f[iv].empty()) value = std::stod(f[iv]);
        } catch (...) {
        }
        lines[it->second].add_row(is < f.size() ? f[is] : "", iph < f.size() ? f[iph] : "measure", value,
                                  ir < f.size() ? f[ir] : "", in_ < f.size() && f[in_] == "true");
    }
}

// run_forks — the fork loop: forks in rounds over the points (fork_order; x warm-up +
// measured iterations, inside the fork), each fork to every reporter as it ends; a point's
// line when its last fork has ended. SIGINT/SIGTERM end it (on_interrupt).
Tally run_forks(const SweepOptions& opts, const std::vector<Todo>& todo, const std::vector<Reporter*>& reporters,
                ProgressDisplay& display, const Machine& machine) {
    const ForkMeter meter(opts, machine);
    Tally tally;
    const std::string out_dir = opts.out.string();
    g_out_dir = out_dir.c_str();
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);
    // Each point's line and first noisy fork, kept across the rounds (fork_order).
    std::vector<PointLine> lines(todo.size());
    if (opts.resume) seed_lines(opts.out, todo, lines);
    std::vector<char> said_noisy(todo.size(), 0);
    for (const auto& [i, rep] : fork_order(todo, opts.order_seed)) {
        const Todo& t = todo[i];
        display.fork_starts(*t.point, rep, tally);
        const ForkResult fork = meter.measure_fork(*t.point, rep);
        display.clear();
        // A fork is in every result file or in none: one that a reporter could not write
        // (WriteError: a full disk) is taken out of the ones before it, and --resume measures it.
        for (std::size_t k = 0; k < reporters.size(); ++k) {
            try {
                reporters[k]->report(fork);
            } catch (const WriteError&) {
                for (std::size_t j = 0; j < k; ++j) reporters[j]->retract_last();
                throw;
            }
        }
        display.reported();
        lines[i].add(fork);
        ++tally.measured;
        // A fork refused before it ran (a system limit known in advance) is a result, not a failure.
        const bool ok = !fork.m.runs.empty() && fork.m.runs.back().ok;
        if (!ok && is_refusal(fork.m.runs.back())) ++tally.refused;
        else if (!ok) ++tally.failed;
        if (fork.noise.noisy && !said_noisy[i]) {
            said_noisy[i] = 1;
            ++tally.noisy_points;
            display.noisy(fork, machine.cores);
        }
        if (rep == t.reps.back()) display.point_done(*t.point, lines[i], fork.unit);
    }
    display.clear();
    for (Reporter* r : reporters) r->finish();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    die_if_interrupted();
    return tally;
}

// exit_status — the summary line, and the exit code that describes the folder: after a
// resume, a fork that failed before it counts too.
int exit_status(const SweepOptions& opts, const Tally& tally) {
    std::fprintf(stderr, "coopbench: %zu forks (%zu failed, %zu refused, %zu noisy points) in %s\n", tally.measured,
                 tally.failed, tally.refused, tally.noisy_points, opts.out.c_str());
    const std::size_t failed_in_folder = opts.resume ? failed_forks(opts.out).size() : tally.failed;
    if (failed_in_folder > tally.failed)
        std::fprintf(stderr, "coopbench: %zu forks of %s failed, %zu of them before this resume\n", failed_in_folder,
                     opts.out.c_str(), failed_in_folder - tally.failed);
    return failed_in_folder > 0 ? kExitPointsFailed : 0;
}

// param_names — every parameter of `points`, sorted: results.csv's param.<NAME> columns.
std::vector<std::string> param_names(const std::vector<Point>& points) {
    std::set<std::string> names;
    for (auto& p : points)
        for (auto& [k, v] : p.params) names.insert(k);
    return {names.begin(), names.end()};
}

// measure_into_folder — the sweep once its folder exists: what is left to measure, the
// reporters, the records that describe the folder, then the fork loop.
int measure_into_folder(const SweepOptions& opts, const std::vector<Point>& all_points, const std::vector<Point>& points,
                        const BenchmarkFlags& flags, const nlohmann::json& context, const Machine& machine) {
    const auto params = param_names(points);
    const Forks done = opts.resume ? prepare_resume(opts.out, all_points, params) : Forks{};
    const auto todo = forks_to_measure(points, opts.request.repetitions, done);
    if (opts.resume)
        std::fprintf(stderr, "coopbench: resuming %s: %zu forks done, %zu to go\n", opts.out.c_str(), done.size(),
                     fork_count(todo));
    ResultWriter writer(opts.out, params);
    std::size_t name_width = 10;
    for (auto& p : points) name_width = std::max(name_width, p.id().size() + std::string("/manual_time").size());
    // A resume with nothing left to measure adds no benchmark-N.json: it would hold no run.
    std::optional<GbenchReporter> gbench;
    std::vector<Reporter*> reporters = {&writer};
    if (!todo.empty() || !opts.resume) {
        gbench.emplace(flags.out_file.empty() ? next_benchmark_json(opts.out) : fs::path(flags.out_file), context,
                       flags.display == "console", opts.quiet, name_width);
        gbench->set_repetitions(opts.request.repetitions);
        reporters.push_back(&*gbench);
    }
    // Written last, when nothing can refuse the sweep any more: a refused resume records nothing.
    try {
        if (!opts.resume) write_file(opts.out / "sweep.json", request_to_json(opts));
        write_file(opts.out / "context.json", context.dump(2));
    } catch (const WriteError&) {
        // A resume stopped here (a full disk) leaves no benchmark-N.json that holds no run.
        if (gbench && opts.resume && flags.out_file.empty()) {
            const fs::path file = gbench->file();
            gbench.reset();
            std::error_code ec;
            fs::remove(file, ec);
        }
        throw;
    }
    // A sweep of every backend leaves out the build's external backends that cannot run
    // (their program not built): say which, once, so "every backend" is not read as more
    // than it was. Here, where nothing refuses the sweep any more: a refusal stays one line.
    if (opts.request.backends.empty())
        for (auto& l : left_out_backends())
            std::fprintf(stderr, "coopbench: note: external backend %s left out: %s\n", l.name.c_str(), l.reason.c_str());
    ProgressDisplay display(opts, todo, flags.display);
    return exit_status(opts, run_forks(opts, todo, reporters, display, machine));
}

}  // namespace

std::vector<Point> filtered_points(const std::vector<Point>& points, const std::vector<std::string>& benchmark_args) {
    return what_to_run(points, benchmark_flags(benchmark_args).filter);
}

namespace {
// line_count — the newlines in `p`, or nothing when it cannot be read or holds more than `most`.
std::optional<std::size_t> line_count(const fs::path& p, std::size_t most) {
    std::ifstream in(p, std::ios::binary);
    if (!in) return std::nullopt;
    std::size_t n = 0;
    for (char c; in.get(c);)
        if (c == '\n' && ++n > most) return std::nullopt;
    return n;
}
}  // namespace

bool never_began(const fs::path& out) {
    std::error_code ec;
    // sweep.json is written (renamed into place) before any fork runs and context.json after it: with
    // either, the sweep began. Without, results.csv (made first, its header its only line) and
    // points.jsonl must hold no row: then nothing was measured.
    for (const char* f : {"sweep.json", "context.json"})
        if (fs::exists(out / f, ec) || ec) return false;
    if (!fs::exists(out / "results.csv", ec)) return false;
    const auto csv = line_count(out / "results.csv", 1);
    const auto jsonl = fs::exists(out / "points.jsonl", ec) ? line_count(out / "points.jsonl", 0) : std::optional<std::size_t>(0);
    if (!csv || !jsonl) return false;
    for (const auto& e : fs::directory_iterator(out, ec)) {
        const std::string name = e.path().filename().string();
        if (name != "results.csv" && name != "points.jsonl" && name != "benchmark.json" && name != ".coopbench.lock" &&
            name != "sweep.json.tmp" && name != "context.json.tmp" && name != "shard.json")
            return false;  // a file the driver does not make at a sweep's start: not this case
    }
    return !ec;
}

void refuse_folder_with_results(const fs::path& out) {
    if (never_began(out)) return;  // run_sweep clears it under the folder's lock
    for (const char* f : {"results.csv", "points.jsonl", "sweep.json", "context.json", "benchmark.json"})
        if (fs::exists(out / f))
            throw UsageError(out.string() + " already holds results (" + f + "): continue that sweep with coopbench run --resume " +
                             out.string() + ", or give another --out");
}

namespace {
// FolderLock — the result folder's lock, held for the whole sweep: an flock(2) on
// FOLDER/.coopbench.lock, which holds the holder's pid. A second sweep into the folder (a new
// one or a --resume) is refused with that pid instead of appending to the same files; the
// kernel drops the lock when the holder dies, even by kill -9, so no stale lock is left.
// (Over NFS, Linux emulates flock with fcntl's byte-range locks, which work across hosts.)
class FolderLock {
  public:
    explicit FolderLock(const fs::path& out) : path_(out / ".coopbench.lock") {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw UsageError("cannot lock " + out.string() + ": " + path_.string() + ": " + std::strerror(errno));
        if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            char buf[32] = {};
            [[maybe_unused]] const ssize_t n = pread(fd_, buf, sizeof buf - 1, 0);
            ::close(fd_);
            std::string holder(buf);
            holder.erase(std::remove_if(holder.begin(), holder.end(), [](char c) { return c < '0' || c > '9'; }), holder.end());
            if (err == EWOULDBLOCK)
                throw UsageError(out.string() + " is in use by another coopbench run (pid " +
                                 (holder.empty() ? std::string("unknown") : holder) +
                                 "): wait for it to end, or give another --out");
            throw UsageError("cannot lock " + path_.string() + ": " + std::strerror(err));
        }
        const std::string pid = std::to_string(getpid()) + "\n";
        if (ftruncate(fd_, 0) == 0) [[maybe_unused]] const ssize_t w = pwrite(fd_, pid.data(), pid.size(), 0);
    }
    ~FolderLock() { ::close(fd_); }
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

  private:
    fs::path path_;
    int fd_ = -1;
};
}  // namespace

int run_sweep(const SweepOptions& opts, const std::vector<Point>& all_points) {
    const Machine machine = detect_machine();
    const BenchmarkFlags flags = benchmark_flags(opts.benchmark_args);
    const std::vector<Point> points = what_to_run(all_points, flags.filter);
    if (!opts.resume) refuse_folder_with_results(opts.out);
    check_benchmark_out(flags.out_file);
    const nlohmann::json context = sweep_context(opts, points, machine);
    const bool made_folder = make_folder(opts.out);
    // Refused here, the folder is another run's: nothing of it is removed.
    const FolderLock lock(opts.out);
    if (!opts.resume) refuse_folder_with_results(opts.out);  // a sweep that ran there since the check above
    if (!opts.resume && never_began(opts.out)) {
        // The files of a sweep killed before its record was written (nothing measured, nothing to resume):
        // cleared, so that the folder takes this sweep. The lock is held: no other driver writes there.
        std::error_code ec;
        for (const char* f : {"results.csv", "points.jsonl", "benchmark.json", "sweep.json.tmp", "context.json.tmp"})
            fs::remove(opts.out / f, ec);
    }
    try {
        return measure_into_folder(opts, all_points, points, flags, context, machine);
    } catch (const UsageError&) {
        // A new sweep refused from here on (e.g. --benchmark_out cannot be opened) leaves no folder behind.
        std::error_code ec;
        if (made_folder && !opts.resume) fs::remove_all(opts.out, ec);
        throw;
    } catch (const WriteError& e) {
        // A new sweep stopped before its record (sweep.json) was written, e.g. by a full disk,
        // is no folder --resume could continue: none is left behind.
        std::error_code ec;
        if (made_folder && !opts.resume && !fs::exists(opts.out / "sweep.json", ec)) {
            fs::remove_all(opts.out, ec);
            throw WriteError(std::string(e.what()) + "; nothing was measured and no folder is left: free space, then run again");
        }
        throw WriteError(std::string(e.what()) + "; every fork written before is whole: free space, then continue with "
                                                 "coopbench run --resume " + opts.out.string());
    }
}

}  // namespace coopbench
