// test_skynet.cpp — the skynet workload (workloads/micro/skynet.hpp) on coop's three
// scheduling policies with default options at the classic size, 10^6 leaves (native's FIFO
// keeps ~111,111 inner activities blocked at once: more than vm.max_map_count allows guarded
// stacks); and a stack supply that fails: the point fails with the runtime's reason, in the
// harness's runner and in the real driver with --isolation none (the driver survives).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"
#include "tests/native/support.hpp"
#include "tests/support/csv.hpp"
#include "workloads/micro/skynet.hpp"

namespace {

using coopbench::Context;
using coopbench::NativeBackend;
using coopbench::Skynet;

using coop_test::ScopedEnv;

Context point(const std::string& scheduling, unsigned processors, int levels) {
    Context ctx;
    ctx.params = {{"L", std::to_string(levels)}, {"B", "10"}};
    ctx.options.processors = processors;
    ctx.options.extra["scheduling"] = scheduling;
    return ctx;
}

class SkynetPolicy : public ::testing::TestWithParam<const char*> {};

// 10^6 leaves with default options (guard=on, default stack size); L=5 under the sanitizers.
TEST_P(SkynetPolicy, ClassicSizeWithDefaultOptions) {
    const int levels = coop_test::kSanitized ? 5 : 6;
    for (unsigned processors : {1u, coop_test::many_processors()}) {
        coop_test::Watchdog dog(std::string("skynet ") + GetParam() + " P=" + std::to_string(processors), 300);
        const auto out = coopbench::run_point<NativeBackend, Skynet>(point(GetParam(), processors, levels));
        EXPECT_TRUE(out.ok) << GetParam() << " P=" << processors << ": " << out.reason;
        EXPECT_EQ(out.counters.at("leaves"), levels == 6 ? 1e6 : 1e5);
        EXPECT_EQ(out.counters.at("stack_failures"), 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Coop, SkynetPolicy, ::testing::Values("global", "work_stealing", "parasail"));

// A stack supply that fails (coop's stack memory limit): the point fails with the reason,
// for every policy; nothing aborts.
TEST(SkynetStacks, AFailedStackSupplyFailsThePointWithItsReason) {
    ScopedEnv env("COOP_STACK_MEMORY_LIMIT", "40M");
    for (const char* policy : {"global", "work_stealing", "parasail"}) {
        coop_test::Watchdog dog(std::string("skynet, stack limit, ") + policy, 120);
        const auto out = coopbench::run_point<NativeBackend, Skynet>(point(policy, 1, 5));
        if (std::string(policy) == "global") {
            EXPECT_FALSE(out.ok) << "11,111 inner activities in 40 MiB of stacks";
        }
        if (!out.ok) {
            EXPECT_NE(out.reason.find("no stack"), std::string::npos) << policy << ": " << out.reason;
            EXPECT_NE(out.reason.find("COOP_STACK_MEMORY_LIMIT"), std::string::npos) << policy << ": " << out.reason;
        }
    }
}

// The same through the real driver in-process (--isolation none): the run ends normally
// (no signal), and results.csv has the failed point with its reason.
TEST(SkynetStacks, TheDriverSurvivesAFailedStackSupplyWithoutIsolation) {
    coop_test::Watchdog dog("skynet through coopbench --isolation none", 300);
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("skynet-none-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    const std::string cmd = std::string("COOP_STACK_MEMORY_LIMIT=40M ") + COOPBENCH_BINARY +
                            " run -b native -w skynet -p L=5 -P 1 -W 0 -I 1 --isolation none -q -o " + dir.string() +
                            " > " + dir.string() + ".log 2>&1";
    const int status = std::system(cmd.c_str());
    ASSERT_NE(status, -1);
    EXPECT_FALSE(WIFSIGNALED(status)) << "signal " << WTERMSIG(status);
    ASSERT_TRUE(WIFEXITED(status));
    const auto rows = coopbench::test::csv_table(dir / "results.csv");
    ASSERT_EQ(rows.size(), 1u);
    auto row = rows[0];
    EXPECT_EQ(row["status"], "failed");
    EXPECT_NE(row["reason"].find("no stack"), std::string::npos) << row["reason"];
    EXPECT_NE(row["reason"].find("COOP_STACK_MEMORY_LIMIT"), std::string::npos) << row["reason"];
    std::filesystem::remove_all(dir);
    std::filesystem::remove(dir.string() + ".log");
}

}  // namespace
