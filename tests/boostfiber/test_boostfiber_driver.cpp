// The boostfiber variants through the driver (coopbench::cli_main), as users run them:
// `--backends boostfiber` selects all three variants, every workload's tiny plan runs with
// each point in its own process (so work_stealing starts afresh every time), round_robin
// points are recorded with P=1, and without isolation a second work_stealing point fails
// with the clear reason instead of crashing (boostorg/fiber#217).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli.hpp"
#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"
#include "tests/support/watchdog.hpp"

namespace {

// table — results.csv as maps from column name to value (the shared CSV reader).
std::vector<std::map<std::string, std::string>> table(const std::filesystem::path& dir) {
    return coopbench::test::csv_table(dir / "results.csv");
}

using coopbench::test::cli_here;

// cli — cli_main in a child process (work_stealing can be created once per process);
// the exit code, or -1 when the child died or hung.
int cli(const std::vector<std::string>& args) { return coopbench::test::cli_in_child(args, {}, 300); }

std::filesystem::path fresh_dir(const std::string& tag) {
    auto d = std::filesystem::temp_directory_path() /
             ("coopbench-boostfiber-" + tag + "-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::remove_all(d);
    return d;
}

}  // namespace

TEST(BoostFiberDriver, ThreeVariantsWithOptionsAndOrigin) {
    const auto& reg = coopbench::Registry::instance();
    for (const char* v : {"boostfiber/round_robin", "boostfiber/shared_work", "boostfiber/work_stealing"}) {
        const auto* e = reg.backend(v);
        ASSERT_NE(e, nullptr) << v;
        EXPECT_EQ(e->family, "boostfiber");
        EXPECT_NE(e->origin.find("runtimes/boostfiber/register.cpp"), std::string::npos) << e->origin;
        EXPECT_EQ(e->fixed.at("algorithm"), std::string(v).substr(11));
        std::set<std::string> opts;
        for (const auto& o : e->options) opts.insert(o.name);
        EXPECT_TRUE(opts.count("stack") && opts.count("stack_kib")) << v;
        EXPECT_FALSE(e->preemptive) << v;
        for (const char* w : {"create", "switch", "lock-local", "lock-global"})
            EXPECT_TRUE(e->runners.count(w)) << v << " lacks " << w;
    }
}

TEST(BoostFiberDriver, EveryWorkloadTinyOnEveryVariant) {
    const auto dir = fresh_dir("tiny");
    const int rc = cli({"run", "--backends", "boostfiber", "--plan", "tiny", "--isolation", "process", "--timeout", "120",
                        "--out", dir.string(), "--quiet"});
    EXPECT_EQ(rc, 0);
    const auto rows = table(dir);
    ASSERT_FALSE(rows.empty());
    std::map<std::string, std::set<std::string>> seen;  // backend -> workloads
    for (const auto& r : rows) {
        EXPECT_EQ(r.at("status"), "ok") << r.at("point") << ": " << r.at("reason");
        if (r.at("backend") == "boostfiber/round_robin") {
            EXPECT_EQ(r.at("processors"), "1") << r.at("point");
        }
        seen[r.at("backend")].insert(r.at("workload"));
    }
    const auto& reg = coopbench::Registry::instance();
    for (const char* v : {"boostfiber/round_robin", "boostfiber/shared_work", "boostfiber/work_stealing"})
        for (const auto& [name, fn] : reg.backend(v)->runners)
            EXPECT_TRUE(seen[v].count(name)) << v << " did not run " << name;
    std::filesystem::remove_all(dir);
}

TEST(BoostFiberDriver, StackOptionsReachTheBackend) {
    const auto dir = fresh_dir("stack");
    const int rc = cli({"run", "--backends", "boostfiber/shared_work", "--workloads", "create", "--param", "N=100",
                        "--backend-opt", "stack=protected", "--backend-opt", "stack_kib=64", "--isolation", "process",
                        "--warmup", "0", "--iterations", "1", "--out", dir.string(), "--quiet"});
    EXPECT_EQ(rc, 0);
    const auto rows = table(dir);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].at("status"), "ok") << rows[0].at("reason");
    // A bad value is refused before anything runs.
    EXPECT_EQ(cli({"run", "--backends", "boostfiber/shared_work", "--workloads", "create", "--backend-opt",
                   "stack=huge", "--out", (dir / "bad").string(), "--quiet"}),
              2);
    std::filesystem::remove_all(dir);
}

TEST(BoostFiberDriver, WorkStealingWithoutIsolationFailsTheSecondPointClearly) {
    // In a child (one driver run and one work_stealing runtime per process).
    const std::string r = coopbench::test::in_child([] {
        const auto dir = fresh_dir("noiso");
        const int rc = cli_here({"run", "--backends", "boostfiber/work_stealing", "--workloads", "create", "--param",
                            "N=1,2", "--isolation", "none", "--warmup", "0", "--iterations", "1", "--out", dir.string(), "--quiet"});
        const auto rows = table(dir);
        std::filesystem::remove_all(dir);
        if (rows.size() != 2) return "expected 2 rows, got " + std::to_string(rows.size()) + " (rc " + std::to_string(rc) + ")";
        if (rows[0].at("status") != "ok") return "first point failed: " + rows[0].at("reason");
        if (rows[1].at("status") != "failed") return std::string("second point did not fail");
        if (rows[1].at("reason").find("once per process") == std::string::npos)
            return "unclear reason: " + rows[1].at("reason");
        return std::string();
    });
    EXPECT_EQ(r, "");
}
