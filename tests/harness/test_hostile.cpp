// What a hostile program, a full disk, a kill or a second user does to a sweep: the driver
// never aborts, every result file stays whole and readable (valid UTF-8, no NUL, no control
// character, strict JSON), a fork is in every file or in none, a second sweep into a folder in
// use is refused, and the point's process tree ends even when every coopbench process is
// killed at once. The fake programs are shell scripts (fake.sh MODE) with one manifest each,
// loaded through $COOPBENCH_BACKENDS (harness/external.hpp).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "harness/csv.hpp"
#include "harness/register_backend.hpp"
#include "harness/sweep.hpp"
#include "runtimes/pthreads/pthreads.hpp"
#include "tests/support/child.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/cli_background.hpp"

namespace fs = std::filesystem;

COOPBENCH_REGISTER_BACKEND(coopbench::PthreadsBackend, "pthreads", "POSIX threads");

namespace {

// The fake programs: one per MODE, each a branch of one shell script. printf's octal escapes
// give the bytes (dash and bash alike).
const char* kFake = R"(#!/bin/sh
mode=$1
if [ "$2" = "--list" ]; then echo '{"protocol": 1, "workloads": ["create"], "iterations": false}'; exit 0; fi
read request
ok='"status": "ok", "seconds": 0.001, "value": 10.0, "check": "passed"'
case $mode in
good) echo "{$ok}" ;;
utf8-cut-stderr) printf 'x' >&2; i=0; while [ $i -lt 200 ]; do printf '\320\264' >&2; i=$((i+1)); done; echo >&2; exit 1 ;;
bad-utf8-reply) printf '{"status": "failed", "reason": "Gr\366\337e"}\n' ;;
bad-utf8-stderr) printf 'Gr\366\337e\n' >&2; exit 1 ;;
nul-reason) echo '{"status": "failed", "reason": "before\u0000after, with a comma"}' ;;
ansi-stderr) printf '\033[31merror: it broke\033[0m\n' >&2; exit 1 ;;
ctrl-counter) echo "{$ok, \"counters\": {\"a\\u0001b\": 1, \"c\\u001b[0m\": 2}}" ;;
dup-status) echo '{"status": "failed", "reason": "it broke", "status": "ok", "seconds": 0.001, "value": 10.0, "check": "passed"}' ;;
nul-reply) printf '{"status": "ok", "seconds": 0.001, "value": 10.0, "check": "passed"}\000anything\n' ;;
counter-override) echo "{$ok, \"counters\": {\"noisy\": 0}}" ;;
tree) setsid sh -c 'echo $$ > "$0.daemon"; exec sleep 100' "$PIDS" </dev/null >/dev/null 2>&1 &
      sh -c 'echo $$ > "$0.group"; exec sleep 101' "$PIDS" </dev/null >/dev/null 2>&1 &
      sleep 60; echo "{$ok}" ;;
esac
)";

const std::vector<std::string> kModes = {"good",      "utf8-cut-stderr", "bad-utf8-reply", "bad-utf8-stderr",
                                         "nul-reason", "ansi-stderr",     "ctrl-counter",   "dup-status",
                                         "nul-reply",  "counter-override", "tree"};

// The fakes' folder, made once: fake.sh and h-MODE.json for each mode; $COOPBENCH_BACKENDS
// names it (the driver runs in forked children, which inherit it).
const fs::path& fakes() {
    static const fs::path dir = [] {
        fs::path d = fs::temp_directory_path() / ("coopbench-hostile-" + std::to_string(getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        { std::ofstream(d / "fake.sh") << kFake; }
        fs::permissions(d / "fake.sh", fs::perms::owner_all);
        for (auto& m : kModes)
            std::ofstream(d / ("h-" + m + ".json")) << nlohmann::json{{"name", "h-" + m}, {"program", "fake.sh"}, {"args", {m}}}.dump();
        setenv("COOPBENCH_BACKENDS", d.c_str(), 1);
        setenv("PIDS", (d / "pid").c_str(), 1);
        return d;
    }();
    return dir;
}

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("coopbench-hostile-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// cli_err — `coopbench ARGS` in a child (the test's environment, the fakes loaded); its exit
// code (-1: it crashed, e.g. an abort) and what it wrote on stderr. `before` runs in the
// child first (a limit on file sizes).
std::pair<int, std::string> cli_err(const std::vector<std::string>& args, const std::function<void()>& before = {}) {
    fakes();
    testing::internal::CaptureStderr();
    const std::string r = coopbench::test::in_child(
        [&] {
            if (before) before();
            return std::to_string(coopbench::test::cli_here(args));
        },
        300);
    const std::string err = testing::internal::GetCapturedStderr();
    try {
        return {std::stoi(r), err};
    } catch (const std::exception&) {
        return {-1, r + "\n" + err};
    }
}

std::vector<std::string> sweep(const std::string& backends, const fs::path& out, std::vector<std::string> more = {}) {
    std::vector<std::string> a = {"run", "-b", backends, "-w", "create", "-p", "N=10", "-P", "1", "-W", "0", "-I", "1",
                                  "--timeout", "60", "-q", "--out", out.string()};
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

// Row — a measured run's key: point, repetition, iteration.
using Row = std::tuple<std::string, int, int>;

// folder_problems — what is wrong with a result folder's files: a NUL or a control character
// anywhere, invalid UTF-8, a results.csv row of another field count than the header, a
// points.jsonl line or a *.json file that is not strict JSON, results.csv and points.jsonl
// holding different rows or one row twice. `rows` gets results.csv's rows.
std::vector<std::string> folder_problems(const fs::path& dir, std::multiset<Row>* rows = nullptr) {
    std::vector<std::string> bad;
    for (auto& e : fs::directory_iterator(dir)) {
        if (!e.is_regular_file() || e.path().filename().string()[0] == '.') continue;
        const std::string text = slurp(e.path());
        const std::string name = e.path().filename().string();
        for (unsigned char c : text)
            if ((c < 0x20 && c != '\n') || c == 0x7F) {
                bad.push_back(name + ": holds the control character " + std::to_string(c));
                break;
            }
        // Valid UTF-8: cleaning changes nothing but the newlines (the check above saw the rest).
        std::string flat = text;
        std::replace(flat.begin(), flat.end(), '\n', ' ');
        if (coopbench::clean_text(flat) != flat) bad.push_back(name + ": not valid UTF-8");
        if (e.path().extension() == ".json" && !nlohmann::json::accept(text)) bad.push_back(name + ": not strict JSON");
    }
    const auto csv = lines(slurp(dir / "results.csv"));
    std::multiset<Row> in_csv, in_jsonl;
    if (!csv.empty()) {
        const auto header = coopbench::parse_csv_line(csv[0]);
        auto col = [&](const char* n) { return std::find(header.begin(), header.end(), n) - header.begin(); };
        for (std::size_t i = 1; i < csv.size(); ++i) {
            const auto f = coopbench::parse_csv_line(csv[i]);
            if (f.size() != header.size()) {
                bad.push_back("results.csv line " + std::to_string(i + 1) + ": " + std::to_string(f.size()) + " fields");
                continue;
            }
            in_csv.insert({f[col("point")], std::stoi(f[col("repetition")]), std::stoi(f[col("iteration")])});
        }
    }
    for (auto& l : lines(slurp(dir / "points.jsonl"))) {
        if (!nlohmann::json::accept(l)) {
            bad.push_back("points.jsonl: a line that is not JSON");
            continue;
        }
        const auto j = nlohmann::json::parse(l);
        in_jsonl.insert({j.at("point").get<std::string>(), j.at("repetition").get<int>(), j.at("iteration").get<int>()});
    }
    if (in_csv != in_jsonl)
        bad.push_back("results.csv has " + std::to_string(in_csv.size()) + " rows, points.jsonl " +
                      std::to_string(in_jsonl.size()) + ", not the same");
    if (std::set<Row>(in_csv.begin(), in_csv.end()).size() != in_csv.size()) bad.push_back("a row is there twice");
    if (rows) *rows = in_csv;
    return bad;
}

std::string joined(const std::vector<std::string>& v) {
    std::string s;
    for (auto& x : v) s += x + "\n";
    return s;
}

// reason_of — the reason results.csv gives for backend `b`'s point.
std::string reason_of(const fs::path& dir, const std::string& b) {
    const auto csv = lines(slurp(dir / "results.csv"));
    const auto header = coopbench::parse_csv_line(csv.at(0));
    const auto ir = std::find(header.begin(), header.end(), "reason") - header.begin();
    const auto ib = std::find(header.begin(), header.end(), "backend") - header.begin();
    for (std::size_t i = 1; i < csv.size(); ++i) {
        const auto f = coopbench::parse_csv_line(csv[i]);
        if (f.size() == header.size() && f[ib] == b) return f[ir];
    }
    return "(no row)";
}

bool alive(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

}  // namespace

// A program's text (invalid UTF-8, a cut inside a character, a NUL, ANSI colour, control
// characters in a counter's name) becomes a failed point with a clean reason in every file:
// before, the first two aborted the driver (nlohmann's type_error.316, exit 134) on every
// resume, a NUL tore results.csv (fputs stopped at it), and the rest made benchmark.json
// invalid JSON.
TEST(Hostile, ProgramTextIsCleanInEveryFileAndTheFolderResumes) {
    const auto dir = fresh_dir("text");
    const std::string backends = "h-good,h-utf8-cut-stderr,h-bad-utf8-reply,h-bad-utf8-stderr,h-nul-reason,h-ansi-stderr,h-ctrl-counter";
    auto [rc, err] = cli_err(sweep(backends, dir));
    ASSERT_EQ(rc, 3) << err;
    std::multiset<Row> rows;
    EXPECT_EQ(joined(folder_problems(dir, &rows)), "");
    EXPECT_EQ(rows.size(), 7u);
    EXPECT_NE(reason_of(dir, "h-nul-reason").find("before\\x00after, with a comma"), std::string::npos)
        << reason_of(dir, "h-nul-reason");
    EXPECT_NE(reason_of(dir, "h-ansi-stderr").find("\\x1B[31merror: it broke"), std::string::npos)
        << reason_of(dir, "h-ansi-stderr");
    EXPECT_NE(reason_of(dir, "h-bad-utf8-stderr").find("Gr\xEF\xBF\xBD\xEF\xBF\xBD" "e"), std::string::npos)
        << reason_of(dir, "h-bad-utf8-stderr");
    auto [rc2, err2] = cli_err({"run", "--resume", dir.string(), "-q"});
    EXPECT_EQ(rc2, 3) << err2;
    EXPECT_NE(err2.find("0 to go"), std::string::npos) << err2;
    fs::remove_all(dir);
}

// The sanitiser itself: invalid bytes become U+FFFD, controls \xHH, tabs and newlines a space;
// a cut never splits a character; a CSV field never holds a NUL.
TEST(Hostile, CleanTextAndCutText) {
    using coopbench::clean_text;
    using coopbench::cut_text;
    EXPECT_EQ(clean_text("Gr\xF6\xDF" "e"), "Gr\xEF\xBF\xBD\xEF\xBF\xBD" "e");
    EXPECT_EQ(clean_text(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(clean_text("\x1B[31m\t\n\x7F"), "\\x1B[31m  \\x7F");
    EXPECT_EQ(clean_text("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");      // an overlong '/'
    EXPECT_EQ(clean_text("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
    EXPECT_EQ(clean_text("caf\xC3\xA9 \xF0\x9F\x98\x80"), "caf\xC3\xA9 \xF0\x9F\x98\x80");  // valid, unchanged
    std::string d = "x";
    for (int i = 0; i < 200; ++i) d += "\xD0\xB4";
    for (std::size_t n : {200u, 201u, 300u}) {
        const std::string c = cut_text(d, n);
        EXPECT_EQ(clean_text(c), c) << n;  // valid UTF-8
        EXPECT_LE(c.size(), n + 3);
    }
    EXPECT_EQ(coopbench::csv_field(std::string("a\0,b", 4)), "\"a\\x00,b\"");
}

// A reply that says two things (a key twice), one with a NUL after its object (nlohmann's
// parser stops there unseen), and one whose counter would replace the driver's noise flag in
// benchmark.json are failed points with their reason; before, all three were recorded ok.
TEST(Hostile, DuplicateKeysANulAfterTheReplyAndReservedCountersFailThePoint) {
    const auto dir = fresh_dir("reply");
    auto [rc, err] = cli_err(sweep("h-dup-status,h-nul-reply,h-counter-override,h-good", dir));
    ASSERT_EQ(rc, 3) << err;
    EXPECT_EQ(joined(folder_problems(dir)), "");
    EXPECT_NE(reason_of(dir, "h-dup-status").find("the key \"status\" is given twice"), std::string::npos)
        << reason_of(dir, "h-dup-status");
    EXPECT_NE(reason_of(dir, "h-nul-reply").find("a NUL byte at offset"), std::string::npos) << reason_of(dir, "h-nul-reply");
    EXPECT_NE(reason_of(dir, "h-counter-override").find("\"noisy\" has a name the driver reserves"), std::string::npos)
        << reason_of(dir, "h-counter-override");
    EXPECT_EQ(reason_of(dir, "h-good"), "");
    fs::remove_all(dir);
}

// kill -9 of the driver with nothing left to clean up after it (as when the supervisor and
// the driver are killed together): the point's reaper ends the program's tree, a setsid daemon
// and a child in the point's own group alike. Before, both survived (PR_SET_PDEATHSIG reached
// the program only).
TEST(Hostile, KillNineOfEveryCoopbenchProcessEndsThePointsTree) {
    const auto dir = fresh_dir("kill");
    const fs::path pids = fakes() / "pid";
    fs::remove(pids.string() + ".daemon");
    fs::remove(pids.string() + ".group");
    const pid_t driver = coopbench::test::cli_started(sweep("h-tree", dir));
    ASSERT_GT(driver, 0);
    pid_t daemon = 0, group = 0;
    const bool started = coopbench::test::eventually([&] {
        std::ifstream a(pids.string() + ".daemon"), b(pids.string() + ".group");
        return static_cast<bool>(a >> daemon) && static_cast<bool>(b >> group);
    });
    ASSERT_TRUE(started) << "the fake's tree never started";
    ASSERT_TRUE(alive(daemon) && alive(group));
    coopbench::test::kill_and_reap(driver);
    EXPECT_TRUE(coopbench::test::eventually([&] { return !alive(daemon) && !alive(group); }))
        << "left running: " << (alive(daemon) ? "the setsid daemon " : "") << (alive(group) ? "the group's child" : "");
    if (alive(daemon)) kill(daemon, SIGKILL);
    if (alive(group)) kill(group, SIGKILL);
    fs::remove_all(dir);
}

// A fork that results.csv holds and points.jsonl does not (a driver killed between its two
// writes, or an older one that went on past a full disk) is taken out and measured again by
// --resume; before, the resume said "0 to go" and points.jsonl stayed short for good.
TEST(Hostile, ResumeMeasuresAgainAForkInOneResultFileOnly) {
    const auto dir = fresh_dir("unpaired");
    auto args = sweep("pthreads", dir);
    args[6] = "N=10,20,30";
    auto [rc, err] = cli_err(args);
    ASSERT_EQ(rc, 0) << err;
    std::multiset<Row> before;
    ASSERT_EQ(joined(folder_problems(dir, &before)), "");
    ASSERT_EQ(before.size(), 3u);
    // points.jsonl without its middle line, results.csv without its last row.
    auto jl = lines(slurp(dir / "points.jsonl"));
    {
        std::ofstream out(dir / "points.jsonl", std::ios::trunc);
        out << jl[0] << "\n" << jl[2] << "\n";
    }
    auto csv = lines(slurp(dir / "results.csv"));
    {
        std::ofstream out(dir / "results.csv", std::ios::trunc);
        for (std::size_t i = 0; i + 1 < csv.size(); ++i) out << csv[i] << "\n";
    }
    auto [rc2, err2] = cli_err({"run", "--resume", dir.string(), "-q"});
    ASSERT_EQ(rc2, 0) << err2;
    EXPECT_NE(err2.find("2 to go"), std::string::npos) << err2;
    std::multiset<Row> after;
    EXPECT_EQ(joined(folder_problems(dir, &after)), "");
    EXPECT_EQ(after, before);
    fs::remove_all(dir);
}

// A full disk (here: RLIMIT_FSIZE, which fails a write past the limit with EFBIG as ENOSPC
// would, with no mount needed) at any moment of a sweep: one line and exit 4, every file whole
// (benchmark.json strict JSON, a fork in every file or in none), no empty benchmark-N.json;
// then --resume completes it with every run once. Before, the driver aborted (134) with
// benchmark.json torn, and resumes left points.jsonl short.
TEST(Hostile, AFullDiskIsOneLineAndTheResumeCompletesTheSweep) {
    const auto ref = fresh_dir("disk-ref");
    auto args = sweep("pthreads", ref);
    args[6] = "N=10,20,30,40,50,60";
    ASSERT_EQ(cli_err(args).first, 0);
    std::multiset<Row> want;
    ASSERT_EQ(joined(folder_problems(ref, &want)), "");
    const auto limit_max = std::min(fs::file_size(ref / "points.jsonl"), fs::file_size(ref / "benchmark.json"));
    int stopped = 0;
    for (double share : {0.2, 0.45, 0.6, 0.75, 0.9}) {
        const auto dir = fresh_dir("disk");
        args[args.size() - 1] = dir.string();  // --out (sweep() puts it last)
        const rlim_t limit = static_cast<rlim_t>(share * static_cast<double>(limit_max));
        auto [rc, err] = cli_err(args, [limit] {
            signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing the process
            rlimit r{limit, limit};
            setrlimit(RLIMIT_FSIZE, &r);
        });
        SCOPED_TRACE("limit " + std::to_string(limit) + " bytes: " + err);
        if (rc == 0) continue;  // no file reached the limit
        ++stopped;
        ASSERT_EQ(rc, 4);
        EXPECT_NE(err.find("cannot write"), std::string::npos);
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
        if (!fs::exists(dir / "sweep.json")) {  // stopped before the sweep was recorded: no folder
            EXPECT_FALSE(fs::exists(dir));
            continue;
        }
        EXPECT_EQ(joined(folder_problems(dir)), "");
        // A resume on the still full disk: one line, and no empty benchmark-2.json.
        auto [rc_full, err_full] = cli_err({"run", "--resume", dir.string(), "-q"}, [limit] {
            signal(SIGXFSZ, SIG_IGN);
            rlimit r{limit, limit};
            setrlimit(RLIMIT_FSIZE, &r);
        });
        EXPECT_TRUE(rc_full == 4 || rc_full == 0) << err_full;
        EXPECT_EQ(joined(folder_problems(dir)), "");
        for (auto& e : fs::directory_iterator(dir))
            if (e.path().extension() == ".json") {
                EXPECT_GT(fs::file_size(e.path()), 0u) << e.path();
            }
        auto [rc2, err2] = cli_err({"run", "--resume", dir.string(), "-q"});
        EXPECT_EQ(rc2, 0) << err2;
        std::multiset<Row> got;
        EXPECT_EQ(joined(folder_problems(dir, &got)), "");
        EXPECT_EQ(got, want);
        fs::remove_all(dir);
    }
    EXPECT_GE(stopped, 3) << "the limits should stop most of these sweeps";
    fs::remove_all(ref);
}

// A folder another run holds (its lock taken) is refused with the holder's pid, for a new
// sweep and a resume alike; before, two sweeps into one folder both ran, 24 keys measured twice.
TEST(Hostile, AFolderInUseIsRefusedWithTheHoldersPid) {
    const auto dir = fresh_dir("lock");
    fs::create_directories(dir);
    const int fd = open((dir / ".coopbench.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
    ASSERT_EQ(write(fd, "4242\n", 5), 5);
    auto [rc, err] = cli_err(sweep("pthreads", dir));
    EXPECT_EQ(rc, 2);
    EXPECT_NE(err.find("is in use by another coopbench run (pid 4242)"), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(dir / "results.csv"));
    close(fd);  // released: the sweep runs, and a resume after it
    EXPECT_EQ(cli_err(sweep("pthreads", dir)).first, 0);
    const int fd2 = open((dir / ".coopbench.lock").c_str(), O_RDWR | O_CLOEXEC);
    ASSERT_EQ(flock(fd2, LOCK_EX | LOCK_NB), 0);
    auto [rc2, err2] = cli_err({"run", "--resume", dir.string(), "-q"});
    EXPECT_EQ(rc2, 2);
    EXPECT_NE(err2.find("is in use by another coopbench run (pid"), std::string::npos) << err2;
    close(fd2);
    fs::remove_all(dir);
}

// The command line's smaller holes: each is one line and exit 2 now (before: silently the last
// value, every point timed out, an abort, or accepted).
TEST(Hostile, RepeatedParamsAbsurdTimeoutsAndLongPathsAreOneLine) {
    const auto dir = fresh_dir("cli");
    const std::string longname(300, 'x');
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {sweep("pthreads", dir, {"-p", "N=20"}), "--param N is given 2 times"},
        {sweep("pthreads", dir, {"--backend-opt", "a=1", "--backend-opt", "a=2"}), "--backend-opt a is given 2 times"},
        {{"run", "-b", "pthreads", "-w", "create", "--timeout", "1e-9", "--out", dir.string()},
         "--timeout must be 0 (none) or at least 1 s, got 1e-09"},
        {sweep("pthreads", dir / longname), "is 300 bytes, longer than the 255 a name in a path may have"},
        {{"merge", (dir / longname).string(), dir.string()}, "is 300 bytes, longer than the 255"},
        {{"merge", dir.string(), (dir / longname).string()}, "is 300 bytes, longer than the 255"},
        {{"run", "--resume", (dir / longname).string()}, "is 300 bytes, longer than the 255"},
        {{"run", "-b", "pthreads", "-w", "create", "--dry-run", "--benchmark_filter=zzz"}, "matches none"},
        {{"run", "-b", "pthreads", "-w", "create", "--dry-run", "--shards", "-1"}, "--shards takes a whole number (N: the shard count"},
        {{"run", "-b", "pthreads", "-w", "create", "--dry-run", "--timeout", "x"}, "--timeout takes a number (seconds"},
    };
    for (auto& [args, want] : cases) {
        auto [rc, err] = cli_err(args);
        EXPECT_EQ(rc, 2) << want << ": " << err;
        EXPECT_NE(err.find(want), std::string::npos) << err;
        EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
    }
    fs::remove_all(dir);
}

// A resume keeps the sweep's filter (sweep.json records it: before, the resume without it was
// refused with "it has no column param.K"), refuses --inject-fault, and refuses a sweep.json
// that is another sweep's (before, its rows were resumed into this folder).
TEST(Hostile, AResumeKeepsTheFilterAndRefusesAnotherSweepsRecord) {
    const auto dir = fresh_dir("filter");
    auto [rc, err] = cli_err({"run", "-b", "pthreads,h-good", "-w", "create,switch", "-P", "1", "-W", "0", "-I", "1", "-q",
                              "--out", dir.string(), "--benchmark_filter=create"});
    ASSERT_EQ(rc, 0) << err;
    auto [rc2, err2] = cli_err({"run", "--resume", dir.string(), "-q"});
    EXPECT_EQ(rc2, 0) << err2;
    auto [rc3, err3] = cli_err({"run", "--resume", dir.string(), "-q", "--inject-fault"});
    EXPECT_EQ(rc3, 2) << err3;
    EXPECT_NE(err3.find("--inject-fault"), std::string::npos) << err3;
    auto sweep_json = nlohmann::json::parse(slurp(dir / "sweep.json"));
    sweep_json["backends"] = {"h-good"};
    { std::ofstream(dir / "sweep.json") << sweep_json.dump(2); }
    auto [rc4, err4] = cli_err({"run", "--resume", dir.string(), "-q"});
    EXPECT_EQ(rc4, 2) << err4;
    EXPECT_NE(err4.find("the sweep.json is not this folder's"), std::string::npos) << err4;
    fs::remove_all(dir);
}

// After --resume a point's line summarises every fork of the point, the ones measured before
// the resume too (before: only those run since, "median of 2 runs" where results.csv had 4).
TEST(Hostile, AfterAResumeAPointsLineCountsEveryFork) {
    const auto dir = fresh_dir("line");
    auto args = sweep("pthreads", dir, {"-r", "2"});
    args[12] = "2";  // -I 2
    ASSERT_EQ(cli_err(args).first, 0);
    // The second fork (repetition 1: the last two rows of each file) taken out, as if the
    // driver had been stopped before it.
    for (const char* f : {"results.csv", "points.jsonl"}) {
        auto l = lines(slurp(dir / f));
        std::ofstream out(dir / f, std::ios::trunc);
        for (std::size_t i = 0; i + 2 < l.size(); ++i) out << l[i] << "\n";
    }
    testing::internal::CaptureStdout();
    auto [rc, err] = cli_err({"run", "--resume", dir.string(), "-q"});
    const std::string out = testing::internal::GetCapturedStdout();
    ASSERT_EQ(rc, 0) << err;
    EXPECT_NE(out.find("median of 4 runs"), std::string::npos) << out;
    fs::remove_all(dir);
}

// A merged folder has one benchmark.json with every shard's entries, for Google's tools
// (before: only under shards/).
TEST(Hostile, AMergedFolderHasOneBenchmarkJson) {
    const auto dir = fresh_dir("merge");
    for (const char* shard : {"0/2", "1/2"}) {
        auto [rc, err] = cli_err({"run", "-b", "pthreads", "-w", "create", "-p", "N=10,20", "-P", "1", "-W", "0", "-I", "1",
                                  "-q", "--shard", shard, "--out", (dir / "s").string()});
        ASSERT_EQ(rc, 0) << err;
    }
    auto [rc, err] = cli_err({"merge", (dir / "m").string(), (dir / "s").string()});
    ASSERT_EQ(rc, 0) << err;
    const std::string text = slurp(dir / "m" / "benchmark.json");
    ASSERT_TRUE(nlohmann::json::accept(text)) << text.substr(0, 300);
    // Each point's fork, its one run and its four aggregates (harness/gbench_reporter.hpp).
    EXPECT_EQ(nlohmann::json::parse(text).at("benchmarks").size(), 2u * (1u + 1u + 4u));
    fs::remove_all(dir);
}

// The live progress line on every terminal width from 16 to 160 columns: never wider than the
// terminal allows, and the point's id is never cut inside a parameter (the first-user review
// saw "native/switch/K=10000...=2": the middle cut away, with it T, the parameter that varies).
// It is whole; or it leaves out the parameters every point of the workload shares, whole, as
// one "..." component; or, only where even that id cannot fit, the line's end is cut and
// marked "...".
TEST(Hostile, TheProgressLineNeverCutsAPointsIdInsideAParameter) {
    coopbench::Point p;
    p.backend = "native";
    p.workload = "switch";
    p.params = {{"K", "10000"}, {"T", "1000"}};
    p.options.processors = 2;
    const std::set<std::string> shared = {"K"};
    const std::string full = "native/switch/K=10000/T=1000/P=2", kept = "native/switch/.../T=1000/P=2";
    bool saw_full = false, saw_kept = false, saw_cut = false;
    for (std::size_t columns = 16; columns <= 160; ++columns) {
        const std::string line =
            coopbench::progress_text("[7/12]", p, shared, 1, 2, "elapsed 0:03", "~0:03 left", columns);
        SCOPED_TRACE(std::to_string(columns) + " columns: '" + line + "'");
        EXPECT_LE(line.size(), columns - 1);
        ASSERT_EQ(line.rfind("[7/12] ", 0), 0u);
        const std::string rest = line.substr(7);
        if (rest.rfind(full, 0) == 0) {
            saw_full = true;
        } else if (rest.rfind(kept, 0) == 0) {
            saw_kept = true;
            // The shared parameter went first: the varying one and the line's times stay while they fit.
            EXPECT_LT(columns, std::string("[7/12] " + full + " (repetition 2 of 2)  elapsed 0:03, ~0:03 left").size() + 1);
        } else {
            // Only when the elided id itself cannot fit; and then said by the "..." at the end.
            saw_cut = true;
            EXPECT_LT(columns - 1, 7 + kept.size());
            EXPECT_EQ(line.substr(line.size() - 3), "...");
        }
        // The times give way before the id: a line that holds the id whole or elided keeps the
        // parameter that varies.
        if (columns - 1 >= 7 + kept.size()) {
            EXPECT_NE(line.find("T=1000"), std::string::npos);
        }
    }
    EXPECT_TRUE(saw_full && saw_kept && saw_cut);
    // Wide enough: the whole line, repetition and times included.
    EXPECT_EQ(coopbench::progress_text("[7/12]", p, shared, 1, 2, "elapsed 0:03", "~0:03 left", 200),
              "[7/12] " + full + " (repetition 2 of 2)  elapsed 0:03, ~0:03 left");
    // Nothing shared: the id is whole or the line's end is cut (marked), never its middle.
    for (std::size_t columns = 10; columns <= 100; ++columns) {
        const std::string line = coopbench::progress_text("[7/12]", p, {}, 0, 1, "elapsed 0:03", "~0:03 left", columns);
        SCOPED_TRACE(line);
        EXPECT_TRUE(line.find(full) != std::string::npos || line.substr(line.size() - 3) == "...");
        EXPECT_EQ(line.find("(repetition"), std::string::npos);  // one repetition: no count
    }
}

// A new sweep killed after it made results.csv (its header) and before its record
// (sweep.json) was renamed into place — a kill -9 at the driver's second fsync: nothing was
// measured, and before, neither a --resume ("sweep.json not found") nor a new sweep ("already
// holds results: continue that sweep with --resume") took the folder. Now the resume says
// what happened and a new sweep takes the folder. A folder with a measured row and no
// sweep.json is still refused (the control).
TEST(Hostile, ASweepKilledBeforeItsRecordLeavesAFolderANewSweepTakes) {
    const auto dir = fresh_dir("start");
    ASSERT_EQ(cli_err(sweep("h-good", dir)).first, 0);
    const std::string header = lines(slurp(dir / "results.csv")).at(0);
    const std::string measured = slurp(dir / "results.csv");
    auto killed_at_start = [&](const std::string& csv) {
        fs::remove(dir / "sweep.json");
        fs::remove(dir / "context.json");
        { std::ofstream(dir / "results.csv", std::ios::trunc) << csv; }
        { std::ofstream(dir / "points.jsonl", std::ios::trunc); }
        { std::ofstream(dir / "sweep.json.tmp") << "{\"backends\": [\"h-g"; }
    };
    killed_at_start(header + "\n");
    auto [rc, err] = cli_err({"run", "--resume", dir.string(), "-q"});
    EXPECT_EQ(rc, 2) << err;
    EXPECT_NE(err.find("the sweep was stopped before it began (nothing was measured): run it again with --out"),
              std::string::npos)
        << err;
    auto [rc2, err2] = cli_err(sweep("h-good", dir));
    ASSERT_EQ(rc2, 0) << err2;
    std::multiset<Row> rows;
    EXPECT_EQ(joined(folder_problems(dir, &rows)), "");
    EXPECT_EQ(rows.size(), 1u);
    EXPECT_FALSE(fs::exists(dir / "sweep.json.tmp"));
    EXPECT_EQ(lines(slurp(dir / "results.csv")).size(), 2u);  // one header, one row
    // The control: a measured row without a record is not taken.
    killed_at_start(measured);
    auto [rc3, err3] = cli_err(sweep("h-good", dir));
    EXPECT_EQ(rc3, 2) << err3;
    EXPECT_NE(err3.find("already holds results"), std::string::npos) << err3;
    fs::remove_all(dir);
}
