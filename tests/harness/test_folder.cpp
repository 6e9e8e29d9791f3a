// The result folder is never mixed, damaged or left invalid: a new sweep into a folder with
// results is refused untouched, --resume refuses what it cannot continue (a merged folder, a
// damaged sweep.json or results.csv, other flags) with one line and records nothing,
// benchmark.json is valid JSON after every fork, and the command line refuses values that
// would fail later (inf/nan seconds, absurd sizes, empty lists, conflicting repetitions).
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "harness/cli.hpp"
#include "harness/register_backend.hpp"
#include "harness/child_process.hpp"  // ReplyReader
#include "harness/noise_guard.hpp"
#include "harness/runner.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/cli_background.hpp"

namespace fs = std::filesystem;
using coopbench::PthreadsBackend;

// HoldBackend — pthreads that stays in its point while --backend-opt hold_file exists (a
// point the test can keep running while it looks at the folder).
struct HoldBackend : PthreadsBackend {
    static constexpr std::string_view name = "hold";
    class Runtime : public PthreadsBackend::Runtime {
      public:
        explicit Runtime(const coopbench::RuntimeOptions& o) : PthreadsBackend::Runtime(o), hold_(o.option("hold_file")) {}
        template <class F>
        void run(F&& f) {
            while (!hold_.empty() && fs::exists(hold_)) usleep(20000);
            PthreadsBackend::Runtime::run(std::forward<F>(f));
        }

      private:
        std::string hold_;
    };
};
COOPBENCH_REGISTER_BACKEND(coopbench::PthreadsBackend, "pthreads", "POSIX threads");
COOPBENCH_REGISTER_BACKEND_VARIANT(HoldBackend, "hold", "runs while --backend-opt hold_file exists", {},
                                   {{"hold_file", "", "a file; the point runs while it exists"}});

namespace {

int cli(const std::vector<std::string>& args) { return coopbench::test::cli_in_child(args); }

// cli_err — the exit code and what went to stderr.
std::pair<int, std::string> cli_err(const std::vector<std::string>& args) {
    testing::internal::CaptureStderr();
    const int rc = cli(args);
    return {rc, testing::internal::GetCapturedStderr()};
}

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("coopbench-folder-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// snapshot — every file under `dir` with its bytes, but the folder's lock (.coopbench.lock:
// it holds the pid of the last driver that ran there, no result).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> files;
    for (auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename() != ".coopbench.lock")
            files[fs::relative(e.path(), dir).string()] = slurp(e.path());
    return files;
}

std::size_t lines_of(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

const std::vector<std::string> kSmall = {"-b", "pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-q"};

std::vector<std::string> small_run(const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"run"};
    a.insert(a.end(), kSmall.begin(), kSmall.end());
    a.insert(a.end(), more.begin(), more.end());
    a.push_back("--out");
    a.push_back(out.string());
    return a;
}

}  // namespace

// A second sweep into a folder that holds one is refused with one line, and nothing in the
// folder changes (before: it appended a second measurement of every point and rewrote
// context.json and sweep.json, even when it was then refused).
TEST(Folder, NewRunIntoAFolderWithResultsIsRefusedAndTouchesNothing) {
    const auto dir = fresh_dir("again");
    ASSERT_EQ(cli(small_run(dir)), 0);
    const auto before = snapshot(dir);
    for (auto more : std::vector<std::vector<std::string>>{{}, {"-P", "1"}, {"-r", "2"}}) {
        auto [rc, err] = cli_err(small_run(dir, more));
        EXPECT_EQ(rc, 2) << err;
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_NE(err.find("already holds results"), std::string::npos) << err;
        EXPECT_NE(err.find("--resume " + dir.string()), std::string::npos) << err;
        EXPECT_TRUE(snapshot(dir) == before) << "the folder changed";
    }
    fs::remove_all(dir);
}

// --resume of a folder `coopbench merge` made is refused with the commands that complete it
// (before: it dropped the merge's keys from context.json, then aborted).
TEST(Folder, ResumeOfAMergedFolderIsRefusedWithTheCommandThatCompletesIt) {
    const auto dir = fresh_dir("shards"), merged = fresh_dir("merged");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20,30,40", "-W", "0", "-I", "1", "-q", "--shard", "0/2",
                   "--out", dir.string()}),
              0);
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    const int merge_rc = cli({"merge", merged.string(), dir.string()});
    testing::internal::GetCapturedStdout();
    testing::internal::GetCapturedStderr();
    ASSERT_EQ(merge_rc, 1);  // shard 1/2 is missing
    {
        // The shard itself, run again as a new sweep: refused, its folder untouched.
        const auto shard_before = snapshot(dir);
        auto [rc, err] = cli_err({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20,30,40", "-W", "0", "-I", "1",
                                  "-q", "--shard", "0/2", "--out", dir.string()});
        EXPECT_EQ(rc, 2) << err;
        EXPECT_NE(err.find("already holds results"), std::string::npos) << err;
        EXPECT_TRUE(snapshot(dir) == shard_before) << "the shard folder changed";
    }
    const auto before = snapshot(merged);
    auto [rc, err] = cli_err({"run", "--resume", merged.string()});
    EXPECT_EQ(rc, 2) << err;
    EXPECT_EQ(lines_of(err), 1u) << err;
    EXPECT_NE(err.find("coopbench run --resume " + (dir / "shard-0-of-2").string()), std::string::npos) << err;
    // Shard 1/2 never ran: the refusal says how to run it, and the new merge names its folder.
    EXPECT_NE(err.find("--out " + dir.string() + " --shard 1/2"), std::string::npos) << err;
    EXPECT_NE(err.find("coopbench merge NEW_DIR " + (dir / "shard-0-of-2").string() + " " + (dir / "shard-1-of-2").string()),
              std::string::npos)
        << err;
    EXPECT_TRUE(snapshot(merged) == before) << "the folder changed";
    fs::remove_all(dir);
    fs::remove_all(merged);
}

// Seconds that are not finite, negative or beyond a year are bad input (before: --timeout
// inf failed every point "after -9223372036854775808 s"; nan and inf were written to
// sweep.json as null, and --resume then aborted).
TEST(Folder, NonFiniteOrHugeSecondsAreBadInput) {
    for (auto [flag, value] : std::vector<std::pair<std::string, std::string>>{
             {"--timeout", "inf"}, {"--timeout", "nan"}, {"--timeout", "1e300"}, {"--timeout", "-1"},
             {"--budget", "inf"}, {"--budget", "nan"}, {"--budget", "0"}, {"--budget", "1e300"}}) {
        const auto dir = fresh_dir("seconds");
        auto [rc, err] = cli_err(small_run(dir, {flag, value}));
        EXPECT_EQ(rc, 2) << flag << " " << value << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_NE(err.find(flag), std::string::npos) << err;
        EXPECT_FALSE(fs::exists(dir)) << flag << " " << value;
    }
}

// A damaged sweep.json makes --resume say so in one line (before: an uncaught exception,
// exit 134), and nothing is recorded in the folder.
TEST(Folder, CorruptSweepJsonIsOneLineAndRecordsNothing) {
    const auto dir = fresh_dir("corrupt");
    ASSERT_EQ(cli(small_run(dir)), 0);
    const std::string good = slurp(dir / "sweep.json");
    auto with_timeout = [&](const std::string& v) {
        auto j = nlohmann::json::parse(good);
        j["timeout_seconds"] = nlohmann::json::parse(v);
        return j.dump();
    };
    for (const std::string& text : {good.substr(0, good.size() / 2), std::string("[]"), std::string("{\"backends\": 3}"),
                                    std::string("17"), with_timeout("null"), with_timeout("-5"), with_timeout("1e300")}) {
        std::ofstream(dir / "sweep.json", std::ios::trunc) << text;
        const auto before = snapshot(dir);
        auto [rc, err] = cli_err({"run", "--resume", dir.string()});
        EXPECT_EQ(rc, 2) << text << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_NE(err.find("sweep.json"), std::string::npos) << err;
        EXPECT_TRUE(snapshot(dir) == before) << "the folder changed" << text;
    }
    fs::remove_all(dir);
}

// A line in the middle of results.csv that is no row is reported when resuming, and the
// refused resume records nothing (no `resumed` in context.json). Before: resumed silently.
TEST(Folder, GarbageLineInResultsIsReportedAndTheRefusedResumeRecordsNothing) {
    const auto dir = fresh_dir("garbage");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-W", "0", "-I", "1", "-q", "--out",
                   dir.string()}),
              0);
    {
        std::string csv = slurp(dir / "results.csv");
        const auto first_row_end = csv.find('\n', csv.find('\n') + 1);
        csv.insert(first_row_end + 1, "this is, not a row\n");
        std::ofstream(dir / "results.csv", std::ios::trunc) << csv;
    }
    const auto before = snapshot(dir);
    auto [rc, err] = cli_err({"run", "--resume", dir.string()});
    EXPECT_EQ(rc, 2) << err;
    EXPECT_EQ(lines_of(err), 1u) << err;
    EXPECT_NE(err.find("results.csv line 3"), std::string::npos) << err;
    EXPECT_TRUE(snapshot(dir) == before) << "the folder changed";
    fs::remove_all(dir);
}

// A duplicated row is refused by --resume as merge refuses it (it would count a measurement
// twice), naming its line; and a refused resume changes nothing, a torn last line included
// (before, the torn line was cut first, then the resume refused: exit 2 after a change).
TEST(Folder, ResumeRefusesADuplicatedRowAndARefusalChangesNothing) {
    const auto dir = fresh_dir("twice");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-W", "0", "-I", "1", "-q", "--out",
                   dir.string()}),
              0);
    {
        std::string csv = slurp(dir / "results.csv");
        const auto last_row = csv.rfind('\n', csv.size() - 2) + 1;
        csv += csv.substr(last_row) + "torn, half a ro";  // the last row twice, then a torn line
        std::ofstream(dir / "results.csv", std::ios::trunc) << csv;
    }
    auto before = snapshot(dir);
    auto [rc, err] = cli_err({"run", "--resume", dir.string()});
    EXPECT_EQ(rc, 2) << err;
    EXPECT_EQ(lines_of(err), 1u) << err;
    EXPECT_NE(err.find("results.csv line 4: "), std::string::npos) << err;
    EXPECT_NE(err.find("is measured twice (line 3 too)"), std::string::npos) << err;
    EXPECT_TRUE(snapshot(dir) == before) << "the folder changed";
    // Random bytes, no newline: refused, untouched (not cut to nothing first).
    std::ofstream(dir / "results.csv", std::ios::trunc) << "\x01\x7f random bytes without an end";
    before = snapshot(dir);
    std::tie(rc, err) = cli_err({"run", "--resume", dir.string()});
    EXPECT_EQ(rc, 2) << err;
    EXPECT_EQ(lines_of(err), 1u) << err;
    EXPECT_TRUE(snapshot(dir) == before) << "the folder changed: " << err;
    fs::remove_all(dir);
}

// --resume with a flag that would change the sweep is refused, not silently ignored.
TEST(Folder, ResumeWithOtherFlagsIsRefused) {
    const auto dir = fresh_dir("flags");
    ASSERT_EQ(cli(small_run(dir)), 0);
    const auto before = snapshot(dir);
    for (auto more : std::vector<std::vector<std::string>>{
             {"--repetitions", "5"}, {"-b", "pthreads"}, {"--out", "/tmp/elsewhere"}, {"--benchmark_repetitions=3"}}) {
        std::vector<std::string> args = {"run", "--resume", dir.string()};
        args.insert(args.end(), more.begin(), more.end());
        auto [rc, err] = cli_err(args);
        EXPECT_EQ(rc, 2) << more.front() << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_NE(err.find("takes no"), std::string::npos) << err;
        EXPECT_TRUE(snapshot(dir) == before) << "the folder changed";
    }
    // -q and the reporters' flags are fine.
    EXPECT_EQ(cli({"run", "--resume", dir.string(), "-q"}), 0);
    fs::remove_all(dir);
}

// benchmark.json is valid JSON while the sweep runs (after every fork), after kill -9, and
// beside benchmark-2.json after --resume (before: unterminated until the sweep's end).
TEST(Folder, BenchmarkJsonIsValidAfterEveryForkAndAfterAKill) {
    const auto dir = fresh_dir("gbench");
    const fs::path hold = fs::temp_directory_path() / ("coopbench-folder-hold-" + std::to_string(getpid()));
    { std::ofstream(hold) << "hold\n"; }
    // The points run in a random order of each round's own (fork_order in harness/sweep.cpp):
    // --order-seed 5 at -P 1 (the point ids fix the order) measures pthreads/create/N=10 first,
    // then waits in hold/create/N=10 for the file. Without a seed, a hold point first measured
    // nothing, and both pthreads points first measured 4 iterations before the wait.
    const pid_t driver = coopbench::test::cli_started(
        {"run", "-b", "pthreads,hold", "-w", "create", "-p", "N=1,10", "-P", "1", "--order-seed", "5",
         "--backend-opt", "hold_file=" + hold.string(), "-W", "0", "-I", "2", "-o", dir.string(), "-q"});
    ASSERT_GE(driver, 0);
    const bool first_fork = coopbench::test::eventually([&] {
        return fs::exists(dir / "results.csv") && lines_of(slurp(dir / "results.csv")) >= 3;  // header + 2 rows
    });
    ASSERT_TRUE(first_fork) << "the first point was never measured";
    usleep(100000);
    const std::string mid = slurp(dir / "benchmark.json");
    EXPECT_TRUE(nlohmann::json::accept(mid)) << mid.substr(mid.size() > 300 ? mid.size() - 300 : 0);
    EXPECT_EQ(lines_of(slurp(dir / "results.csv")), 3u) << "more than the first point was measured before the wait";
    if (nlohmann::json::accept(mid)) {
        const auto j = nlohmann::json::parse(mid);
        // The first point's only fork (harness/gbench_reporter.hpp): its entry, its two runs
        // and, its last fork, its four aggregates.
        EXPECT_EQ(j.at("benchmarks").size(), 1u + 2u + 4u);
    }
    coopbench::test::kill_and_reap(driver);
    EXPECT_TRUE(nlohmann::json::accept(slurp(dir / "benchmark.json")));
    fs::remove(hold);
    ASSERT_EQ(cli({"run", "--resume", dir.string(), "-q"}), 0);
    for (const char* f : {"benchmark.json", "benchmark-2.json"}) {
        const std::string text = slurp(dir / f);
        ASSERT_TRUE(nlohmann::json::accept(text)) << f;
        EXPECT_FALSE(nlohmann::json::parse(text).at("benchmarks").empty()) << f;
    }
    fs::remove_all(dir);
}

// An empty value where a path, a name or a list is taken is bad input (one line naming the
// flag, exit 2, nothing made), not a request for the default: `--resume ""` started a new
// full sweep into results/, `--shards 0` and `--shard ''` ran unsharded, `-P 1,,2` dropped
// the empty item.
TEST(Folder, EmptyValuesAreBadInput) {
    const auto dir = fresh_dir("empty");
    const std::vector<std::string> point = {"-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-q"};
    // {the flag the refusal names, the command's own arguments after "run"}
    const std::vector<std::pair<std::string, std::vector<std::string>>> bad = {
        {"--resume", {"--resume", ""}},
        {"--out", {"-b", "pthreads", "--out", ""}},
        {"--shards", {"-b", "pthreads", "--shards", "0", "--out", dir.string()}},
        {"--shard", {"-b", "pthreads", "--shard", "", "--out", dir.string()}},
        {"--processors", {"-b", "pthreads", "-P", "1,,2", "--out", dir.string()}},
        {"--backends", {"-b", "pthreads,", "--out", dir.string()}},
        {"--stack-size", {"-b", "pthreads", "--stack-size", "", "--out", dir.string()}},
        {"--plan", {"-b", "pthreads", "--plan", "", "--out", dir.string()}},
    };
    const auto cwd = fs::current_path();
    const auto here = fresh_dir("empty-cwd");
    fs::create_directories(here);
    fs::current_path(here);  // where a default folder (results/...) would be made
    auto check = [&](const std::string& flag, std::vector<std::string> args, bool add_point) {
        args.insert(args.begin(), "run");
        if (add_point) args.insert(args.end(), point.begin(), point.end());
        auto [rc, err] = cli_err(args);
        EXPECT_EQ(rc, 2) << flag << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << flag << ": " << err;
        EXPECT_NE(err.find(flag), std::string::npos) << flag << ": " << err;
        EXPECT_FALSE(fs::exists(dir)) << flag << " left " << dir;
        EXPECT_TRUE(fs::is_empty(here)) << flag << " made a folder in the current directory";
        fs::remove_all(dir);
    };
    for (auto& [flag, args] : bad) check(flag, args, flag != "--resume");
    check("--param N", {"-b", "pthreads", "-w", "create", "-p", "N=1,,2", "-q", "--out", dir.string()}, false);
    check("--workloads", {"-b", "pthreads", "-w", ",create", "-p", "N=10", "-q", "--out", dir.string()}, false);
    fs::current_path(cwd);
    fs::remove_all(here);
}

// Bad input the command line used to take: each one line, exit 2, no folder made.
TEST(Folder, MoreBadInputIsOneLineAndExitCodeTwo) {
    const auto dir = fresh_dir("bad");
    const std::vector<std::vector<std::string>> bad = {
        {"--warmup", "-1"},                              // was taken as "the default"
        {"--iterations", "-1"},
        {"--memory-limit-mb", "-1"},                     // was "no limit"
        {"--memory-limit-mb", "99999999999999"},
        {"--stack-size", "18446744073709551615"},        // was accepted, the point crashed
        {"--stack-size", "-1"},
        {"--processors", ""},                            // was "the default"
        {"--backends", ""},
        {"--workloads", ""},
        {"-r", "2", "--benchmark_repetitions=3"},        // the second silently won
        {"--benchmark_filter=zzz"},                      // matched nothing, exit 0
        {"--benchmark_out=/proc/coopbench-x.json"},      // left a half-made folder
    };
    for (auto& more : bad) {
        std::vector<std::string> args = {"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-q"};
        // -W 0 -I 1 unless the bad flag is one of them (a flag given twice is refused for that).
        if (more.front() != "--warmup") args.insert(args.end(), {"-W", "0"});
        if (more.front() != "--iterations") args.insert(args.end(), {"-I", "1"});
        args.insert(args.end(), more.begin(), more.end());
        args.push_back("--out");
        args.push_back(dir.string());
        auto [rc, err] = cli_err(args);
        EXPECT_EQ(rc, 2) << more.front() << " " << (more.size() > 1 ? more[1] : "") << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << more.front() << ": " << err;
        EXPECT_FALSE(fs::exists(dir)) << more.front() << " left " << dir;
        fs::remove_all(dir);
    }
    // The stack-size refusal names the limit.
    auto [rc, err] = cli_err({"run", "--dry-run", "-b", "pthreads", "-w", "create", "--stack-size", "18446744073709551615"});
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("1073741824"), std::string::npos) << err;
    // Equal repetitions by both flags are fine.
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "-r", "2", "--benchmark_repetitions=2"}), 0);
    testing::internal::GetCapturedStdout();
    // A word that is no command says so (before: "A subcommand is required").
    auto [rc2, err2] = cli_err({"bench"});
    EXPECT_EQ(rc2, 2);
    EXPECT_EQ(lines_of(err2), 1u) << err2;
    EXPECT_NE(err2.find("unknown command 'bench'"), std::string::npos) << err2;
}

// The command line's smaller messages (the harness review's finding 10): a flag given twice,
// an empty count, a count out of range say so in our words with the range, one line each
// (CLI11 said "At Most 1 required but received 2", "must be >= 1, got 0" and "Could not
// convert"); a count takes the forms every size takes (1e3, 10^3).
TEST(Folder, SmallerMessagesNameTheFlagAndTheRange) {
    const auto dir = fresh_dir("small");
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"-P", "1", "-P", "2"}, "--processors is given 2 times; give it once"},
        {{"-b", "pthreads", "--backends", "pthreads"}, "--backends is given 2 times"},
        {{"-r", ""}, "--repetitions takes a value, got ''"},
        {{"-W", ""}, "--warmup takes a value, got ''"},
        {{"--timeout", ""}, "--timeout takes a value, got ''"},
        {{"--warmup", "1e9"}, "--warmup must be from 0 to 1000000, got 1e9"},
        {{"--iterations", "many"}, "--iterations must be from 1 to 1000000, got many"},
        {{"-r", "0"}, "--repetitions must be from 1 to 1000000, got 0"},
    };
    for (auto& [more, want] : bad) {
        std::vector<std::string> args = {"run", "-w", "create", "-p", "N=10", "-q", "--out", dir.string()};
        if (std::find(more.begin(), more.end(), "-b") == more.end()) args.insert(args.end(), {"-b", "pthreads"});
        args.insert(args.end(), more.begin(), more.end());
        auto [rc, err] = cli_err(args);
        EXPECT_EQ(rc, 2) << want << ": " << err;
        EXPECT_EQ(lines_of(err), 1u) << want << ": " << err;
        EXPECT_NE(err.find(want), std::string::npos) << err;
        EXPECT_FALSE(fs::exists(dir)) << want;
        fs::remove_all(dir);
    }
    testing::internal::CaptureStdout();
    EXPECT_EQ(cli({"run", "--dry-run", "-b", "pthreads", "-w", "create", "-W", "1e1", "-I", "10^2", "-r", "2e0"}), 0);
    testing::internal::GetCapturedStdout();
}

// A resume of a finished sweep measures nothing and adds no file (before: an empty
// benchmark-2.json, a Google Benchmark file without a run).
TEST(Folder, ResumeOfAFinishedSweepAddsNoFile) {
    const auto dir = fresh_dir("finished");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-q", "--out", dir.string()}), 0);
    const auto before = snapshot(dir);
    ASSERT_EQ(cli({"run", "--resume", dir.string(), "-q"}), 0);
    EXPECT_FALSE(fs::exists(dir / "benchmark-2.json"));
    std::vector<std::string> names_before, names_after;
    for (auto& [name, bytes] : before) names_before.push_back(name);
    for (auto& [name, bytes] : snapshot(dir)) names_after.push_back(name);
    EXPECT_EQ(names_after, names_before);
    fs::remove_all(dir);
}

// A log gets one line per point: the id, the median and range in the workload's unit, and
// FAILED with the reason; no Google Benchmark table, no context block. Google's console
// tables remain behind --benchmark_format=console.
TEST(Folder, ALogGetsOneLinePerPoint) {
    const auto dir = fresh_dir("log");
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int rc = cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-W", "1", "-I", "3", "-r", "2",
                        "--out", dir.string()});
    const std::string out = testing::internal::GetCapturedStdout();
    const std::string err = testing::internal::GetCapturedStderr();
    ASSERT_EQ(rc, 0) << err;
    EXPECT_EQ(lines_of(out), 2u) << out;
    EXPECT_NE(out.find("pthreads/create/N=10/P="), std::string::npos) << out;
    EXPECT_NE(out.find("ns/thread"), std::string::npos) << out;
    EXPECT_NE(out.find("median of 6 runs; min "), std::string::npos) << out;  // 2 forks x 3 measured
    EXPECT_EQ(out.find("----"), std::string::npos) << out;   // no table rule
    EXPECT_EQ(err.find("CPU Caches"), std::string::npos) << err;  // no context block
    EXPECT_LE(lines_of(err), 3u) << err;  // what is measured, the summary, perhaps "oversubscribed"
    fs::remove_all(dir);
    // Google's console format on request; its context block is not printed with -q.
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    EXPECT_EQ(cli({"run", "-b", "pthreads", "-w", "create", "-p", "N=10", "-W", "0", "-I", "1", "-q",
                   "--benchmark_format=console", "--out", dir.string()}),
              0);
    const std::string table = testing::internal::GetCapturedStdout();
    const std::string quiet_err = testing::internal::GetCapturedStderr();
    EXPECT_NE(table.find("----"), std::string::npos) << table;
    EXPECT_EQ(quiet_err.find("CPU Caches"), std::string::npos) << quiet_err;
    EXPECT_EQ(quiet_err.find("Run on"), std::string::npos) << quiet_err;
    fs::remove_all(dir);
}

// Sizes too large for the machine fail with a reason that says so (before: "std::bad_alloc").
TEST(Folder, HugeSizesFailWithAClearReason) {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "ASan's allocator reports an allocation this size (allocation-size-too-big) instead of throwing";
#endif
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
    GTEST_SKIP() << "ASan's allocator reports an allocation this size (allocation-size-too-big) instead of throwing";
#endif
#endif
    const auto dir = fresh_dir("huge");
    // Matrix N=10^7 needs 3 x 10^14 doubles: no thread limit stops it, its allocation fails.
    // 3: the run ended with a failed point (README, "Exit codes").
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "matrix", "-p", "N=10^7", "-W", "0", "-I", "1", "-q", "--out",
                   dir.string()}),
              3);
    const std::string csv = slurp(dir / "results.csv");
    EXPECT_NE(csv.find("out of memory: the point's sizes need more memory"), std::string::npos) << csv;
    fs::remove_all(dir);
}

// 10^12 threads are beyond the system's limit (pid_max, memory): refused by the capacity check
// before anything is allocated (Group reserves its handles at the first spawn), not failed
// allocating 10^12 handles; a refusal is a result, exit 0.
TEST(Folder, HugeThreadCountsAreRefusedBeforeAnyAllocation) {
    const auto dir = fresh_dir("huge-threads");
    ASSERT_EQ(cli({"run", "-b", "pthreads", "-w", "switch", "-p", "T=10^12", "-W", "0", "-I", "1", "-q", "--out",
                   dir.string()}),
              0);
    const std::string csv = slurp(dir / "results.csv");
    EXPECT_NE(csv.find("refused"), std::string::npos) << csv;
    EXPECT_NE(csv.find("system limit"), std::string::npos) << csv;
    EXPECT_EQ(csv.find("out of memory"), std::string::npos) << csv;
    fs::remove_all(dir);
}

// ReplyReader: lines split across reads, blank lines, a too-long line before a good one (kept:
// the reply is the last line), a too-long last line (too_long), an unfinished last line.
TEST(Folder, ReplyReaderKeepsTheLastLineWithABound) {
    using coopbench::ReplyReader;
    std::vector<std::string> seen;
    auto each = [&](std::string&& l) { seen.push_back(std::move(l)); };
    auto feed = [&](ReplyReader& r, const std::string& text, std::size_t chunk) {
        for (std::size_t i = 0; i < text.size(); i += chunk) r.feed(text.data() + i, std::min(chunk, text.size() - i), each);
    };
    for (std::size_t chunk : {1, 3, 7, 64}) {
        seen.clear();
        ReplyReader r(16);
        feed(r, "chatter\n\n  \n" + std::string(40, 'x') + "\n{\"ok\":1}\n\n", chunk);
        EXPECT_EQ(seen, (std::vector<std::string>{"chatter", "{\"ok\":1}"})) << chunk;
        EXPECT_FALSE(r.too_long()) << chunk;
        EXPECT_TRUE(r.any_too_long()) << chunk;
        EXPECT_EQ(r.last(), "{\"ok\":1}") << chunk;
        EXPECT_EQ(r.longest(), 40u) << chunk;

        ReplyReader flood(16);
        feed(flood, "{\"ok\":1}\n" + std::string(1000, 'y') + "\n\n", chunk);
        EXPECT_TRUE(flood.too_long()) << chunk;
        EXPECT_EQ(flood.longest(), 1000u) << chunk;

        ReplyReader unfinished(16);
        feed(unfinished, "a\n{\"ok\":2}", chunk);
        EXPECT_FALSE(unfinished.too_long()) << chunk;
        EXPECT_TRUE(unfinished.has_last()) << chunk;
        EXPECT_EQ(unfinished.last(), "{\"ok\":2}") << chunk;

        ReplyReader endless(16);
        feed(endless, "{\"ok\":3}\n" + std::string(100, 'z'), chunk);  // still writing when it ended
        EXPECT_TRUE(endless.too_long()) << chunk;
    }
}

// The build's manifests are written at configure time, before their programs are built: a
// build of the tests only leaves go's and tokio's programs unbuilt. Such a backend is left
// out quietly (before: a "left out" line on every command, bad input's one line included),
// and said where it matters: `list`, a sweep of every backend, and `-b` naming it.
TEST(Folder, AnUnbuiltProgramOfTheBuildIsSaidWhereItMatters) {
    const auto manifests = fresh_dir("build-backends");
    fs::create_directories(manifests);
    {
        std::ofstream m(manifests / "ghost.json");
        m << R"({"name": "ghost", "program": ")" << (manifests / "not-built").string() << R"("})" << "\n";
    }
    const std::map<std::string, std::string> env = {{"COOPBENCH_BUILD_BACKENDS", manifests.string()}};
    auto run = [&](const std::vector<std::string>& args) {
        testing::internal::CaptureStdout();
        testing::internal::CaptureStderr();
        const int rc = coopbench::test::cli_in_child(args, env);
        std::string out = testing::internal::GetCapturedStdout();
        return std::tuple<int, std::string, std::string>{rc, out, testing::internal::GetCapturedStderr()};
    };
    {
        auto [rc, out, err] = run({"run", "-w", "creat"});  // bad input: one line, its own
        EXPECT_EQ(rc, 2);
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_EQ(err.find("left out"), std::string::npos) << err;
    }
    {
        // A sweep of every backend refused late (its folder cannot be written): still one line.
        auto [rc, out, err] = run({"run", "-w", "create", "--out", "/proc/coopbench-cannot-write"});
        EXPECT_EQ(rc, 2);
        EXPECT_EQ(lines_of(err), 1u) << err;
    }
    {
        auto [rc, out, err] = run({"run", "--dry-run", "-b", "pthreads", "-w", "create", "-p", "N=10"});
        EXPECT_EQ(rc, 0) << err;
        EXPECT_EQ(err.find("ghost"), std::string::npos) << err;
    }
    {
        auto [rc, out, err] = run({"run", "-b", "ghost", "-w", "create"});  // named: why it cannot run
        EXPECT_EQ(rc, 2);
        EXPECT_EQ(lines_of(err), 1u) << err;
        EXPECT_NE(err.find("backend 'ghost' is left out: program " + (manifests / "not-built").string() + " is not executable"),
                  std::string::npos)
            << err;
    }
    {
        auto [rc, out, err] = run({"list"});
        EXPECT_EQ(rc, 0);
        EXPECT_TRUE(err.empty()) << err;
        EXPECT_NE(out.find("Left out (1)"), std::string::npos) << out;
        EXPECT_NE(out.find("  ghost  — program "), std::string::npos) << out;
    }
    {
        auto [rc, out, err] = run({"list", "--json"});
        EXPECT_EQ(rc, 0);
        const auto j = nlohmann::json::parse(out);
        ASSERT_EQ(j.at("left_out").size(), 1u) << out;
        EXPECT_EQ(j.at("left_out")[0].at("name"), "ghost");
        EXPECT_NE(j.at("left_out")[0].at("reason").get<std::string>().find("not executable"), std::string::npos);
    }
    {
        // A sweep of every backend says once that ghost is not among them.
        const auto dir = fresh_dir("every-backend");
        auto [rc, out, err] = run({"run", "-w", "create", "-p", "N=10", "-P", "1", "-W", "0", "-I", "1", "-q", "--out", dir.string()});
        EXPECT_TRUE(rc == 0 || rc == 3) << err;
        EXPECT_NE(err.find("coopbench: note: external backend ghost left out: program"), std::string::npos) << err;
        fs::remove_all(dir);
    }
    fs::remove_all(manifests);
}

namespace {

// on_terminal — `coopbench ARGS...` in a child whose stdout and stderr are a terminal (a
// pseudo-terminal `columns` wide); its exit code and every byte it wrote there. A child
// silent for 120 s is killed (the test then fails instead of hanging).
std::pair<int, std::string> on_terminal(const std::vector<std::string>& args, unsigned short columns) {
    winsize ws{};
    ws.ws_row = 24;
    ws.ws_col = columns;
    int master = -1;
    std::fflush(nullptr);
    const pid_t pid = forkpty(&master, nullptr, nullptr, &ws);
    if (pid == 0) {
        const int rc = coopbench::test::cli_here(args);
        std::cout.flush();  // _exit flushes nothing (Google's console tables go through std::cout)
        std::fflush(nullptr);
        _exit(rc);
    }
    if (pid < 0) return {-1, "forkpty failed"};
    std::string bytes;
    char buf[4096];
    for (;;) {
        pollfd p{master, POLLIN, 0};
        if (poll(&p, 1, 120000) <= 0) {
            kill(pid, SIGKILL);
            bytes += "\n[the child wrote nothing for 120 s: killed]";
            break;
        }
        const ssize_t n = read(master, buf, sizeof buf);
        if (n <= 0) break;  // EIO: the child closed the terminal (it exited)
        bytes.append(buf, static_cast<std::size_t>(n));
    }
    close(master);
    int status = 0;
    waitpid(pid, &status, 0);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, bytes};
}

// screen — the lines a reader sees after `bytes` reached a terminal `columns` wide that wraps
// long lines: "\r" returns to the start of the row, "\033[K" erases to its end; rows joined
// by a wrap are one line again.
std::vector<std::string> screen(const std::string& bytes, std::size_t columns) {
    std::vector<std::string> rows(1);
    std::vector<bool> wrapped(1, false);  // row i continues row i-1
    std::size_t col = 0;
    for (std::size_t i = 0; i < bytes.size(); ++i) {
        const char c = bytes[i];
        if (c == '\r') {
            col = 0;
        } else if (c == '\n') {
            rows.emplace_back();
            wrapped.push_back(false);
            col = 0;
        } else if (c == '\033' && bytes.compare(i, 3, "\033[K") == 0) {
            rows.back().resize(std::min(rows.back().size(), col));
            i += 2;
        } else {
            if (col == columns) {  // the terminal wraps
                rows.emplace_back();
                wrapped.push_back(true);
                col = 0;
            }
            std::string& r = rows.back();
            if (r.size() <= col) r.resize(col + 1, ' ');
            r[col++] = c;
        }
    }
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (wrapped[i] && !lines.empty()) lines.back() += rows[i];
        else lines.push_back(rows[i]);
    }
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    return lines;
}

}  // namespace

// On a terminal: one live progress line on stderr naming the fork that runs now, erased
// before each point's result line and before the summary, and never wider than the terminal
// (a wrapped line cannot be erased by "\r": its first rows stayed on the screen, glued to
// the output after them). Before: the line named the fork that had ended and was as long as
// the point's id made it.
TEST(Folder, OnATerminalOneLiveProgressLineAndOneResultLinePerPoint) {
    const auto dir = fresh_dir("tty");
    const unsigned short columns = 40;
    auto [rc, bytes] = on_terminal({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-W", "0", "-I", "1",
                                    "--out", dir.string()},
                                   columns);
    ASSERT_EQ(rc, 0) << bytes;
    const auto lines = screen(bytes, columns);
    std::string seen;
    for (auto& l : lines) seen += l + "\n";
    std::size_t results = 0;
    for (auto& l : lines) {
        EXPECT_EQ(l.find("elapsed"), std::string::npos) << "a progress line left on the screen:\n" << seen;
        EXPECT_EQ(l.find("[1/"), std::string::npos) << "a progress line left on the screen:\n" << seen;
        if (l.rfind("pthreads/create/N=", 0) == 0) {
            ++results;
            EXPECT_NE(l.find(" ns/thread  median of "), std::string::npos) << seen;
        }
    }
    EXPECT_EQ(results, 2u) << seen;
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines.back().rfind("coopbench: 2 forks (0 failed", 0), 0u) << seen;
    {
        // Google's console tables on request: the progress line is erased before them too.
        const auto console = fresh_dir("tty-console");
        auto [crc, cbytes] = on_terminal({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-W", "0", "-I", "1",
                                          "--benchmark_format=console", "--out", console.string()},
                                         columns);
        EXPECT_EQ(crc, 0) << cbytes;
        std::string cseen;
        for (auto& l : screen(cbytes, columns)) cseen += l + "\n";
        EXPECT_EQ(cseen.find("elapsed"), std::string::npos) << "a progress line left on the screen:\n" << cseen;
        EXPECT_NE(cseen.find("pthreads/create/N=20/P=2/manual_time"), std::string::npos) << cseen;
        fs::remove_all(console);
    }
    // The live line was there, named the fork about to run, and fit the terminal.
    const auto first_progress = bytes.find("\033[K[1/2] ");
    const auto first_result = bytes.find("pthreads/create/N=10/P=");
    ASSERT_NE(first_progress, std::string::npos) << bytes;
    ASSERT_NE(first_result, std::string::npos) << bytes;
    EXPECT_LT(first_progress, first_result) << "the progress line must name the fork that runs, before its result";
    for (std::size_t at = bytes.find("\033[K["); at != std::string::npos; at = bytes.find("\033[K[", at + 1)) {
        const std::size_t end = bytes.find_first_of("\r\n", at);
        const std::size_t visible = (end == std::string::npos ? bytes.size() : end) - (at + 3);
        EXPECT_LT(visible, static_cast<std::size_t>(columns)) << bytes.substr(at + 3, visible);
    }
    fs::remove_all(dir);
}

// A log's result lines line up within a workload: a workload with long ids (here lock-global's
// beside create's) does not push the other workloads' numbers right (before: every id was
// padded to the longest of the sweep, 100 characters with abortable-lock).
TEST(Folder, ALogsColumnsLineUpWithinAWorkload) {
    const auto dir = fresh_dir("align");
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    const int rc = cli({"run", "-b", "pthreads", "-w", "create,lock-global", "-p", "N=10", "-p", "K=10", "-p", "T=2",
                        "-W", "0", "-I", "1", "-q", "--out", dir.string()});
    const std::string out = testing::internal::GetCapturedStdout();
    testing::internal::GetCapturedStderr();
    ASSERT_EQ(rc, 0) << out;
    std::istringstream in(out);
    std::size_t checked = 0;
    for (std::string l; std::getline(in, l);) {
        const std::size_t id_end = l.find(' ');
        ASSERT_NE(id_end, std::string::npos) << l;
        // The id, two spaces, then the median right-aligned in 10 columns.
        const std::size_t value = l.find_first_not_of(' ', id_end);
        EXPECT_LE(value, id_end + 2 + 10) << out;
        ++checked;
    }
    EXPECT_EQ(checked, 2u) << out;
    fs::remove_all(dir);
}
