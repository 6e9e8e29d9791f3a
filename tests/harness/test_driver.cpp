// The driver through cli_main, as users run it: bad input, result files, resume, failed
// points (crash, hang, refused threads, wrong answers) recorded while the sweep goes on.
#include <gtest/gtest.h>
#include "build_facts.hpp"  // generated: COOPBENCH_SOURCE_DIR (harness/CMakeLists.txt)
#include <signal.h>
#include <sys/wait.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>
#include <climits>

#include "tests/support/cli.hpp"
#include "tests/support/cli_background.hpp"
#include "tests/support/csv.hpp"
#include "harness/cli.hpp"
#include "harness/external.hpp"
#include "harness/machine.hpp"
#include "harness/register_backend.hpp"
#include "harness/results.hpp"
#include "harness/noise_guard.hpp"
#include "harness/schema.hpp"
#include "harness/sweep.hpp"
#include "harness/runner.hpp"
#include "harness/plan.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "workloads/apps/channel.hpp"

namespace fs = std::filesystem;
using coopbench::PthreadsBackend;

// FaultyBackend — pthreads that crashes, hangs or refuses threads, by its `mode` option.
struct FaultyBackend : PthreadsBackend {
    static constexpr std::string_view name = "faulty";
    static inline std::string mode;
    static inline std::atomic<int> spawned{0};
    class Runtime : public PthreadsBackend::Runtime {
      public:
        explicit Runtime(const coopbench::RuntimeOptions& o) : PthreadsBackend::Runtime(o), o_hold_file(o.option("hold_file")) {
            mode = o.option("mode");
        }
        std::string o_hold_file;
        template <class F>
        void run(F&& f) {
            if (mode == "crash") raise(SIGSEGV);
        if (mode == "hold") {  // stay in the point while the file exists (a long point)
            while (fs::exists(o_hold_file)) usleep(20000);
        }
            if (mode == "hang")
                for (;;) pause();
            PthreadsBackend::Runtime::run(std::forward<F>(f));
        }
    };
    template <class F>
    static Thread spawn(F&& f) {
        if (mode == "refuse" && ++spawned > 3) throw coopbench::SpawnError("faulty_create: EAGAIN");
        if (mode == "crash-third-run" && ++spawned > 25) raise(SIGSEGV);  // create N=10: in the third run
        return PthreadsBackend::spawn(std::forward<F>(f));
    }
};
COOPBENCH_REGISTER_BACKEND_VARIANT(FaultyBackend, "faulty/crash", "crashes", {{"mode", "crash"}});
COOPBENCH_REGISTER_BACKEND_VARIANT(FaultyBackend, "faulty/hang", "hangs", {{"mode", "hang"}});
COOPBENCH_REGISTER_BACKEND_VARIANT(FaultyBackend, "faulty/refuse", "refuses the 4th thread", {{"mode", "refuse"}});
COOPBENCH_REGISTER_BACKEND_VARIANT(FaultyBackend, "faulty/hold", "runs while --backend-opt hold_file exists",
                                   {{"mode", "hold"}}, {{"hold_file", "", "a file; the point runs while it exists"}});
COOPBENCH_REGISTER_BACKEND_VARIANT(FaultyBackend, "faulty/crash-third-run", "crashes in its third run of create N=10",
                                   {{"mode", "crash-third-run"}});
COOPBENCH_REGISTER_BACKEND(coopbench::PthreadsBackend, "pthreads", "POSIX threads");

// CountingBackend and the workload count-runs: the workload counts its own runs in this
// process and the backend its runtimes, so a row says which run of which runtime it was.
struct CountingBackend : PthreadsBackend {
    static constexpr std::string_view name = "counting";
    static inline int runtimes = 0;
    class Runtime : public PthreadsBackend::Runtime {
      public:
        explicit Runtime(const coopbench::RuntimeOptions& o) : PthreadsBackend::Runtime(o) { ++runtimes; }
    };
};
struct CountRuns {
    static inline int runs = 0;
    static coopbench::WorkloadInfo info(const coopbench::Machine&) {
        coopbench::WorkloadInfo w;
        w.name = "count-runs";
        w.origin = "tests/harness/test_driver.cpp";
        w.description = "counts its own runs in this process";
        w.unit = "runs";
        w.plans["tiny"] = {coopbench::Grid{}};
        return w;
    }
    template <coopbench::Backend B>
    static coopbench::Outcome run(const coopbench::Context&) {
        ++runs;
        auto o = coopbench::Outcome::measured(1e-6 * runs, runs);
        o.counters["runtimes"] = CountingBackend::runtimes;
        return o;
    }
};
[[maybe_unused]] static const bool counting_registered = [] {
    auto& reg = coopbench::Registry::instance();
    reg.add_workload("count-runs", {[](const coopbench::Machine& m) { return CountRuns::info(m); }});
    coopbench::BackendEntry e;
    e.name = e.family = "counting";
    e.description = "pthreads that counts its runtimes";
    e.origin = __FILE__;
    e.preemptive = true;
    e.capacity = [](const coopbench::RuntimeOptions&, std::size_t) { return std::optional<std::string>(); };
    e.min_stack_size = coopbench::min_stack_size<CountingBackend>();
    e.runners["count-runs"] = &coopbench::run_point<CountingBackend, CountRuns>;
    reg.add_backend(std::move(e));
    return true;
}();

namespace {

// cli — `coopbench ARGS...` in a child process (the tests' one fork runner,
// tests/support): a test's own process keeps no state of the run. (cli_main itself runs any
// number of times in one process: DriverRun.TwoSweepsInOneProcess.)
int cli(const std::vector<std::string>& args) { return coopbench::test::cli_in_child(args); }

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("coopbench-test-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

struct Row {
    std::map<std::string, std::string> f;
    const std::string& operator[](const std::string& k) const { return f.at(k); }
};

// read_csv — results.csv's rows by the tests' one CSV reader (tests/support/csv.hpp); every
// row must have the header's number of fields (a torn or glued line would not).
std::vector<Row> read_csv(const fs::path& p) {
    const auto raw = coopbench::test::csv_rows(p);
    for (std::size_t i = 1; i < raw.size(); ++i)
        EXPECT_EQ(raw[i].size(), raw[0].size()) << p << " line " << i + 1;
    std::vector<Row> rows;
    for (auto& m : coopbench::test::csv_table(p)) rows.push_back(Row{std::move(m)});
    return rows;
}

// children — the pids whose parent is `parent` (from /proc/<pid>/stat).
std::vector<pid_t> children(pid_t parent) {
    std::vector<pid_t> out;
    for (auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream st(e.path() / "stat");
        std::string line;
        if (!std::getline(st, line)) continue;
        const auto rp = line.rfind(')');
        if (rp == std::string::npos) continue;
        std::istringstream rest(line.substr(rp + 2));
        char state;
        pid_t ppid;
        rest >> state >> ppid;
        if (ppid == parent) out.push_back(static_cast<pid_t>(std::stol(name)));
    }
    return out;
}

bool alive(pid_t pid) {
    // A zombie counts as gone: it runs nothing.
    std::ifstream st("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!std::getline(st, line)) return false;
    const auto rp = line.rfind(')');
    return rp != std::string::npos && rp + 2 < line.size() && line[rp + 2] != 'Z';
}

}  // namespace

TEST(DriverInput, BadInputIsOneLineAndExitCodeTwo) {
    const std::vector<std::vector<std::string>> bad = {
        {"run", "--backends", "pthread"},                     // unknown backend
        {"run", "--workloads", "creat"},                      // unknown workload
        {"run", "--workloads", "create", "--param", "Q=1"},   // no such parameter
        {"run", "--workloads", "create", "--param", "N=0"},   // non-positive size
        {"run", "--workloads", "create", "--param", "N=ten"}, // not an integer
        {"run", "--plan", "quik"},                            // unknown plan
        {"run", "--processors", "0"},                         // impossible
        {"run", "--repetitions", "0"},
        {"run", "--workloads", "create", "--out", "/proc/coopbench-cannot-write"},  // unwritable
        {"run", "--no-such-flag"},
        {"run", "--backend-opt", "nosuch=1", "--backends", "pthreads"},
        {"frobnicate"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--param", "N=10^30"},       // overflows int64
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--param", "N=99999999999999999999"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--param", "N=1e-3"},        // a fraction, not 1
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--param", "N=2.5"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--param", "N=1e400"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--benchmark_repetitions=abc"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--benchmark_repetitions=0"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--benchmark_repetitions=1e30"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--benchmark_nosuch=1"},
        {"run", "--dry-run", "-b", "pthreads", "--workloads", "create", "--benchmark_filter=("},     // a bad regex
        {"run", "--dry-run", "-b", "pthreads", "--processors", "99999999999"},
        {"run", "--dry-run", "-b", "pthreads", "-w", "create", "--stack-size", "12"},  // below PTHREAD_STACK_MIN
        {"run", "--dry-run", "-b", "pthreads", "-w", "create", "--warmup", "-2"},
        {"run", "--dry-run", "-b", "pthreads", "-w", "create", "--iterations", "0"},
        {"run", "--dry-run", "-b", "pthreads", "-w", "create", "--benchmark_out_format=console"},
    };
    for (auto& args : bad) {
        testing::internal::CaptureStderr();
        int rc = cli(args);
        std::string err = testing::internal::GetCapturedStderr();
        std::string joined;
        for (auto& a : args) joined += a + " ";
        EXPECT_EQ(rc, 2) << joined;
        EXPECT_NE(err.find("coopbench"), std::string::npos) << joined << ": " << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << joined << ": " << err;
    }
    testing::internal::CaptureStderr();
    cli({"run", "--backends", "pthread"});
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("did you mean pthreads"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    // A stack below the backend's minimum is refused with the minimum (a smaller one crashed the point).
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "--stack-size", "12"}), 2);
    err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("minimum of pthreads: " + std::to_string(PTHREAD_STACK_MIN) + " bytes"), std::string::npos) << err;
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "--stack-size", std::to_string(PTHREAD_STACK_MIN)}), 0);
    testing::internal::GetCapturedStdout();
}

TEST(DriverInput, ListAndDryRun) {
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"list"}), 0);
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("pthreads"), std::string::npos);
    EXPECT_NE(out.find("create"), std::string::npos);
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "-p", "N=1,1e2,10^3", "-P", "1,2"}), 0);
    out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("pthreads/create/N=1000/P=2"), std::string::npos) << out;
    EXPECT_NE(out.find("6 points"), std::string::npos) << out;
    // Exact numbers: a mantissa with a fraction that the exponent makes whole.
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "-p", "N=2.5e3,10^18,9223372036854775807", "-P", "1"}), 0);
    out = testing::internal::GetCapturedStdout();
    EXPECT_NE(out.find("pthreads/create/N=2500/P=1"), std::string::npos) << out;
    EXPECT_NE(out.find("pthreads/create/N=1000000000000000000/P=1"), std::string::npos) << out;
    EXPECT_NE(out.find("pthreads/create/N=9223372036854775807/P=1"), std::string::npos) << out;
}

TEST(DriverRun, WritesCsvJsonlAndBenchmarkJson) {
    auto dir = fresh_dir("files");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "--plan", "tiny", "-w", "create,switch", "-r", "2", "-W", "1", "-I", "2", "-o",
                   dir, "-q"}),
              0);
    auto rows = read_csv(dir / "results.csv");
    // create: N=1,100; switch: T=1,4 (K=100) => 4 points x 2 forks x (1 warm-up + 2 measured)
    ASSERT_EQ(rows.size(), 24u);
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (auto& r : rows) {
        EXPECT_EQ(r["status"], "ok") << r["reason"];
        EXPECT_FALSE(r["value"].empty());
        EXPECT_FALSE(r["peak_rss_kib"].empty());
        EXPECT_FALSE(r["cpu_seconds"].empty());
        EXPECT_FALSE(r["load_before"].empty());
        EXPECT_FALSE(r["runnable_after"].empty());
        EXPECT_FALSE(r["steal_cpus"].empty()) << "Linux counts steal since 2.6.11";
        EXPECT_TRUE(r["noisy"] == "true" || r["noisy"] == "false") << r["noisy"];
        EXPECT_EQ(r["phase"], r["iteration"] == "0" ? "warmup" : "measure");
        EXPECT_TRUE(seen.emplace(r["point"], r["repetition"], r["iteration"]).second);
    }
    std::ifstream jl(dir / "points.jsonl");
    std::string line;
    int n = 0;
    while (std::getline(jl, line)) {
        auto j = nlohmann::json::parse(line);
        EXPECT_TRUE(j.contains("params"));
        ++n;
    }
    EXPECT_EQ(n, 24);
    std::ifstream bj(dir / "benchmark.json");
    auto j = nlohmann::json::parse(bj);
    for (auto key : {"cpu_model", "cpu_id", "cpu_mitigations", "kernel", "compiler", "build_type", "git_commit", "sweep", "numa_nodes", "sockets"})
        EXPECT_TRUE(j["context"].contains(key)) << key;
    // context.json: typed as schema.json's context says: numbers as numbers, the
    // sweep an object, every key listed there, every key each run writes present.
    const auto ctx = nlohmann::json::parse(std::ifstream(dir / "context.json"));
    EXPECT_EQ(coopbench::context_problems(ctx), std::vector<std::string>{});
    EXPECT_TRUE(ctx["cores_available"].is_number_integer());
    EXPECT_TRUE(ctx["sweep"].is_object());
    EXPECT_TRUE(ctx["oversubscribed"].is_boolean());
    // Google Benchmark's JSON (harness/gbench_reporter.hpp): a fork is a repetition, one run
    // named by the point (4 points x 2 forks, 2 timed iterations each), each run of the fork
    // under "/iteration:i" (4 x 2 x 3), the 4 aggregates of each point; manual time, the
    // child's CPU time.
    ASSERT_EQ(j["benchmarks"].size(), 8u + 24u + 16u);
    std::map<std::string, std::set<long>> indexes;
    int runs = 0, aggregates = 0;
    for (auto& b : j["benchmarks"]) {
        EXPECT_EQ(b.value("time_unit", ""), "us");
        EXPECT_GT(b.value("real_time", 0.0), 0.0);
        EXPECT_TRUE(b.contains("cpu_time"));
        EXPECT_EQ(b.value("repetitions", 0), 2);
        if (b.value("run_type", "") == "aggregate") {
            ++aggregates;
        } else if (b.value("run_name", "").find("/iteration:") != std::string::npos) {
            ++runs;
        } else {
            EXPECT_EQ(b.value("iterations", 0), 2);
            indexes[b.value("run_name", "")].insert(b.value("repetition_index", -1L));
        }
    }
    EXPECT_EQ(runs, 24);
    EXPECT_EQ(aggregates, 16);
    EXPECT_EQ(indexes.size(), 4u);
    for (auto& [name, idx] : indexes) EXPECT_EQ(idx, (std::set<long>{0, 1})) << name;
    // The whole command line, so a result folder says how to make it again.
    const std::string command = j["context"].value("coopbench_command", "");
    EXPECT_NE(command.find("run -b pthreads --plan tiny -w create,switch -r 2"), std::string::npos) << command;
    EXPECT_TRUE(fs::exists(dir / "context.json"));
    EXPECT_TRUE(fs::exists(dir / "sweep.json"));
    fs::remove_all(dir);
}

TEST(DriverRun, ResumeMeasuresOnlyWhatIsMissing) {
    auto dir = fresh_dir("resume");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "--plan", "tiny", "-w", "create,lock-local", "-r", "2", "-W", "1", "-I", "1",
                   "-o", dir, "-q"}),
              0);
    auto full = read_csv(dir / "results.csv");
    ASSERT_EQ(full.size(), 16u);  // 4 points x 2 forks x 2 iterations
    // Simulate a driver killed while writing the fourth row: three complete lines (one
    // whole fork and the first row of the next), then the first half of the fourth with no
    // newline (in results.csv and points.jsonl alike).
    auto tear = [](const fs::path& p, int keep) {
        std::ifstream in(p);
        std::vector<std::string> lines;
        for (std::string l; std::getline(in, l);) lines.push_back(l);
        in.close();
        std::ofstream out(p, std::ios::trunc);
        for (int i = 0; i < keep; ++i) out << lines.at(static_cast<std::size_t>(i)) << "\n";
        const std::string& torn = lines.at(static_cast<std::size_t>(keep));
        out << torn.substr(0, torn.size() / 2);
    };
    tear(dir / "results.csv", 4);   // header + 3 rows
    tear(dir / "points.jsonl", 3);  // 3 rows
    testing::internal::CaptureStderr();
    ASSERT_EQ(cli({"run", "--resume", dir.string(), "-q"}), 0);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("torn last line"), std::string::npos) << err;
    EXPECT_NE(err.find("unfinished fork"), std::string::npos) << err;  // the half-written fork is measured again
    {
        // Every line complete: 1 header + 16 rows, each with the header's field count.
        std::ifstream in(dir / "results.csv");
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 17) << text;
        std::ifstream jl(dir / "points.jsonl");
        int n = 0;
        for (std::string l; std::getline(jl, l); ++n) EXPECT_TRUE(nlohmann::json::accept(l)) << l;
        EXPECT_EQ(n, 16);
    }
    auto rows = read_csv(dir / "results.csv");
    ASSERT_EQ(rows.size(), 16u);
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    for (auto& r : rows) EXPECT_TRUE(seen.emplace(r["point"], r["repetition"], r["iteration"]).second) << r["point"];
    EXPECT_EQ(seen.size(), 16u);
    EXPECT_TRUE(fs::exists(dir / "benchmark-2.json"));
    // The context still says how the folder was made, and that it was resumed.
    std::ifstream cin(dir / "context.json");
    const auto ctx = nlohmann::json::parse(cin);
    EXPECT_NE(ctx.at("coopbench_command").get<std::string>().find("--plan tiny"), std::string::npos) << ctx.dump(2);
    EXPECT_NE(ctx.at("resumed").get<std::string>().find("--resume " + dir.string()), std::string::npos) << ctx.dump(2);
    EXPECT_EQ(coopbench::context_problems(ctx), std::vector<std::string>{});
    fs::remove_all(dir);
}

// kill -9 of the driver mid-point: its measuring child dies with it (PR_SET_PDEATHSIG), and
// --resume then completes the sweep with no point lost or duplicated.
TEST(DriverRun, KilledDriverLeavesNoChildAndResumeCompletes) {
    auto dir = fresh_dir("orphan");
    const fs::path hold = fs::temp_directory_path() / ("coopbench-hold-" + std::to_string(getpid()));
    { std::ofstream(hold) << "hold\n"; }
    const pid_t driver = coopbench::test::cli_started({"run", "-b", "pthreads,faulty/hold", "-w", "create", "-p",
                                                       "N=1,10", "--backend-opt", "hold_file=" + hold.string(), "-W",
                                                       "1", "-I", "1", "-o", dir.string(), "-q"});
    ASSERT_GE(driver, 0);
    // Wait (generously) until the driver measures a point in a child: after sweep.json is
    // written, so the child is not one the driver starts before its sweep (the external
    // backends' `--list` probe at start-up).
    std::vector<pid_t> kids;
    coopbench::test::eventually([&] {
        if (fs::exists(dir / "sweep.json")) kids = children(driver);
        return !kids.empty();
    });
    ASSERT_FALSE(kids.empty()) << "the driver never started a measuring child";
    coopbench::test::kill_and_reap(driver);
    coopbench::test::eventually([&] { return std::none_of(kids.begin(), kids.end(), alive); });
    for (pid_t k : kids) {
        EXPECT_FALSE(alive(k)) << "measuring child " << k << " outlived its killed driver";
        if (alive(k)) kill(k, SIGKILL);
    }
    fs::remove(hold);
    ASSERT_EQ(cli({"run", "--resume", dir.string(), "-q"}), 0);
    auto rows = read_csv(dir / "results.csv");
    // Per-iteration rows: every fork whole (W+I rows, iterations 0..W+I-1), none twice.
    std::set<std::tuple<std::string, std::string, std::string>> seen;
    std::map<std::string, int> per_point;
    for (auto& r : rows) {
        EXPECT_TRUE(seen.emplace(r["point"], r["repetition"], r["iteration"]).second)
            << "duplicated: " << r["point"] << " iteration " << r["iteration"];
        EXPECT_EQ(r["status"], "ok") << r["point"] << ": " << r["reason"];
        ++per_point[r["point"]];
    }
    EXPECT_EQ(per_point.size(), 4u);  // pthreads and faulty/hold, N=1 and N=10
    for (auto& [point, n] : per_point) EXPECT_EQ(n, 2) << point;  // -W 1 -I 1
    fs::remove_all(dir);
}

// More processors than this process may use: allowed, said once, recorded in the context.
TEST(DriverRun, OversubscriptionIsSaidAndRecorded) {
    cpu_set_t set;
    CPU_ZERO(&set);
    ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    const int over = CPU_COUNT(&set) + 1;
    for (int p : {1, over}) {
        auto dir = fresh_dir("oversubscribed-" + std::to_string(p));
        testing::internal::CaptureStderr();
        ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=4", "-P", std::to_string(p), "-o", dir, "-q"}), 0);
        const std::string err = testing::internal::GetCapturedStderr();
        std::ifstream in(dir / "context.json");
        auto ctx = nlohmann::json::parse(in);
        EXPECT_EQ(ctx.at("oversubscribed").get<bool>(), p == over) << p;
        const auto first = err.find("processors requested");
        EXPECT_EQ(first != std::string::npos, p == over) << err;
        if (first != std::string::npos) {
            EXPECT_EQ(err.find("processors requested", first + 1), std::string::npos) << err;
        }
        fs::remove_all(dir);
    }
}

TEST(DriverRun, FailedPointsAreRecordedAndTheSweepGoesOn) {
    auto dir = fresh_dir("faults");
    ASSERT_EQ(cli({"run", "-b", "faulty/crash,faulty/hang,faulty/refuse,pthreads", "-w", "create", "-p", "N=10", "--timeout", "5", "-W", "0", "-I", "1", "-o", dir, "-q"}),
              coopbench::kExitPointsFailed);
    auto rows = read_csv(dir / "results.csv");
    ASSERT_EQ(rows.size(), 4u);
    std::map<std::string, Row> by;
    for (auto& r : rows) by[r["backend"]] = r;
    EXPECT_EQ(by["faulty/crash"]["status"], "failed");
    EXPECT_NE(by["faulty/crash"]["reason"].find("SEGV"), std::string::npos) << by["faulty/crash"]["reason"];
    EXPECT_EQ(by["faulty/hang"]["status"], "failed");
    EXPECT_NE(by["faulty/hang"]["reason"].find("timeout"), std::string::npos) << by["faulty/hang"]["reason"];
    EXPECT_EQ(by["faulty/refuse"]["status"], "failed");
    EXPECT_NE(by["faulty/refuse"]["reason"].find("EAGAIN at 3 threads"), std::string::npos)
        << by["faulty/refuse"]["reason"];
    EXPECT_EQ(by["pthreads"]["status"], "ok") << by["pthreads"]["reason"];
    fs::remove_all(dir);
}

// The exit code says whether a point failed (kExitPointsFailed, as pytest's 1), so a
// caller need not read stderr: 0 when every fork succeeded, 3 when one failed, and after
// --resume also when a fork measured before the resume failed (the code describes the
// folder). The failed run still writes every result file.
TEST(DriverRun, ExitCodeSaysWhetherAPointFailed) {
    auto ok = fresh_dir("exit-ok");
    EXPECT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-o", ok, "-q"}), 0);
    auto bad = fresh_dir("exit-failed");
    EXPECT_EQ(cli({"run", "-b", "faulty/crash,pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-o", bad, "-q"}),
              coopbench::kExitPointsFailed);
    for (const char* f : {"results.csv", "points.jsonl", "benchmark.json", "context.json", "sweep.json"})
        EXPECT_TRUE(fs::exists(bad / f)) << f;
    // Nothing left to measure: the resume measures nothing, and the folder still holds a failure.
    EXPECT_EQ(cli({"run", "--resume", bad.string(), "-q"}), coopbench::kExitPointsFailed);
    EXPECT_EQ(cli({"run", "--resume", ok.string(), "-q"}), 0);
    EXPECT_NE(coopbench::kExitPointsFailed, 0);
    EXPECT_NE(coopbench::kExitPointsFailed, 2);  // bad input
    fs::remove_all(ok);
    fs::remove_all(bad);
}

// context.json records each backend's channel (the apps workloads' channels differ by
// backend: its own Channel<T>, or the generic one from its mutex and condition variables),
// beside the backend's other facts, for every backend of the sweep and no other.
TEST(DriverRun, ContextRecordsEachBackendsChannel) {
    auto dir = fresh_dir("channel");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-o", dir, "-q"}), 0);
    const auto ctx = nlohmann::json::parse(std::ifstream(dir / "context.json"));
    EXPECT_EQ(coopbench::context_problems(ctx), std::vector<std::string>{});
    ASSERT_TRUE(ctx.contains("backend.pthreads.channel")) << ctx.dump(2);
    EXPECT_EQ(ctx["backend.pthreads.channel"], std::string(coopbench::apps::channel_kind<coopbench::PthreadsBackend>()));
    EXPECT_EQ(coopbench::Registry::instance().backend("pthreads")->channel,
              std::string(coopbench::apps::channel_kind<coopbench::PthreadsBackend>()));
    EXPECT_FALSE(ctx.contains("backend.faulty/crash.channel"));  // not in this sweep
    fs::remove_all(dir);
}

// A point a system limit refuses before it runs is a result (status refused, with the
// reason), not a failure: the exit code stays 0 (before: 3, "some points failed", on every
// small machine's quick plan), and a resume counts the fork as done.
TEST(DriverRun, SystemLimitRefusesEarlyAndCleanly) {
    auto dir = fresh_dir("limit");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=100000000", "-o", dir, "-q"}), 0);
    auto rows = read_csv(dir / "results.csv");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["status"], "refused");
    EXPECT_NE(rows[0]["reason"].find("system limit"), std::string::npos) << rows[0]["reason"];
    EXPECT_EQ(cli({"run", "--resume", dir}), 0);
    EXPECT_EQ(read_csv(dir / "results.csv").size(), 1u);  // not measured again
    fs::remove_all(dir);
}

TEST(DriverRun, EveryMicroSelfCheckCatchesAnInjectedFault) {
    auto dir = fresh_dir("inject");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "--plan", "tiny", "-o", dir, "-q", "--inject-fault"}), coopbench::kExitPointsFailed);
    auto rows = read_csv(dir / "results.csv");
    ASSERT_FALSE(rows.empty());
    for (auto& r : rows) {
        EXPECT_EQ(r["status"], "failed") << r["point"];
        EXPECT_NE(r["reason"].find("self-check failed"), std::string::npos) << r["point"] << ": " << r["reason"];
    }
    fs::remove_all(dir);
}

TEST(DriverFormat, CsvQuotingRoundTrips) {
    for (std::string s : {"plain", "with,comma", "with \"quote\"", "", "a,\"b\",c"}) {
        auto line = coopbench::csv_field(s) + "," + coopbench::csv_field("x");
        auto f = coopbench::parse_csv_line(line);
        ASSERT_EQ(f.size(), 2u) << line;
        EXPECT_EQ(f[0], s);
    }
}

// A point's runner is chosen once, by the kind of its backend (harness/runner.hpp): a C++
// backend's forked child, or this process with --isolation none; a C++ backend has no
// program runner (an external backend's, tested through the binary in tests/external).
TEST(DriverRunner, OneRunnerPerKindOfBackend) {
    coopbench::Point p;
    p.backend = "pthreads";
    p.workload = "create";
    coopbench::RunnerOptions forked, inline_;
    inline_.isolation = coopbench::Isolation::none;
    const coopbench::PointRunner& a = coopbench::runner_for(p, forked);
    const coopbench::PointRunner& b = coopbench::runner_for(p, inline_);
    EXPECT_NE(&a, &b);
    EXPECT_EQ(&a, &coopbench::runner_for(p, forked));  // one runner per kind, not per point
    EXPECT_EQ(coopbench::program_runner("pthreads"), nullptr);
    // Both measure the same point, each in its own way.
    p.params = {{"N", "4"}};
    p.options.processors = 1;
    p.warmup = 0;
    p.iterations = 1;
    for (const auto* r : {&a, &b}) {
        const auto m = r->measure(p, r == &a ? forked : inline_);
        ASSERT_EQ(m.runs.size(), 1u);
        EXPECT_TRUE(m.runs[0].ok) << m.runs[0].reason;
    }
}

TEST(DriverFormat, OutcomeJsonRoundTrips) {
    coopbench::Outcome o = coopbench::Outcome::measured(1.5, 42);
    o.counters["x"] = 3;
    auto back = coopbench::outcome_from_json(coopbench::outcome_to_json(o));
    EXPECT_TRUE(back.ok);
    EXPECT_DOUBLE_EQ(back.seconds, 1.5);
    EXPECT_DOUBLE_EQ(back.value, 42);
    EXPECT_DOUBLE_EQ(back.counters.at("x"), 3);
}

// Warm-up and measured iterations (JMH's rules): W+I runs of the workload in each fork, inside
// one runtime instance, numbered from the cold iteration 0; each fork a fresh process.
TEST(DriverIterations, WarmupAndIterationsAreCountedInOneRuntimePerFork) {
    auto dir = fresh_dir("iterations");
    ASSERT_EQ(cli({"run", "-b", "counting", "-w", "count-runs", "-r", "2", "-W", "2", "-I", "3", "-o", dir, "-q"}), 0);
    auto rows = read_csv(dir / "results.csv");
    ASSERT_EQ(rows.size(), 10u);  // 2 forks x (2 + 3)
    std::map<std::string, int> measured;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        const int iteration = std::stoi(r["iteration"]);
        EXPECT_EQ(r["repetition"], std::to_string(i / 5));
        EXPECT_EQ(iteration, static_cast<int>(i % 5));
        EXPECT_EQ(r["phase"], iteration < 2 ? "warmup" : "measure") << iteration;
        // The workload's own count: run iteration+1 of this process (a fresh process per fork).
        EXPECT_EQ(std::stod(r["value"]), iteration + 1) << r["point"] << " iteration " << iteration;
        EXPECT_EQ(nlohmann::json::parse(r["counters"]).at("runtimes").get<double>(), 1.0) << "one runtime per fork";
        if (r["phase"] == "measure") ++measured[r["repetition"]];
    }
    EXPECT_EQ(measured, (std::map<std::string, int>{{"0", 3}, {"1", 3}}));
    // In-process (--isolation none) the same process runs both forks: the count goes on.
    auto dir2 = fresh_dir("iterations-inline");
    ASSERT_EQ(cli({"run", "-b", "counting", "-w", "count-runs", "-r", "2", "-W", "1", "-I", "1", "--isolation", "none", "-o",
                   dir2, "-q"}),
              0);
    rows = read_csv(dir2 / "results.csv");
    ASSERT_EQ(rows.size(), 4u);
    for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(std::stod(rows[i]["value"]), static_cast<double>(i + 1));
    // In-process, a fork's CPU time is the driver's own during the fork (no child's rusage).
    for (auto& r : rows) EXPECT_FALSE(r["cpu_seconds"].empty()) << "iteration " << r["iteration"];
    fs::remove_all(dir);
    fs::remove_all(dir2);
}

// cli_main twice in one process (a sweep run as a Google Benchmark lambda kept global state,
// and a second run in a process was impossible): each sweep writes its own folder, with its
// own rows and benchmark.json entries, and the second carries no state of the first.
TEST(DriverRun, TwoSweepsInOneProcess) {
    using coopbench::test::cli_here;  // cli_main in this process (tests/support)
    const auto a = fresh_dir("twice-a"), b = fresh_dir("twice-b");
    ASSERT_EQ(cli_here({"run", "-b", "counting", "-w", "count-runs", "-r", "1", "-W", "0", "-I", "2", "-o", a, "-q"}), 0);
    ASSERT_EQ(cli_here({"run", "-b", "counting", "-w", "count-runs", "-r", "2", "-W", "1", "-I", "1", "-o", b, "-q"}), 0);
    EXPECT_EQ(read_csv(a / "results.csv").size(), 2u);  // 1 fork x 2
    EXPECT_EQ(read_csv(b / "results.csv").size(), 4u);  // 2 forks x (1 + 1)
    // benchmark.json: one entry per fork (harness/gbench_reporter.hpp), none of the other sweep.
    for (const auto& [dir, forks] : {std::pair{a, 1u}, std::pair{b, 2u}}) {
        std::ifstream in(dir / "benchmark.json");
        const auto j = nlohmann::json::parse(in);
        std::size_t n = 0;
        for (auto& e : j["benchmarks"])
            n += e.value("run_type", "") == "iteration" && e.value("run_name", "").find("/iteration:") == std::string::npos;
        EXPECT_EQ(n, forks) << dir << ": one entry per fork, none of the other sweep";
        EXPECT_NE(j["context"]["coopbench_command"].get<std::string>().find(dir.string()), std::string::npos)
            << "the context is this sweep's";
    }
    fs::remove_all(a);
    fs::remove_all(b);
}

// A fork that crashes in its third run keeps the two runs before it, then a failed row.
TEST(DriverIterations, ACrashMidForkKeepsTheRunsBefore) {
    auto dir = fresh_dir("midfork");
    ASSERT_EQ(cli({"run", "-b", "faulty/crash-third-run", "-w", "create", "-p", "N=10", "-W", "1", "-I", "3", "-o", dir, "-q"}),
              coopbench::kExitPointsFailed);
    auto rows = read_csv(dir / "results.csv");
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0]["status"], "ok");
    EXPECT_EQ(rows[0]["phase"], "warmup");
    EXPECT_EQ(rows[1]["status"], "ok");
    EXPECT_EQ(rows[1]["phase"], "measure");
    EXPECT_EQ(rows[2]["status"], "failed");
    EXPECT_EQ(rows[2]["iteration"], "2");
    // "crashed: SIGSEGV ...", or under ASan (its handler exits 1) "... SUMMARY: AddressSanitizer: SEGV".
    EXPECT_NE(rows[2]["reason"].find("SEGV"), std::string::npos) << rows[2]["reason"];
    EXPECT_NE(rows[2]["reason"].find("after 2 of 4 runs"), std::string::npos) << rows[2]["reason"];
    // A fork that failed is complete: --resume measures nothing more.
    testing::internal::CaptureStderr();
    // Its exit code still says the folder holds a failed fork.
    ASSERT_EQ(cli({"run", "--resume", dir.string(), "-q"}), coopbench::kExitPointsFailed);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find("0 to go"), std::string::npos) << err;
    EXPECT_EQ(read_csv(dir / "results.csv").size(), 3u);
    fs::remove_all(dir);
}

// Defaults: micro points W=1, I=5; a point whose one run exceeds the budget runs once, cold.
TEST(DriverIterations, DefaultsScaleWithTheExpectedCost) {
    const auto& reg = coopbench::Registry::instance();
    const auto create = reg.workloads().at("create").info(coopbench::Machine{2});
    auto it = coopbench::default_iterations(create, {{"N", "10000"}}, 2.0);
    EXPECT_EQ(it.warmup, 1);
    EXPECT_EQ(it.measure, 5);
    it = coopbench::default_iterations(create, {{"N", "10000000"}}, 2.0);
    EXPECT_EQ(it.warmup, 0);
    EXPECT_EQ(it.measure, 1);
    // The CLI overrides both.
    coopbench::SweepRequest req;
    req.backends = {"pthreads"};
    req.workloads = {"create"};
    req.params["N"] = {"10000000"};
    req.warmup = 2;
    req.iterations = 7;
    auto points = coopbench::expand(req, coopbench::Machine{2});
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].warmup, 2);
    EXPECT_EQ(points[0].iterations, 7);
}

// The noise guard: the rule, and the flag from a fake /proc (the reader is injectable).
TEST(DriverNoise, NoisyRule) {
    coopbench::Noise n;
    n.load_before = n.load_after = 0.5;
    n.runnable_before = n.runnable_after = 0;
    n.other_cpus = 0;
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 2));
    n.runnable_after = 1;  // one other runnable process, no core left free
    EXPECT_TRUE(coopbench::is_noisy(n, 2, 2));
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 1));  // one core left free for it
    n.runnable_after = 0;
    // Our own threads: pthreads create at N=10^4 put the 1-minute load at 537 with nothing
    // else running. The load is not in the rule (the old rule flagged this).
    n.load_before = n.load_after = 537;
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 2));
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 1));
    // Other work during the fork: more than the free cores plus half a core.
    n.other_cpus = 0.4;
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 2));
    n.other_cpus = 0.6;
    EXPECT_TRUE(coopbench::is_noisy(n, 2, 2));
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 1));
    n.other_cpus = 1.6;
    EXPECT_TRUE(coopbench::is_noisy(n, 2, 1));
    n.other_cpus = -1;  // unknown
    EXPECT_FALSE(coopbench::is_noisy(n, 2, 2));
}

// other_cpus: the busy time the fork did not spend itself, less one tick per CPU, per second.
TEST(DriverNoise, OtherCpusSubtractsOwnTimeAndRounding) {
    // 2 CPUs fully busy for 1 s, all of it the fork's own: nobody else (the sweep's own load).
    EXPECT_DOUBLE_EQ(coopbench::other_cpus(100.0, 102.0, 2.0, 1.0, 2, 0.01), 0.0);
    // 1 s of the fork's own time and 1 s of someone else's, over 1 s.
    EXPECT_NEAR(coopbench::other_cpus(100.0, 102.0, 1.0, 1.0, 2, 0.01), 0.98, 1e-9);
    // A 5 ms fork that saw two ticks move: rounding, not noise.
    EXPECT_DOUBLE_EQ(coopbench::other_cpus(100.0, 100.02, 0.0, 0.005, 2, 0.01), 0.0);
    EXPECT_EQ(coopbench::other_cpus(-1, 100.0, 0.0, 1.0, 2, 0.01), -1);
    EXPECT_EQ(coopbench::other_cpus(100.0, 101.0, 0.0, 0.0, 2, 0.01), -1);
}

// Runnable processes: the fewest over several readings, so that one instant's kernel worker
// does not mark a point noisy, while work runnable at every reading still does.
TEST(DriverNoise, SettledRunnableTakesTheFewestReadings) {
    auto from = [](std::vector<int> seq, int samples, int* waits = nullptr) {
        std::size_t i = 0;
        return coopbench::settled_runnable([&] { return seq.at(std::min(i++, seq.size() - 1)); }, samples,
                                           [&] { if (waits) ++*waits; });
    };
    EXPECT_EQ(from({1, 0, 1, 1, 1}, 5), 0) << "a transient runnable at one reading is not noise";
    EXPECT_EQ(from({0, 1, 1, 1, 1}, 5), 0);
    EXPECT_EQ(from({2, 2, 3, 2, 2}, 5), 2) << "work runnable at every reading stays";
    EXPECT_EQ(from({3, 2, 1}, 3), 1);
    EXPECT_EQ(from({1, -1, 0}, 3), -1) << "an unreadable reading makes it unknown";
    int waits = 0;
    EXPECT_EQ(from({4, 4, 4, 4, 4}, 5, &waits), 4);
    EXPECT_EQ(waits, 4) << "a wait between readings, none after the last";
    waits = 0;
    EXPECT_EQ(from({0, 5, 5}, 3, &waits), 0);
    EXPECT_EQ(waits, 0) << "0 cannot go lower: no more readings";
}

TEST(DriverNoise, ProcReaderReadsBusyTimeAndCpus) {
    const fs::path proc = fresh_dir("fakeproc-busy");
    fs::create_directories(proc);
    std::ofstream(proc / "stat") << "cpu  100 20 30 1000 7 1 2 3 0 0\ncpu0 50 10 15 500 3 0 1 1 0 0\n"
                                    "cpu1 50 10 15 500 4 1 1 2 0 0\nintr 1\nprocs_running 2\n";
    const coopbench::ProcReader r{proc};
    EXPECT_NEAR(r.busy_seconds(), (100 + 20 + 30 + 1 + 2 + 3) * coopbench::ProcReader::tick_seconds(), 1e-9)
        << "user nice system irq softirq steal; not idle nor iowait";
    EXPECT_EQ(r.cpus(), 2u);
    EXPECT_EQ(r.runnable(), 1);
    EXPECT_EQ(r.runnable_settled(), 1);
    EXPECT_NEAR(r.steal_seconds(), 3 * coopbench::ProcReader::tick_seconds(), 1e-9) << "the 8th field";
    const coopbench::ProcReader none{proc / "missing"};
    EXPECT_EQ(none.busy_seconds(), -1);
    EXPECT_EQ(none.steal_seconds(), -1);
    std::ofstream(proc / "stat") << "cpu  100 20 30 1000\nprocs_running 2\n";  // a kernel without steal
    EXPECT_EQ(r.steal_seconds(), -1);
}

// steal_cpus: the steal time during the fork, less one tick per CPU, per second of the fork.
TEST(DriverNoise, StealCpusIsTheStealDuringTheFork) {
    EXPECT_NEAR(coopbench::steal_cpus(10.0, 10.52, 1.0, 2, 0.01), 0.5, 1e-9);
    EXPECT_DOUBLE_EQ(coopbench::steal_cpus(10.0, 10.02, 0.005, 2, 0.01), 0.0) << "two ticks: rounding";
    EXPECT_EQ(coopbench::steal_cpus(-1, 10.0, 1.0, 2, 0.01), -1);
    EXPECT_EQ(coopbench::steal_cpus(10.0, 11.0, 0.0, 2, 0.01), -1);
}

// A point's forks are spread over the sweep in rounds (every point's first fork, then every
// point's second), so that they sample what drifts while the sweep runs, not one moment; inside
// each round the points run in a random order of the round's own (seeded, the seed in sweep.json),
// so that no point always follows the same predecessor (a position effect a comparison paired by
// round would not cancel), and a resume runs what is left in the order the whole sweep would have.
TEST(Driver, ForksRunInRoundsInASeededRandomOrder) {
    auto sweep = [](const fs::path& dir, const std::string& seed) {
        testing::internal::CaptureStdout();
        const int rc = cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=1,2,3,4,5,6", "-r", "3", "-W", "0", "-I",
                            "1", "--order-seed", seed, "-o", dir, "-q"});
        testing::internal::GetCapturedStdout();
        return rc;
    };
    auto order_of = [](const fs::path& dir) {
        std::vector<std::string> order;
        for (auto& r : read_csv(dir / "results.csv")) order.push_back(r["param.N"] + "/" + r["repetition"]);
        return order;
    };
    auto a = fresh_dir("order-a"), b = fresh_dir("order-b"), c = fresh_dir("order-c");
    ASSERT_EQ(sweep(a, "7"), 0);
    const auto order = order_of(a);
    ASSERT_EQ(order.size(), 18u);
    std::vector<std::vector<std::string>> rounds(3);
    for (std::size_t k = 0; k < order.size(); ++k) {
        const auto slash = order[k].find('/');
        EXPECT_EQ(order[k].substr(slash + 1), std::to_string(k / 6)) << "round " << k / 6 << " holds fork " << k / 6;
        rounds[k / 6].push_back(order[k].substr(0, slash));
    }
    for (auto& r : rounds) {
        auto sorted = r;
        std::sort(sorted.begin(), sorted.end());
        EXPECT_EQ(sorted, (std::vector<std::string>{"1", "2", "3", "4", "5", "6"}));  // every point once a round
    }
    EXPECT_FALSE(rounds[0] == rounds[1] && rounds[1] == rounds[2]) << "the same order in every round";
    EXPECT_NE(rounds[0], (std::vector<std::string>{"1", "2", "3", "4", "5", "6"}));
    {
        std::ifstream in(a / "sweep.json");
        EXPECT_EQ(nlohmann::json::parse(in).at("order_seed").get<std::uint32_t>(), 7u);
    }
    ASSERT_EQ(sweep(c, "8"), 0);
    EXPECT_NE(order_of(c), order) << "another seed, another order";
    // Interrupted after 7 forks (whole lines kept), then resumed: the same order as the whole sweep.
    ASSERT_EQ(sweep(b, "7"), 0);
    auto keep = [](const fs::path& p, int lines) {
        std::ifstream in(p);
        std::vector<std::string> all;
        for (std::string l; std::getline(in, l);) all.push_back(l);
        in.close();
        std::ofstream out(p, std::ios::trunc);
        for (int i = 0; i < lines; ++i) out << all.at(static_cast<std::size_t>(i)) << "\n";
    };
    keep(b / "results.csv", 8);   // header + 7 forks of one row each
    keep(b / "points.jsonl", 7);
    testing::internal::CaptureStderr();
    ASSERT_EQ(cli({"run", "--resume", b.string(), "-q"}), 0);
    testing::internal::GetCapturedStderr();
    EXPECT_EQ(order_of(b), order);
    EXPECT_NE(cli({"run", "--resume", b.string(), "--order-seed", "3", "-q"}), 0);  // the folder's seed, not another
    for (auto& d : {a, b, c}) fs::remove_all(d);
}

TEST(DriverNoise, NoisyFlagFromAFakeProc) {
    const fs::path proc = fresh_dir("fakeproc");
    fs::create_directories(proc);
    auto fake = [&](double load, int running) {
        std::ofstream(proc / "loadavg") << load << " 0.50 0.40 2/300 12345\n";
        std::ofstream(proc / "stat") << "cpu  1 2 3 4\nprocs_running " << running << "\nprocs_blocked 0\n";
    };
    for (bool busy : {false, true}) {
        fake(busy ? 64.0 : 0.0, busy ? 64 : 1);  // procs_running counts the reader itself
        auto dir = fresh_dir(std::string("noisy-") + (busy ? "busy" : "quiet"));
        testing::internal::CaptureStdout();
        ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=1,2", "-r", "2", "-W", "0", "-I", "2",
                       "--proc-root", proc.string(), "-o", dir, "-q"}),
                  0);
        const std::string out = testing::internal::GetCapturedStdout();
        auto rows = read_csv(dir / "results.csv");
        ASSERT_EQ(rows.size(), 8u);
        for (auto& r : rows) {
            EXPECT_EQ(r["noisy"], busy ? "true" : "false");
            EXPECT_EQ(std::stod(r["load_before"]), busy ? 64.0 : 0.0);
            EXPECT_EQ(r["runnable_before"], busy ? "63" : "0");
        }
        // Said once per noisy point (2 points), in the point's line, not per row or fork.
        std::size_t warnings = 0;
        for (auto pos = out.find("noisy"); pos != std::string::npos; pos = out.find("noisy", pos + 1)) ++warnings;
        EXPECT_EQ(warnings, busy ? 2u : 0u) << out;
        EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2) << out;
        std::ifstream jl(dir / "points.jsonl");
        std::string line;
        ASSERT_TRUE(std::getline(jl, line));
        EXPECT_EQ(nlohmann::json::parse(line).at("noisy").get<bool>(), busy);
        fs::remove_all(dir);
    }
    fs::remove_all(proc);
}

// One schema (the writer, the readers and the docs agree): results.csv's header is harness/schema.json's columns in order, and
// docs/results-format.md's column table lists the same columns in the same order.
TEST(DriverSchema, CsvHeaderFollowsSchemaJson) {
    std::ifstream in(fs::path(COOPBENCH_SOURCE_DIR) / "harness" / "schema.json");
    ASSERT_TRUE(in) << "harness/schema.json";
    auto schema = nlohmann::json::parse(in);
    std::vector<std::string> want;
    for (auto& c : schema.at("columns")) want.push_back(c.at("name"));
    EXPECT_EQ(coopbench::schema_columns(), want) << "the build embeds another schema.json: re-run cmake";
    auto dir = fresh_dir("schema");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=1", "-W", "0", "-I", "1", "-o", dir, "-q"}), 0);
    std::ifstream csv(dir / "results.csv");
    std::string header;
    std::getline(csv, header);
    std::vector<std::string> expanded;
    for (auto& c : want) expanded.push_back(c == "param.<NAME>" ? "param.N" : c);
    EXPECT_EQ(coopbench::parse_csv_line(header), expanded);
    fs::remove_all(dir);
}

// doc_table — the rows of the table under `heading` in docs/results-format.md whose first
// cell is `code`, up to the next heading of any level (a subsection's tables are its own):
// each row's cells, trimmed, backquotes removed.
std::vector<std::vector<std::string>> doc_table(const std::string& heading) {
    std::ifstream doc(fs::path(COOPBENCH_SOURCE_DIR) / "docs" / "results-format.md");
    EXPECT_TRUE(doc) << "docs/results-format.md";
    std::vector<std::vector<std::string>> rows;
    bool in_section = false;
    for (std::string line; std::getline(doc, line);) {
        if (line.rfind("#", 0) == 0) in_section = line == heading;
        if (!in_section || line.rfind("| `", 0) != 0) continue;
        std::vector<std::string> cells;
        std::stringstream ss(line.substr(1));
        for (std::string cell; std::getline(ss, cell, '|');) {
            std::erase(cell, '`');
            cell.erase(0, cell.find_first_not_of(' '));
            cell.erase(cell.find_last_not_of(' ') + 1);
            cells.push_back(cell);
        }
        rows.push_back(cells);
    }
    return rows;
}

// docs/results-format.md's context table lists schema.json's context keys, in order, with
// their types.
TEST(DriverSchema, ContextDocAgreesWithSchemaJson) {
    std::ifstream in(fs::path(COOPBENCH_SOURCE_DIR) / "harness" / "schema.json");
    auto schema = nlohmann::json::parse(in);
    std::vector<std::string> want, got;
    for (auto& c : schema.at("context"))
        want.push_back(c.at("name").get<std::string>() + " " + c.at("type").get<std::string>() +
                       (c.contains("null") ? " or null" : ""));
    for (auto& row : doc_table("## `context.json` keys")) got.push_back(row.at(0) + " " + row.at(1));
    EXPECT_EQ(got, want) << "docs/results-format.md's context table and harness/schema.json disagree";
}

// context_problems: each rule of the context schema, seen failing.
TEST(DriverSchema, ContextProblemsNamesEachDisagreement) {
    nlohmann::json ok = coopbench::machine_context();
    const nlohmann::json run = {{"plan", "quick"}, {"sweep", nlohmann::json::object()}, {"points", 3},
                                {"repetitions", 1}, {"warmup", nullptr}, {"iterations", 5},
                                {"isolation", "process"}, {"coopbench_command", "coopbench run"},
                                {"oversubscribed", false}, {"backend.go.go_version", "go1.19.8"}};
    ok.update(run);
    ASSERT_EQ(coopbench::context_problems(ok), std::vector<std::string>{});
    auto with = [&](const char* key, nlohmann::json v) {
        auto c = ok;
        c[key] = std::move(v);
        return coopbench::context_problems(c);
    };
    EXPECT_EQ(with("cores_available", "2").size(), 1u);           // a number as a string
    EXPECT_EQ(with("sweep", "{}").size(), 1u);                     // JSON inside a string
    EXPECT_EQ(with("mixed_machines", "no").size(), 1u);            // a bool as a string
    EXPECT_EQ(with("cpu", "x").size(), 1u);                        // a key the schema does not list
    EXPECT_EQ(with("points", nullptr).size(), 1u);                 // null with no meaning
    EXPECT_EQ(with("backend.go", "x").size(), 1u);                 // not backend.<NAME>.<KEY>
    EXPECT_TRUE(with("backend.my.sub.key", "x").empty());          // <KEY> takes the rest
    auto missing = ok;
    missing.erase("git_commit");
    EXPECT_EQ(coopbench::context_problems(missing).size(), 1u);    // a key every run writes
    // A merged folder: a key the shards disagree on may be null when `differing` lists it.
    auto merged = ok;
    merged["cores_available"] = nullptr;
    EXPECT_EQ(coopbench::context_problems(merged).size(), 1u);
    merged["differing"] = {{"cores_available", {{"0/2", 2}, {"1/2", 64}}}};
    EXPECT_EQ(coopbench::context_problems(merged), std::vector<std::string>{});
}

TEST(DriverSchema, ResultsFormatDocAgreesWithSchemaJson) {
    std::ifstream in(fs::path(COOPBENCH_SOURCE_DIR) / "harness" / "schema.json");
    auto schema = nlohmann::json::parse(in);
    std::vector<std::string> want;
    for (auto& c : schema.at("columns")) want.push_back(c.at("name"));
    for (auto& c : schema.at("merged_columns")) want.push_back(c.at("name"));
    // The table after the heading "## `results.csv` columns": its first column, in order.
    std::vector<std::string> got;
    for (auto& row : doc_table("## `results.csv` columns")) got.push_back(row.at(0));
    EXPECT_EQ(got, want) << "docs/results-format.md's column table and harness/schema.json disagree";
}
