#include "harness/sweep.hpp"

#include <regex.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string_view>

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

// progress_text — the live progress line, at most `columns` - 1 characters: a longer line
// wraps on a terminal, and "\r" then returns to its last row only, leaving the rows above
// behind. The point's id gives way first (its middle), then the end of the line.
std::string progress_text(const std::string& counter, const std::string& which, const std::string& tally,
                          std::size_t columns) {
    const std::size_t room = columns > 1 ? columns - 1 : 79;
    const std::size_t fixed = counter.size() + 1 + 2 + tally.size();
    std::string w = which;
    if (fixed + w.size() > room && room >= fixed + 12) {
        const std::size_t keep = room - fixed - 3;
        w.assign(which, 0, keep / 2);
        w.append("...");
        w.append(which, which.size() - (keep - keep / 2), std::string::npos);
    }
    std::string line = counter + " " + w + "  " + tally;
    if (line.size() > room) line.resize(room);
    return line;
}

// terminal_columns — the width of the terminal on `fd`, or 80 when it does not say.
std::size_t terminal_columns(int fd) {
    winsize ws{};
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 80;
}

void write_file(const fs::path& p, const std::string& text) {
    std::ofstream out(p);
    out << text << "\n";
    if (!out) throw UsageError("cannot write " + p.string());
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

void refuse_folder_with_results(const fs::path& out) {
    for (const char* f : {"results.csv", "points.jsonl", "sweep.json", "context.json", "benchmark.json"})
        if (fs::exists(out / f))
            throw UsageError(out.string() + " already holds results (" + f + "): continue that sweep with coopbench run --resume " +
                             out.string() + ", or give another --out");
}

int run_sweep(const SweepOptions& opts, const std::vector<Point>& all_points) {
    const Machine machine = detect_machine();
    // --benchmark_filter: Google Benchmark's regular expressions (POSIX extended) on point ids.
    std::vector<Point> points;
    // The display: one line per point (default), Google Benchmark's console tables
    // (--benchmark_format=console), or nothing on stdout (--benchmark_format=json).
    std::string filter, out_file, out_format = "json", display_format = "lines";
    for (auto& a : opts.benchmark_args) {
        const auto eq = a.find('=');
        const std::string name = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
        if (name == "--benchmark_filter") filter = value;
        else if (name == "--benchmark_out") out_file = value;
        else if (name == "--benchmark_out_format") out_format = value;
        else if (name == "--benchmark_format") display_format = value;
    }
    if (filter.empty() || filter == "all" || filter == ".") {
        points = all_points;
    } else {
        regex_t re;
        if (regcomp(&re, filter.c_str(), REG_EXTENDED | REG_NOSUB) != 0)
            throw UsageError("--benchmark_filter: '" + filter + "' is not a regular expression");
        const bool negative = false;
        for (auto& p : all_points)
            if ((regexec(&re, p.id().c_str(), 0, nullptr, 0) == 0) != negative) points.push_back(p);
        regfree(&re);
    }
    if (out_format != "json") throw UsageError("--benchmark_out_format: coopbench writes json only");
    // A filter that matches none of the points is bad input, as Google Benchmark's "Failed to
    // match any benchmarks" (a shard may hold no point at all: that is no error).
    if (points.empty() && !all_points.empty())
        throw UsageError("--benchmark_filter=" + filter + " matches none of the sweep's " + std::to_string(all_points.size()) +
                         " points (ids such as " + all_points.front().id() + ")");

    if (!opts.resume) refuse_folder_with_results(opts.out);
    // --benchmark_out's folder must exist and be writable before the result folder is made.
    if (!out_file.empty()) {
        std::error_code fe;
        const fs::path parent = fs::absolute(fs::path(out_file), fe).parent_path();
        if (fs::is_directory(fs::path(out_file), fe) || !fs::is_directory(parent, fe) || access(parent.c_str(), W_OK) != 0)
            throw UsageError("--benchmark_out=" + out_file + ": cannot write a file there");
    }

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
    if (opts.resume) {
        // A resumed folder keeps the command that made it (its points were measured by it,
        // and sweep.json holds its request); each resume is added to `resumed`, with the
        // commit that measured what came after it. Before, the resume's own command replaced
        // the original one, and a reader could not tell how the folder was made.
        std::ifstream in(opts.out / "context.json");
        const auto before = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
        if (before.is_object()) {
            if (before.contains("coopbench_command")) context["coopbench_command"] = before["coopbench_command"];
            std::string resumed = before.value("resumed", std::string());
            if (!resumed.empty()) resumed += "; ";
            const std::string first_commit = before.value("git_commit", std::string("unknown"));
            resumed += (opts.command.empty() ? std::string("coopbench run --resume") : opts.command) + " at " +
                       context.value("git_commit", std::string("unknown"));
            if (first_commit != context.value("git_commit", std::string())) resumed += " (made at " + first_commit + ")";
            context["resumed"] = resumed;
        }
    }

    // The result folder must be writable before anything is measured. A new sweep refused
    // from here on (e.g. --benchmark_out cannot be opened) leaves no folder behind.
    std::error_code ec;
    const bool made_folder = !fs::exists(opts.out, ec);
    fs::create_directories(opts.out, ec);
    {
        auto probe = opts.out / ".coopbench-write-test";
        std::ofstream t(probe);
        if (ec || !t) throw UsageError("cannot write to output folder " + opts.out.string());
        t.close();
        fs::remove(probe, ec);
    }
    try {
    // Which forks are still to be measured: a fork is done when all its rows are written.
    std::map<std::string, int> runs_of;
    for (auto& p : all_points) runs_of[p.id()] = p.runs();
    const RunsOf runs = [&](const std::string& id) {
        auto it = runs_of.find(id);
        return it == runs_of.end() ? -1 : it->second;
    };
    std::set<std::string> param_set;
    for (auto& p : points)
        for (auto& [k, v] : p.params) param_set.insert(k);
    if (opts.resume) {
        // Every check before any repair: a refused resume leaves the folder as it was.
        // A damaged line before the end is no interruption's trace: the folder was edited or
        // broken otherwise, and resuming would leave it among the rows (readers drop it
        // quietly); a duplicated row would count a measurement twice (merge refuses it too).
        auto refuse = [&](const std::vector<std::string>& bad, const std::string& what) {
            if (!bad.empty())
                throw UsageError("cannot resume: " + (opts.out / "results.csv").string() + " " + bad.front() +
                                 (bad.size() > 1 ? " (and " + std::to_string(bad.size() - 1) + " more)" : "") + ": " +
                                 what + ", then resume");
        };
        refuse(damaged_rows(opts.out / "results.csv"), "repair or remove it");
        refuse(duplicated_rows(opts.out / "results.csv"), "remove the later one");
        check_resumable_header(opts.out, {param_set.begin(), param_set.end()});
        repair_torn_tail(opts.out / "results.csv");
        repair_torn_tail(opts.out / "points.jsonl");
        repair_incomplete_fork(opts.out, runs);
    }
    const auto done = opts.resume ? completed(opts.out, runs) : std::set<std::pair<std::string, int>>{};
    struct Todo {
        const Point* point;
        std::vector<int> reps;
    };
    std::vector<Todo> todo;
    std::size_t total = 0;
    for (auto& p : points) {
        Todo t{&p, {}};
        for (int r = 0; r < opts.request.repetitions; ++r)
            if (!done.count({p.id(), r})) t.reps.push_back(r);
        total += t.reps.size();
        if (!t.reps.empty()) todo.push_back(std::move(t));
    }
    if (opts.resume)
        std::fprintf(stderr, "coopbench: resuming %s: %zu forks done, %zu to go\n", opts.out.c_str(), done.size(), total);

    ResultWriter writer(opts.out, {param_set.begin(), param_set.end()});
    std::size_t name_width = 10;
    for (auto& p : points) name_width = std::max(name_width, p.id().size() + std::string("/manual_time").size());
    GbenchReporter gbench(out_file.empty() ? next_benchmark_json(opts.out) : fs::path(out_file), context,
                          display_format == "console", opts.quiet, name_width);
    gbench.set_repetitions(opts.request.repetitions);
    std::vector<Reporter*> reporters = {&writer, &gbench};
    // Written last, when nothing can refuse the sweep any more: a refused resume records nothing.
    if (!opts.resume) write_file(opts.out / "sweep.json", request_to_json(opts));
    write_file(opts.out / "context.json", context.dump(2));
    // A sweep of every backend leaves out the build's external backends that cannot run
    // (their program not built): say which, once, so "every backend" is not read as more
    // than it was. Here, where nothing refuses the sweep any more: a refusal stays one line.
    if (opts.request.backends.empty())
        for (auto& l : left_out_backends())
            std::fprintf(stderr, "coopbench: note: external backend %s left out: %s\n", l.name.c_str(), l.reason.c_str());

    const bool progress = !opts.quiet && isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    std::size_t measured = 0, failed = 0, refused = 0, noisy_points = 0;
    const auto& reg = Registry::instance();
    const ProcReader proc{opts.proc_root};
    const unsigned proc_cpus = proc.cpus();

    std::string out_dir = opts.out.string();
    g_out_dir = out_dir.c_str();
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);

    // The sweep: points x forks x (warm-up + measured iterations, inside the fork).
    const bool lines = display_format == "lines";
    if (!opts.quiet)
        std::fprintf(stderr, "coopbench: %zu forks of %zu points -> %s (the machine and the sweep: context.json there)\n", total,
                     todo.size(), opts.out.c_str());
    // The result lines' columns line up within a workload: its ids are alike in length,
    // while one workload with many parameters (abortable-lock: 100 characters) would push
    // every other workload's numbers far right.
    std::map<std::string, std::size_t> id_width;
    for (auto& t : todo) id_width[t.point->workload] = std::max(id_width[t.point->workload], t.point->id().size());
    for (auto& t : todo) {
        const Point* p = t.point;
        const BackendEntry* b = reg.backend(p->backend);
        bool said_noisy = false;
        PointLine line;
        for (int rep : t.reps) {
            if (progress) {
                // One live line, rewritten in place, naming the fork that runs now (a point
                // may run for minutes: the line must not name the one before). No newline:
                // the point's result line, the next fork's progress or the summary replaces it.
                const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                const std::string left =
                    measured == 0 ? std::string("?")
                                  : clock_text(el / static_cast<double>(measured) * static_cast<double>(total - measured));
                std::string which = p->id();
                if (opts.request.repetitions > 1)
                    which += " (repetition " + std::to_string(rep + 1) + " of " + std::to_string(opts.request.repetitions) + ")";
                std::string tally = "elapsed " + clock_text(el) + ", ~" + left + " left";
                if (failed) tally += ", " + std::to_string(failed) + " failed";
                char counter[48];
                std::snprintf(counter, sizeof counter, "[%zu/%zu]", measured + 1, total);
                std::fprintf(stderr, "\r\033[K%s",
                             progress_text(counter, which, tally, terminal_columns(STDERR_FILENO)).c_str());
            }
            ForkResult fork;
            fork.point = p;
            fork.family = b->family;
            const WorkloadInfo info = reg.workloads().at(p->workload).info(machine);
            fork.unit = info.unit;
            fork.repetition = rep;
            fork.noise.load_before = proc.load1();
            fork.noise.runnable_before = proc.runnable_settled();
            const double busy_before = proc.busy_seconds();
            const auto fork_start = std::chrono::steady_clock::now();
            fork.m = measure(*p, opts.runner);
            die_if_interrupted();  // an interrupted fork is not recorded: --resume measures it again
            refuse_implausible(fork.m, info.unit);
            const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - fork_start).count();
            fork.noise.other_cpus = other_cpus(busy_before, proc.busy_seconds(), fork.m.cpu_seconds, wall, proc_cpus,
                                               ProcReader::tick_seconds());
            fork.noise.load_after = proc.load1();
            fork.noise.runnable_after = proc.runnable_settled();
            fork.noise.noisy = is_noisy(fork.noise, machine.cores, p->options.processors);
            // The live progress line goes before anything else is printed (Google's console
            // table, a note, the point's line): printed after it, they would be glued to it.
            if (progress) std::fprintf(stderr, "\r\033[K");
            for (Reporter* r : reporters) r->report(fork);
            if (progress) std::cout.flush();  // Google's console table (std::cout) before the next progress line
            line.add(fork);
            ++measured;
            // A fork refused before it ran (a system limit known in advance) is a result, not a failure.
            const bool ok = !fork.m.runs.empty() && fork.m.runs.back().ok;
            if (!ok && is_refusal(fork.m.runs.back())) ++refused;
            else if (!ok) ++failed;
            // In a log of one line per point, that line says "noisy"; the other formats get
            // a line of their own, with the readings.
            if (fork.noise.noisy && !said_noisy) {
                said_noisy = true;
                ++noisy_points;
                if (!lines)
                    std::fprintf(stderr, "coopbench: noisy: %s ran while the machine was busy (%d/%d other runnable before/after, %.2f CPUs busy with other work, %u cores)\n",
                             p->id().c_str(), fork.noise.runnable_before,
                             fork.noise.runnable_after, fork.noise.other_cpus, machine.cores);
            }
            if (lines && rep == t.reps.back()) {
                // The point's one line (stdout); the next fork's progress line comes below it.
                std::printf("%-*s  %s\n", static_cast<int>(id_width[p->workload]), p->id().c_str(), line.text(fork.unit).c_str());
                std::fflush(stdout);
            }
        }
    }
    if (progress) std::fprintf(stderr, "\r\033[K");
    for (Reporter* r : reporters) r->finish();
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    die_if_interrupted();
    std::fprintf(stderr, "coopbench: %zu forks (%zu failed, %zu refused, %zu noisy points) in %s\n", measured, failed,
                 refused, noisy_points, opts.out.c_str());
    // The folder's failed forks: after a resume, those measured before it count too.
    const std::size_t failed_in_folder = opts.resume ? failed_forks(opts.out).size() : failed;
    if (failed_in_folder > failed)
        std::fprintf(stderr, "coopbench: %zu forks of %s failed, %zu of them before this resume\n", failed_in_folder,
                     opts.out.c_str(), failed_in_folder - failed);
    return failed_in_folder > 0 ? kExitPointsFailed : 0;
    } catch (const UsageError&) {
        if (made_folder && !opts.resume) fs::remove_all(opts.out, ec);
        throw;
    }
}

}  // namespace coopbench
