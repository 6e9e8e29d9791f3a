// benchmark.json as Google Benchmark's tools read it (harness/gbench_reporter.hpp): a fork is
// one repetition, so Google's compare.py counts forks; every run of a fork under a name of its
// own; the point's aggregates; a program's CPU time from its reply. And the cost estimate per
// backend (WorkloadInfo::cost_on, harness/plan.hpp): the switch points a budget affords warm
// iterations on user-level threads get them; a fork is all warm or one cold run.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "harness/external.hpp"
#include "harness/plan.hpp"
#include "harness/register_backend.hpp"
#include "harness/registry.hpp"
#include "harness/shard.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;

COOPBENCH_REGISTER_BACKEND(coopbench::PthreadsBackend, "pthreads", "POSIX threads");

// A backend of a family that is not OS threads (its code is pthreads': only the name counts
// for the cost estimate, which is all this backend is for).
struct UserLevelStandIn : coopbench::PthreadsBackend {
    static constexpr std::string_view name = "userlevel";
};
COOPBENCH_REGISTER_BACKEND(UserLevelStandIn, "userlevel", "pthreads under a user-level family's name");

namespace {

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("coopbench-gbench-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

nlohmann::json read_json(const fs::path& p) {
    std::ifstream in(p);
    return nlohmann::json::parse(in);
}

// entries — benchmark.json's runs whose "name" is `name`.
std::vector<nlohmann::json> entries(const nlohmann::json& j, const std::string& name) {
    std::vector<nlohmann::json> out;
    for (auto& b : j["benchmarks"])
        if (b.value("name", "") == name) out.push_back(b);
    return out;
}

// A program that iterates and replies its own CPU time: 0.25 s per run, 1 ms measured.
const char* kProgram = R"(#!/bin/sh
if [ "$1" = "--list" ]; then echo '{"protocol": 1, "workloads": ["create"], "iterations": true}'; exit 0; fi
read request
w=$(echo "$request" | sed 's/.*"warmup": *\([0-9]*\).*/\1/')
i=$(echo "$request" | sed 's/.*"iterations": *\([0-9]*\).*/\1/')
n=$((w + i)); out=''
while [ "$n" -gt 0 ]; do
  out="$out${out:+,}{\"status\": \"ok\", \"seconds\": 0.001, \"value\": 10.0, \"check\": \"passed\", \"cpu_seconds\": 0.25}"
  n=$((n - 1))
done
echo "{\"runs\": [$out]}"
)";

}  // namespace

// One point, 3 forks of W=1, I=2: per fork one run named by the point (repetition_index the
// fork, iterations 2, the medians), one per run of the workload under "/iteration:i", and
// after the last fork the four aggregates over the forks. Before: one run per timed
// iteration, repetition_index counting iterations over forks (6 under the point's name).
TEST(GbenchJson, OneRunPerForkEachIterationApartAndTheAggregates) {
    const auto dir = fresh_dir("layout");
    ASSERT_EQ(coopbench::test::cli_in_child({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-P", "1", "-r", "3",
                                             "-W", "1", "-I", "2", "-o", dir.string(), "-q"}),
              0);
    const auto j = read_json(dir / "benchmark.json");
    const std::string id = "pthreads/create/N=10/P=1/manual_time";
    const auto forks = entries(j, id);
    ASSERT_EQ(forks.size(), 3u) << j.dump(1).substr(0, 2000);
    std::set<long> idx;
    for (auto& f : forks) {
        EXPECT_EQ(f.value("run_type", ""), "iteration");
        EXPECT_EQ(f.value("iterations", 0), 2) << "the fork's timed iterations";
        EXPECT_EQ(f.value("repetitions", 0), 3) << "the forks";
        EXPECT_GT(f.value("real_time", 0.0), 0.0);
        EXPECT_GT(f.value("cpu_time", 0.0), 0.0) << "the child's CPU time of its timed iterations";
        idx.insert(f.value("repetition_index", -1L));
    }
    EXPECT_EQ(idx, (std::set<long>{0, 1, 2}));
    // Every run of every fork apart (iteration 0 the cold one, the warm-up here).
    for (int i = 0; i < 3; ++i) {
        const auto runs = entries(j, "pthreads/create/N=10/P=1/iteration:" + std::to_string(i) + "/manual_time");
        ASSERT_EQ(runs.size(), 3u) << "iteration " << i << ": one per fork";
        std::set<long> forks_of;
        for (auto& r : runs) {
            EXPECT_EQ(r.value("iterations", 0), 1);
            forks_of.insert(r.value("repetition_index", -1L));
        }
        EXPECT_EQ(forks_of, (std::set<long>{0, 1, 2}));
    }
    // The aggregates: the median is the forks' median, counted as 3 forks.
    std::vector<double> times;
    for (auto& f : forks) times.push_back(f.value("real_time", 0.0));
    std::sort(times.begin(), times.end());
    for (const char* a : {"mean", "median", "stddev", "cv"}) {
        const auto agg = entries(j, id + "_" + a);
        ASSERT_EQ(agg.size(), 1u) << a;
        EXPECT_EQ(agg[0].value("run_type", ""), "aggregate");
        EXPECT_EQ(agg[0].value("aggregate_name", ""), a);
        EXPECT_EQ(agg[0].value("iterations", 0), 3) << a << ": over the forks";
        if (std::string(a) == "median") {
            EXPECT_DOUBLE_EQ(agg[0].value("real_time", 0.0), times[1]);
        }
        EXPECT_EQ(agg[0].value("aggregate_unit", ""), std::string(a) == "cv" ? "percentage" : "time") << a;
    }
    EXPECT_EQ(j["benchmarks"].size(), 3u + 9u + 4u);
    fs::remove_all(dir);
}

// Google's compare.py (Debian's libbenchmark-tools) on two folders: its U test counts the
// forks (3 vs 3), not the iterations (before: 6 vs 6, p-values from iterations of one
// process as if independent).
TEST(GbenchJson, GooglesCompareCountsForks) {
    const char* env = std::getenv("COOPBENCH_GBENCH_COMPARE");
    const fs::path compare = env ? env : "/usr/share/benchmark/compare.py";
    if (!fs::exists(compare)) GTEST_SKIP() << compare << " is missing (Debian: apt-get install libbenchmark-tools)";
    // Debian's python3, beside Debian's compare.py (a python3 earlier in PATH may lack scipy).
    const std::string py = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
    if (std::system((py + " -c 'import scipy' >/dev/null 2>&1").c_str()) != 0)
        GTEST_SKIP() << "compare.py needs scipy in " << py << " (Debian: apt-get install python3-scipy)";
    const auto a = fresh_dir("cmp-a"), b = fresh_dir("cmp-b");
    for (const auto& d : {a, b})
        ASSERT_EQ(coopbench::test::cli_in_child({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-P", "1", "-r",
                                                 "3", "-W", "1", "-I", "2", "-o", d.string(), "-q"}),
                  0);
    const std::string cmd = py + " " + compare.string() + " --no-color -a benchmarks " + (a / "benchmark.json").string() +
                            " " + (b / "benchmark.json").string() + " 2>&1";
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::array<char, 4096> buf{};
    while (std::fgets(buf.data(), buf.size(), p)) out += buf.data();
    const int rc = ::pclose(p);
    ASSERT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << out;
    EXPECT_NE(out.find("pthreads/create/N=10/P=1/manual_time_pvalue"), std::string::npos) << out;
    EXPECT_NE(out.find("Repetitions: 3 vs 3"), std::string::npos) << out;
    EXPECT_EQ(out.find("Repetitions: 6 vs 6"), std::string::npos) << out;
    EXPECT_NE(out.find("pthreads/create/N=10/P=1/manual_time_median"), std::string::npos) << out;
    fs::remove_all(a);
    fs::remove_all(b);
}

// A program's run carries its own CPU time ("cpu_seconds" in its reply): benchmark.json's
// cpu_time is that (0.25 s = 250000 us), not 0 (before: every go and tokio run read 0).
TEST(GbenchJson, AProgramsCpuTimeIsItsReplys) {
    const auto d = fresh_dir("program");
    fs::create_directories(d);
    { std::ofstream(d / "cpu.sh") << kProgram; }
    fs::permissions(d / "cpu.sh", fs::perms::owner_all);
    std::ofstream(d / "cpu.json") << nlohmann::json{{"name", "cpuprog"}, {"program", "cpu.sh"}}.dump();
    const auto out = d / "out";
    ASSERT_EQ(coopbench::test::cli_in_child({"run", "-b", "cpuprog", "-w", "create", "-p", "N=10", "-P", "1", "-r", "2",
                                             "-W", "1", "-I", "2", "-o", out.string(), "-q"},
                                            {{"COOPBENCH_BACKENDS", d.string()}}),
              0);
    const auto j = read_json(out / "benchmark.json");
    const auto forks = entries(j, "cpuprog/create/N=10/P=1/manual_time");
    ASSERT_EQ(forks.size(), 2u) << j.dump(1).substr(0, 2000);
    for (auto& f : forks) EXPECT_NEAR(f.value("cpu_time", 0.0), 250000.0, 1e-6) << f.dump();
    for (auto& r : entries(j, "cpuprog/create/N=10/P=1/iteration:0/manual_time"))
        EXPECT_NEAR(r.value("cpu_time", 0.0), 250000.0, 1e-6) << r.dump();
    fs::remove_all(d);
}

// A negative CPU time in a reply fails the run (as a negative time does).
TEST(GbenchJson, ANegativeCpuTimeIsRefused) {
    const auto o = coopbench::external_outcome(
        R"({"status": "ok", "seconds": 0.001, "value": 1, "check": "passed", "cpu_seconds": -1})" "\n", 0);
    EXPECT_FALSE(o.ok);
    EXPECT_NE(o.reason.find("negative CPU time"), std::string::npos) << o.reason;
    const auto ok = coopbench::external_outcome(
        R"({"status": "ok", "seconds": 0.001, "value": 1, "check": "passed", "cpu_seconds": 0.5})" "\n", 0);
    EXPECT_TRUE(ok.ok);
    EXPECT_DOUBLE_EQ(ok.cpu_seconds, 0.5);
}

namespace {
coopbench::WorkloadInfo switch_info() {
    return coopbench::Registry::instance().workloads().at("switch").info(coopbench::Machine{2});
}
const coopbench::Params kQuick1000 = {{"T", "1000"}, {"K", "2000"}};
}  // namespace

// The quick plan's switch at T=1000 (2·10^6 switches): on user-level threads (20-505 ns a
// switch in results/reference/) a warm-up and timed warm iterations within the default 2 s;
// before, every backend was estimated at 2 us a switch (4 s a run) and ran once, cold.
TEST(CostEstimate, UserLevelSwitchPointsGetWarmIterations) {
    const auto info = switch_info();
    for (const char* b : {"native", "native-ws", "go", "tokio", "boostfiber/work_stealing"}) {
        coopbench::Point p;
        p.backend = b;
        p.options.processors = 2;
        const auto it = coopbench::default_iterations(info, kQuick1000, 2.0, coopbench::cost_of(p));
        EXPECT_GE(it.warmup, 1) << b;
        EXPECT_GE(it.measure, 2) << b;
    }
    // OS threads' switch is a kernel context switch (0.8-5.2 us measured): one run at T=1000
    // exceeds the budget, so one cold run; at T=100 a warm-up and a warm timed run fit.
    coopbench::CostOf os{"pthreads", "pthreads", 2};
    auto it = coopbench::default_iterations(info, kQuick1000, 2.0, os);
    EXPECT_EQ(it.warmup, 0);
    EXPECT_EQ(it.measure, 1);
    it = coopbench::default_iterations(info, {{"T", "100"}, {"K", "2000"}}, 2.0, os);
    EXPECT_GE(it.warmup, 1);
    EXPECT_GE(it.measure, 1);
}

// expand() sizes each point by its own backend's estimate.
TEST(CostEstimate, ExpandSizesEachPointByItsBackend) {
    coopbench::SweepRequest req;
    req.backends = {"pthreads", "userlevel"};
    req.workloads = {"switch"};
    req.params["T"] = {"1000"};
    req.params["K"] = {"2000"};
    req.processors = {2};
    const auto points = coopbench::expand(req, coopbench::Machine{2});
    ASSERT_EQ(points.size(), 2u);
    for (auto& p : points) {
        if (p.backend == "userlevel") {
            EXPECT_GE(p.warmup, 1) << p.id();
            EXPECT_GE(p.iterations, 2) << p.id();
        } else {
            EXPECT_EQ(p.warmup, 0) << p.id();
            EXPECT_EQ(p.iterations, 1) << p.id();
        }
    }
    // --shard (and the dry run's total) by the same estimate, times the fork's runs: the OS
    // threads' one run of 10 s against the user-level point's 4 runs of 0.5 s.
    const auto& os = points[0].backend == "pthreads" ? points[0] : points[1];
    const auto& user = points[0].backend == "pthreads" ? points[1] : points[0];
    const coopbench::Machine m{2};
    EXPECT_GT(coopbench::point_cost(os, 1, m), 3 * coopbench::point_cost(user, 1, m));
    auto more = user;
    more.warmup = 1;
    more.iterations = 9;
    EXPECT_GT(coopbench::point_cost(more, 1, m), 2 * coopbench::point_cost(user, 1, m)) << "10 runs against 4";
}

// A fork is all warm or one cold run: when only two runs fit the budget, a warm-up and one
// timed run (before: W=0, I=2, whose first timed run was the cold one among warm ones).
TEST(CostEstimate, NeverAColdRunAmongTimedOnes) {
    coopbench::WorkloadInfo info;
    for (double per_run : {0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.5, 2.5, 10.0}) {
        info.cost = [per_run](const coopbench::Params&) { return per_run; };
        const auto it = coopbench::default_iterations(info, {}, 2.0);
        EXPECT_TRUE(it.warmup >= 1 || it.measure == 1) << per_run << " s: W=" << it.warmup << " I=" << it.measure;
        EXPECT_LE((it.warmup + it.measure) * per_run, 2.0 + 1e-9 + (it.warmup + it.measure == 1 ? per_run : 0)) << per_run;
    }
    info.cost = [](const coopbench::Params&) { return 0.9; };
    const auto two = coopbench::default_iterations(info, {}, 2.0);
    EXPECT_EQ(two.warmup, 1);
    EXPECT_EQ(two.measure, 1);
}

// The go and tokio programs (when this build has them) reply each run's CPU time, every run
// of a fork its own (before: none, and benchmark.json's cpu_time was 0).
TEST(GbenchJson, GoAndTokioReplyEachRunsCpuTime) {
    coopbench::load_external_backends();
    int tried = 0;
    for (const char* name : {"go", "tokio"}) {
        const coopbench::ExternalBackend* b = coopbench::external_backend(name);
        if (!b) continue;
        ++tried;
        coopbench::Point p;
        p.backend = name;
        p.workload = "switch";
        p.params = {{"T", "2"}, {"K", "1000"}};
        p.options.processors = 1;
        p.warmup = 1;
        p.iterations = 2;
        const auto dir = fresh_dir(std::string("reply-") + name);
        fs::create_directories(dir);
        { std::ofstream(dir / "request") << coopbench::external_request(p, false) << "\n"; }
        std::string cmd;
        for (auto& a : b->command) cmd += "'" + a + "' ";
        cmd += "< '" + (dir / "request").string() + "' 2>/dev/null";
        std::string out;
        FILE* f = ::popen(cmd.c_str(), "r");
        ASSERT_NE(f, nullptr);
        std::array<char, 4096> buf{};
        while (std::fgets(buf.data(), buf.size(), f)) out += buf.data();
        ::pclose(f);
        const auto last = out.substr(out.find_last_of('\n', out.size() - 2) == std::string::npos
                                         ? 0
                                         : out.find_last_of('\n', out.size() - 2) + 1);
        const auto j = nlohmann::json::parse(last);
        ASSERT_EQ(j.at("runs").size(), 3u) << name << ": " << out;
        for (auto& r : j.at("runs")) {
            ASSERT_TRUE(r.contains("cpu_seconds")) << name << ": " << r.dump();
            EXPECT_GE(r.at("cpu_seconds").get<double>(), 0.0) << name;
        }
        fs::remove_all(dir);
    }
    if (tried == 0) GTEST_SKIP() << "this build has neither the go nor the tokio program";
}
