// Shards and merge: every point of every plan exactly once for N = 1..7 shards, a
// partition independent of the order of flags and points and balanced by cost, the shard from
// the Slurm / Kubernetes environment, and `coopbench merge` refusing what is not one sweep,
// refusing double measurements, and naming a missing shard or point.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "harness/cli.hpp"
#include "harness/machine.hpp"
#include "harness/merge.hpp"
#include "harness/plan.hpp"
#include "harness/results.hpp"
#include "harness/schema.hpp"
#include "harness/shard.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;
using namespace coopbench;

namespace {

std::vector<Machine> machines() { return {detect_machine(), Machine{1}, Machine{64}}; }

std::vector<Point> plan_points(const std::string& plan, const Machine& m) {
    SweepRequest r;
    r.plan = plan;
    return expand(r, m);
}

std::map<std::string, unsigned> by_id(const std::vector<Point>& pts, const std::vector<unsigned>& shard) {
    std::map<std::string, unsigned> m;
    for (std::size_t i = 0; i < pts.size(); ++i) m[pts[i].id()] = shard[i];
    return m;
}

TEST(ShardPartition, EveryPointOfEveryPlanExactlyOnceForOneToSevenShards) {
    for (const Machine& m : machines()) {
        auto plans = plan_names(m);
        ASSERT_GE(plans.size(), 3u);
        for (auto& plan : plans) {
            const auto all = plan_points(plan, m);
            std::set<std::string> ids;
            for (auto& p : all) ids.insert(p.id());
            for (unsigned n = 1; n <= 7; ++n) {
                std::multiset<std::string> seen;
                std::vector<std::uint64_t> load(n, 0);
                std::uint64_t max_cost = 0;
                for (unsigned i = 0; i < n; ++i) {
                    nlohmann::json rec;
                    auto mine = select_shard(all, Shard{i, n}, 1, m, rec);
                    for (auto& p : mine) {
                        seen.insert(p.id());
                        load[i] += point_cost(p, 1, m);
                        max_cost = std::max(max_cost, point_cost(p, 1, m));
                        EXPECT_EQ(rec["points"][p.id()].get<unsigned>(), i);
                    }
                    EXPECT_EQ(rec["sweep_points"].get<std::size_t>(), all.size());
                    EXPECT_EQ(rec["cost_us"][i].get<std::uint64_t>(), load[i]);
                }
                EXPECT_EQ(seen.size(), all.size()) << plan << " N=" << n;
                EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids) << plan << " N=" << n;
                // Greedy list scheduling: when a shard got its last point it was the least loaded,
                // so no shard exceeds the least loaded one by more than the costliest point.
                auto [lo, hi] = std::minmax_element(load.begin(), load.end());
                EXPECT_LE(*hi, *lo + max_cost) << plan << " N=" << n;
            }
        }
    }
}

TEST(ShardPartition, StableUnderReorderingOfFlagsAndPoints) {
    const Machine m = detect_machine();
    SweepRequest a;
    a.plan = "tiny";
    a.workloads = {"create", "switch", "lock-global", "matrix"};
    a.backends = {"pthreads", "native", "boostfiber"};
    a.params["K"] = {"100", "1000"};
    SweepRequest b = a;
    std::reverse(b.workloads.begin(), b.workloads.end());
    std::reverse(b.backends.begin(), b.backends.end());
    b.params["K"] = {"1000", "100"};
    auto pa = expand(a, m), pb = expand(b, m);
    ASSERT_EQ(pa.size(), pb.size());
    std::vector<std::string> order_a, order_b;
    for (auto& p : pa) order_a.push_back(p.id());
    for (auto& p : pb) order_b.push_back(p.id());
    EXPECT_NE(order_a, order_b) << "the test needs the two requests to expand in different orders";
    EXPECT_EQ(sweep_fingerprint(pa), sweep_fingerprint(pb));
    std::mt19937 rng(15);
    auto pc = pa;
    std::shuffle(pc.begin(), pc.end(), rng);
    for (unsigned n = 1; n <= 7; ++n) {
        auto ma = by_id(pa, assign_shards(pa, n, 1, m));
        EXPECT_EQ(ma, by_id(pb, assign_shards(pb, n, 1, m))) << "N=" << n;
        EXPECT_EQ(ma, by_id(pc, assign_shards(pc, n, 1, m))) << "N=" << n;
    }
}

TEST(ShardPartition, BalancedByCostNotByCount) {
    // One 10^7-thread point and ten 10-thread points in two shards: the big point alone is
    // heavier than all the others, so LPT gives it a shard of its own.
    const Machine m = detect_machine();
    SweepRequest r;
    r.workloads = {"create"};
    r.backends = {"pthreads"};
    r.params["N"] = {"10000000", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19"};
    auto pts = expand(r, m);
    ASSERT_EQ(pts.size(), 11u);
    auto s = by_id(pts, assign_shards(pts, 2, 1, m));
    const unsigned big = s.at(pts.front().id());
    ASSERT_EQ(pts.front().params.at("N"), "10000000");
    for (auto& p : pts) {
        if (p.id() != pts.front().id()) {
            EXPECT_NE(s.at(p.id()), big) << p.id();
        }
    }
    EXPECT_GT(point_cost(pts.front(), 1, m), 100 * point_cost(pts.back(), 1, m));
}

TEST(ShardSelection, ParseAndEnvironment) {
    EXPECT_EQ(parse_shard("2/5").index, 2u);
    EXPECT_EQ(parse_shard("2/5").count, 5u);
    EXPECT_EQ(parse_shard("0/1").folder(), "shard-0-of-1");
    for (const char* bad : {"", "3", "3/3", "-1/3", "1/0", "a/3", "1/3x", "1 /3", "1/"})
        EXPECT_THROW(parse_shard(bad), UsageError) << bad;

    EXPECT_FALSE(shard_from_environment({}, 0).has_value());
    auto s = shard_from_environment({"2", "4", ""}, 0);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->name(), "2/4");
    // Resubmitting one task of the array (sbatch --array=2): Slurm says 1 task; --shards says 4.
    EXPECT_THROW(shard_from_environment({"2", "1", ""}, 0), UsageError);
    EXPECT_EQ(shard_from_environment({"2", "1", ""}, 4)->name(), "2/4");
    EXPECT_EQ(shard_from_environment({"", "", "3"}, 5)->name(), "3/5");
    EXPECT_THROW(shard_from_environment({"", "", "3"}, 0), UsageError);  // no count
    EXPECT_THROW(shard_from_environment({"", "", "5"}, 5), UsageError);  // index too big
    EXPECT_THROW(shard_from_environment({"x", "4", ""}, 0), UsageError);
    EXPECT_THROW(shard_from_environment({"1", "", ""}, 0), UsageError);
    EXPECT_THROW(shard_from_environment({"1", "0", ""}, 0), UsageError);
    EXPECT_THROW(shard_from_environment({}, 3), UsageError);  // --shards without an index
}

// cli — `coopbench ARGS...` in a child process (the shared fork runner), with `env` set in
// the child only; returns the exit code.
int cli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}) {
    return coopbench::test::cli_in_child(args, env);
}

fs::path fresh_dir(const std::string& name) {
    fs::path d = fs::temp_directory_path() / ("coopbench-shard-test-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(d);
    return d;
}

std::vector<std::string> lines_of(const fs::path& p) {
    std::ifstream in(p);
    std::vector<std::string> v;
    for (std::string l; std::getline(in, l);) v.push_back(l);
    return v;
}

void write_lines(const fs::path& p, const std::vector<std::string>& v) {
    std::ofstream out(p);
    for (auto& l : v) out << l << "\n";
}

const std::vector<std::string> kSweep = {"run",    "--plan",       "tiny",       "--workloads", "create,switch",
                                         "--backends", "pthreads", "--repetitions", "2",  "--isolation",
                                         "none",   "--quiet"};

std::vector<std::string> sweep_args(std::vector<std::string> more) {
    auto a = kSweep;
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

// The 3 shards of a small sweep, run once for every merge test.
class Merge : public ::testing::Test {
  protected:
    static inline fs::path root;
    static void SetUpTestSuite() {
        root = fresh_dir("merge");
        for (int i = 0; i < 3; ++i)
            ASSERT_EQ(cli(sweep_args({"--shard", std::to_string(i) + "/3", "--out", (root / "sweep").string()})), 0);
        // The same shard 0 from the environment, as a Slurm array task runs it.
        ASSERT_EQ(cli(sweep_args({"--out", (root / "env").string()}),
                      {{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}),
                  0);
    }
    static void TearDownTestSuite() { fs::remove_all(root); }
    fs::path shard(int i) const { return root / "sweep" / ("shard-" + std::to_string(i) + "-of-3"); }
    // copy — a private copy of shard i (tests change it).
    fs::path copy(int i, const std::string& name) const {
        fs::path d = root / name / ("shard-" + std::to_string(i) + "-of-3");
        fs::remove_all(d);
        fs::create_directories(d.parent_path());
        fs::copy(shard(i), d, fs::copy_options::recursive);
        return d;
    }
    std::string refusal(const std::vector<fs::path>& in, const std::string& out_name) const {
        try {
            merge_shards(root / out_name, in);
        } catch (const UsageError& e) {
            EXPECT_FALSE(fs::exists(root / out_name / "results.csv")) << "a refused merge wrote results";
            return e.what();
        }
        return "(merged)";
    }
};

TEST_F(Merge, ShardsRecordTheirShardAndTheEnvironmentSelectsTheSame) {
    auto sweep = nlohmann::json::parse(std::ifstream(shard(1) / "sweep.json"));
    EXPECT_EQ(sweep["shard"]["index"], 1);
    EXPECT_EQ(sweep["shard"]["count"], 3);
    auto ctx = nlohmann::json::parse(std::ifstream(shard(1) / "context.json"));
    EXPECT_EQ(ctx["shard"], "1/3");
    EXPECT_EQ(ctx["host"], hostname());
    EXPECT_EQ(context_problems(ctx), std::vector<std::string>{});
    EXPECT_TRUE(fs::exists(root / "env" / "shard-0-of-3" / "results.csv"));
    auto a = lines_of(shard(0) / "results.csv"), b = lines_of(root / "env" / "shard-0-of-3" / "results.csv");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].substr(0, a[i].find(',')), b[i].substr(0, b[i].find(',')));
}

TEST_F(Merge, EveryMeasurementOnceWithItsHost) {
    auto r = merge_shards(root / "merged", {root / "sweep"});
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.shards, 3u);
    EXPECT_EQ(r.rows, r.expected_rows);
    auto rows = lines_of(root / "merged" / "results.csv");
    ASSERT_FALSE(rows.empty());
    EXPECT_NE(rows[0].find(",host,"), std::string::npos) << rows[0];
    std::size_t shard_rows = 0;
    for (int i = 0; i < 3; ++i) shard_rows += lines_of(shard(i) / "results.csv").size() - 1;
    EXPECT_EQ(rows.size() - 1, shard_rows);
    // The whole sweep, unsharded: 2 create + 2 switch points, 2 repetitions each.
    EXPECT_EQ(r.expected_rows, 8u);
    std::set<std::string> keys;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        auto f = parse_csv_line(rows[i]);
        keys.insert(f[0] + "#" + f[9]);  // point, repetition (after backend family workload host 4 params)
        EXPECT_EQ(f[4], hostname());
    }
    EXPECT_EQ(keys.size(), 8u);
    auto ctx = nlohmann::json::parse(std::ifstream(root / "merged" / "context.json"));
    EXPECT_EQ(ctx["shards"], 3);
    EXPECT_EQ(ctx["hosts"], 1);
    EXPECT_EQ(ctx["mixed_machines"], false);
    EXPECT_EQ(ctx["points"], 4);
    EXPECT_TRUE(ctx["sweep"].is_object());
    EXPECT_FALSE(ctx.contains("merge_incomplete"));
    // Typed as schema.json's context says; the shards disagree only on what the
    // merge writes itself (shard, points, the command), so nothing is `differing`.
    EXPECT_EQ(context_problems(ctx), std::vector<std::string>{});
    EXPECT_FALSE(ctx.contains("differing")) << ctx["differing"].dump();
    EXPECT_TRUE(fs::exists(root / "merged" / "shards" / "shard-2-of-3" / "benchmark.json"));
    // Merging into a folder that already holds results is refused.
    EXPECT_THROW(merge_shards(root / "merged", {root / "sweep"}), UsageError);
}

// Shards from two kinds of machine: the merged context stays typed. A number the
// shards disagree on cannot be two numbers: it is null, and `differing` holds each shard's;
// a string is joined. A shard written before the typed context ("2" for 2) agrees with 2.
TEST_F(Merge, ShardsThatDisagreeKeepTheContextTyped) {
    fs::path big = copy(1, "mixed");
    auto ctx = nlohmann::json::parse(std::ifstream(big / "context.json"));
    ctx["host"] = "big";
    ctx["cpu_model"] = "Other CPU";
    ctx["cores_available"] = 64;
    std::ofstream(big / "context.json") << ctx.dump(2);
    fs::path old = copy(2, "mixed");
    auto octx = nlohmann::json::parse(std::ifstream(old / "context.json"));
    octx["numa_nodes"] = std::to_string(octx["numa_nodes"].get<int>());
    std::ofstream(old / "context.json") << octx.dump(2);
    merge_shards(root / "mixed-merged", {shard(0), big, old});
    auto m = nlohmann::json::parse(std::ifstream(root / "mixed-merged" / "context.json"));
    EXPECT_EQ(context_problems(m), std::vector<std::string>{}) << m.dump(2);
    EXPECT_EQ(m["mixed_machines"], true);
    EXPECT_EQ(m["hosts"], 2);
    EXPECT_TRUE(m["cores_available"].is_null());
    EXPECT_EQ(m["differing"]["cores_available"]["1/3"], 64);
    const auto mine = nlohmann::json::parse(std::ifstream(shard(0) / "context.json"));
    EXPECT_EQ(m["cpu_model"], mine["cpu_model"].get<std::string>() + ", Other CPU");  // shards in order
    EXPECT_FALSE(m["differing"].contains("numa_nodes"));
    EXPECT_TRUE(m["numa_nodes"].is_number_integer());
}

TEST_F(Merge, MoreShardsThanPointsLeavesSomeEmpty) {
    fs::path seven = root / "seven";
    for (int i = 0; i < 7; ++i)
        ASSERT_EQ(cli(sweep_args({"--shard", std::to_string(i) + "/7", "--out", seven.string()})), 0);
    EXPECT_EQ(lines_of(seven / "shard-6-of-7" / "results.csv").size(), 1u);  // the header only
    auto r = merge_shards(root / "seven-merged", {seven});
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.rows, 8u);
    auto header = parse_csv_line(lines_of(root / "seven-merged" / "results.csv").front());
    const std::vector<std::string> want = {"point", "backend", "family", "workload", "host", "param.K", "param.N",
                                           "param.T", "processors"};
    EXPECT_EQ(std::vector<std::string>(header.begin(), header.begin() + 9), want);
}

TEST_F(Merge, AMissingShardIsReportedWithTheCommandThatRunsIt) {
    auto r = merge_shards(root / "partial", {shard(0), shard(2)});
    EXPECT_FALSE(r.complete());
    ASSERT_EQ(r.missing.size(), 1u);
    EXPECT_NE(r.missing[0].find("shard 1/3 is missing"), std::string::npos) << r.missing[0];
    EXPECT_NE(r.missing[0].find("--shard 1/3"), std::string::npos) << r.missing[0];
    auto ctx = nlohmann::json::parse(std::ifstream(root / "partial" / "context.json"));
    EXPECT_TRUE(ctx.contains("merge_incomplete"));
    EXPECT_EQ(context_problems(ctx), std::vector<std::string>{});
    EXPECT_EQ(merge_main(root / "partial2", {shard(0), shard(2)}, "coopbench merge"), 1);
}

TEST_F(Merge, AMissingPointIsReportedAndResumeOnTheShardCompletesIt) {
    fs::path d = copy(1, "lost");
    auto rows = lines_of(d / "results.csv");
    ASSERT_GE(rows.size(), 2u);
    const std::string lost = rows.back();
    rows.pop_back();
    write_lines(d / "results.csv", rows);
    auto r = merge_shards(root / "lost-merged", {shard(0), d, shard(2)});
    ASSERT_EQ(r.missing.size(), 1u);
    EXPECT_NE(r.missing[0].find("lacks 1 of"), std::string::npos) << r.missing[0];
    EXPECT_NE(r.missing[0].find("coopbench run --resume " + d.string()), std::string::npos) << r.missing[0];
    // The shard resumes from its own sweep.json (the shard included) and measures only that one.
    ASSERT_EQ(cli({"run", "--resume", d.string(), "--quiet"}), 0);
    auto after = lines_of(d / "results.csv");
    EXPECT_EQ(after.size(), rows.size() + 1);
    EXPECT_EQ(after.back().substr(0, after.back().find(',')), lost.substr(0, lost.find(',')));
    EXPECT_TRUE(merge_shards(root / "lost-merged-2", {shard(0), d, shard(2)}).complete());
}

TEST_F(Merge, DifferentSweepsAreRefused) {
    // Other parameters.
    fs::path other = root / "other";
    ASSERT_EQ(cli(sweep_args({"--param", "K=200", "--shard", "1/3", "--out", other.string()})), 0);
    EXPECT_NE(refusal({shard(0), other / "shard-1-of-3", shard(2)}, "m1").find("params differs"), std::string::npos);
    // The same sweep with its lists in another order is the same sweep.
    fs::path reordered = root / "reordered";
    auto args = kSweep;
    *std::find(args.begin(), args.end(), "create,switch") = "switch,create";
    args.insert(args.end(), {"--shard", "1/3", "--out", reordered.string()});
    ASSERT_EQ(cli(args), 0);
    EXPECT_TRUE(merge_shards(root / "m0", {shard(0), reordered / "shard-1-of-3", shard(2)}).complete());
    // Another shard count.
    fs::path four = root / "four";
    ASSERT_EQ(cli(sweep_args({"--shard", "1/4", "--out", four.string()})), 0);
    EXPECT_NE(refusal({shard(0), four / "shard-1-of-4"}, "m2").find("shard count differs"), std::string::npos);
    // Another commit.
    fs::path c = copy(1, "commit");
    auto ctx = nlohmann::json::parse(std::ifstream(c / "context.json"));
    ctx["git_commit"] = "0123456789ab";
    std::ofstream(c / "context.json") << ctx.dump(2);
    EXPECT_NE(refusal({shard(0), c, shard(2)}, "m3").find("commit differs"), std::string::npos);
    // The same plan expanded into other points (another kind of machine).
    fs::path e = copy(1, "expansion");
    auto rec = nlohmann::json::parse(std::ifstream(e / "shard.json"));
    rec["sweep_fingerprint"] = "0000000000000000";
    std::ofstream(e / "shard.json") << rec.dump(1);
    EXPECT_NE(refusal({shard(0), e, shard(2)}, "m4").find("expanded to different points"), std::string::npos);
    // A whole sweep is no shard.
    fs::path whole = root / "whole";
    ASSERT_EQ(cli(sweep_args({"--out", whole.string()})), 0);
    EXPECT_NE(refusal({shard(0), whole}, "m5").find("not a shard"), std::string::npos);
}

TEST_F(Merge, DoubleCountingIsRefused) {
    // The same shard twice.
    fs::path again = copy(1, "again");
    EXPECT_NE(refusal({shard(0), shard(1), again}, "d1").find("given twice"), std::string::npos);
    // A measurement of shard 0 also in shard 1's results: it belongs to shard 0 only.
    fs::path d = copy(1, "stray");
    auto rows = lines_of(d / "results.csv");
    {  // shard 0's last row, in shard 1's columns (the shards' param.* columns may differ)
        auto h0 = parse_csv_line(lines_of(shard(0) / "results.csv").front());
        auto r0 = parse_csv_line(lines_of(shard(0) / "results.csv").back());
        std::vector<std::string> fields;
        for (auto& h : parse_csv_line(rows.front())) {
            auto at = std::find(h0.begin(), h0.end(), h);
            fields.push_back(at == h0.end() ? std::string() : csv_field(r0[static_cast<std::size_t>(at - h0.begin())]));
        }
        std::ostringstream row;
        for (std::size_t i = 0; i < fields.size(); ++i) row << (i ? "," : "") << fields[i];
        rows.push_back(row.str());
    }
    write_lines(d / "results.csv", rows);
    const std::string stray = refusal({shard(0), d, shard(2)}, "d2");
    EXPECT_NE(stray.find("belongs to shard 0/3"), std::string::npos) << stray;
    // A repetition measured twice within one shard.
    fs::path t = copy(2, "twice");
    auto r2 = lines_of(t / "results.csv");
    r2.push_back(r2.back());
    write_lines(t / "results.csv", r2);
    EXPECT_NE(refusal({shard(0), shard(1), t}, "d3").find("measured twice"), std::string::npos);
}

TEST_F(Merge, BadShardInputIsExitCodeTwo) {
    EXPECT_EQ(cli({"run", "--plan", "tiny", "--shard", "3/3", "--dry-run"}), 2);
    EXPECT_EQ(cli({"run", "--plan", "tiny", "--dry-run"}, {{"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_ARRAY_TASK_COUNT", "3"}}), 2);
    EXPECT_EQ(cli({"run", "--plan", "tiny", "--dry-run"}, {{"JOB_COMPLETION_INDEX", "1"}}), 2);
    EXPECT_EQ(cli({"run", "--plan", "tiny", "--dry-run", "--shards", "3"}, {{"JOB_COMPLETION_INDEX", "1"}}), 0);
    EXPECT_EQ(cli({"run", "--resume", shard(0).string(), "--shard", "1/3"}), 2);
    EXPECT_EQ(cli({"merge", (root / "nothing").string(), (root / "no-such-folder").string()}), 2);
}

}  // namespace
