#include "harness/sweep.hpp"

#include <benchmark/benchmark.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/external.hpp"  // gopeer (issue 13): external backends' context
#include "harness/machine.hpp"
#include "harness/results.hpp"

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
    j["isolation"] = o.runner.isolation == Isolation::process ? "process" : "none";
    j["timeout_seconds"] = o.runner.timeout_seconds;
    j["memory_limit_bytes"] = o.runner.memory_limit_bytes;
    if (!o.shard.is_null()) j["shard"] = o.shard;  // shard (issue 15)
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
    o.runner.isolation = j.at("isolation").get<std::string>() == "none" ? Isolation::none : Isolation::process;
    o.runner.timeout_seconds = j.at("timeout_seconds").get<double>();
    o.runner.memory_limit_bytes = j.at("memory_limit_bytes").get<std::size_t>();
    if (j.contains("shard")) o.shard = j["shard"];  // shard (issue 15)
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

volatile sig_atomic_t g_interrupted = 0;
const char* g_out_dir = nullptr;

void on_interrupt(int sig) {
    g_interrupted = 1;
    const char msg[] = "\ncoopbench: interrupted; every finished point is saved. Continue with: coopbench run --resume ";
    [[maybe_unused]] auto r1 = write(STDERR_FILENO, msg, sizeof msg - 1);
    if (g_out_dir) [[maybe_unused]] auto r2 = write(STDERR_FILENO, g_out_dir, std::strlen(g_out_dir));
    [[maybe_unused]] auto r3 = write(STDERR_FILENO, "\n", 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

}  // namespace

int run_sweep(const SweepOptions& opts, const std::vector<Point>& points) {
    const Machine machine = detect_machine();
    // The result folder must be writable before anything is measured.
    std::error_code ec;
    fs::create_directories(opts.out, ec);
    {
        auto probe = opts.out / ".coopbench-write-test";
        std::ofstream t(probe);
        if (ec || !t) throw UsageError("cannot write to output folder " + opts.out.string());
        t.close();
        fs::remove(probe, ec);
    }

    nlohmann::json context = machine_context();
    context["plan"] = opts.request.plan.empty() ? "(defaults)" : opts.request.plan;
    context["sweep"] = request_to_json(opts);
    context["points"] = std::to_string(points.size());
    context["repetitions"] = std::to_string(opts.request.repetitions);
    context["isolation"] = opts.runner.isolation == Isolation::process ? "process" : "none";
    context["coopbench_command"] = opts.command.empty() ? std::string("coopbench run") : opts.command;
    add_external_context(context, points);  // gopeer (issue 13): e.g. backend.go.go_version
    // Oversubscription is a legitimate experiment, but say it once and record it.
    unsigned most = 0;
    for (auto& p : points) most = std::max(most, p.options.processors);
    context["oversubscribed"] = most > machine.cores;
    if (most > machine.cores)
        std::fprintf(stderr, "coopbench: note: %u processors requested, this process may use %u cores: oversubscribed\n",
                     most, machine.cores);
    if (!opts.shard.is_null()) {  // shard (issue 15): which part of which sweep this folder holds
        context["shard"] = std::to_string(opts.shard.at("index").get<unsigned>()) + "/" +
                           std::to_string(opts.shard.at("count").get<unsigned>());
        context["sweep_fingerprint"] = opts.shard.at("sweep_fingerprint").get<std::string>();
    }
    if (!opts.resume) write_file(opts.out / "sweep.json", request_to_json(opts));
    write_file(opts.out / "context.json", context.dump(2));

    // Which repetitions are still to be measured.
    const auto done = opts.resume ? completed(opts.out) : std::set<std::pair<std::string, int>>{};
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
        std::fprintf(stderr, "coopbench: resuming %s: %zu measurements done, %zu to go\n", opts.out.c_str(),
                     done.size(), total);

    std::set<std::string> param_set;
    for (auto& p : points)
        for (auto& [k, v] : p.params) param_set.insert(k);
    ResultWriter writer(opts.out, {param_set.begin(), param_set.end()});

    // Google Benchmark's arguments: ours first, the user's --benchmark_* flags after.
    std::vector<std::string> args = {"coopbench"};
    bool has_out = false;
    for (auto& a : opts.benchmark_args) has_out |= a.rfind("--benchmark_out=", 0) == 0;
    if (!has_out) {
        args.push_back("--benchmark_out=" + next_benchmark_json(opts.out).string());
        args.push_back("--benchmark_out_format=json");
    }
    for (auto& a : opts.benchmark_args) args.push_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    benchmark::Initialize(&argc, argv.data());
    for (auto& [k, v] : context.items()) benchmark::AddCustomContext(k, v.is_string() ? v.get<std::string>() : v.dump());

    const bool progress = !opts.quiet && isatty(STDERR_FILENO);
    const auto start = std::chrono::steady_clock::now();
    std::size_t measured = 0, failed = 0;
    const auto& reg = Registry::instance();
    const Machine m = machine;

    std::string out_dir = opts.out.string();
    g_out_dir = out_dir.c_str();
    signal(SIGINT, on_interrupt);
    signal(SIGTERM, on_interrupt);

    benchmark::ClearRegisteredBenchmarks();
    for (auto& t : todo) {
        const Point* p = t.point;
        const BackendEntry* b = reg.backend(p->backend);
        const std::string unit = reg.workloads().at(p->workload).info(m).unit;
        auto next_rep = std::make_shared<std::size_t>(0);
        auto reps = t.reps;
        auto* bm = benchmark::RegisterBenchmark(
            p->id().c_str(), [&, p, b, unit, next_rep, reps](benchmark::State& state) {
                const int rep = reps[std::min(*next_rep, reps.size() - 1)];
                ++*next_rep;
                Measurement meas = measure(*p, opts.runner);
                writer.write(*p, b->family, unit, rep, meas);
                ++measured;
                if (!meas.outcome.ok) ++failed;
                if (progress) {
                    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                    double left = el / static_cast<double>(measured) * static_cast<double>(total - measured);
                    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s %s  elapsed %s, ~%s left%s", measured, total,
                                 p->id().c_str(), meas.outcome.ok ? "ok" : "FAILED", clock_text(el).c_str(),
                                 clock_text(left).c_str(), measured == total ? "\n" : "");
                }
                if (!meas.outcome.ok) {
                    state.SkipWithError(meas.outcome.reason.c_str());
                    for (auto _ : state) {
                    }
                    return;
                }
                for (auto _ : state) state.SetIterationTime(std::max(meas.outcome.seconds, 1e-12));
                state.counters["value"] = meas.outcome.value;
                if (meas.peak_rss_kib >= 0) state.counters["peak_rss_kib"] = meas.peak_rss_kib;
                if (meas.cpu_seconds >= 0) state.counters["cpu_seconds"] = meas.cpu_seconds;
                for (auto& [k, v] : meas.outcome.counters) state.counters[k] = v;
            });
        bm->UseManualTime()->Iterations(1)->Repetitions(static_cast<int>(t.reps.size()))->Unit(benchmark::kMicrosecond);
    }
    if (!todo.empty()) benchmark::RunSpecifiedBenchmarks();
    // No benchmark::Shutdown(): in Google Benchmark 1.7.1 it leaves a dangling context, so a
    // second sweep in the same process (tests) would crash in AddCustomContext.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    std::fprintf(stderr, "coopbench: %zu measurements (%zu failed) in %s\n", measured, failed, opts.out.c_str());
    return 0;
}

}  // namespace coopbench
