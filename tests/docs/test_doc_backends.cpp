// test_doc_backends.cpp — docs/adding-a-backend.md, as a new user follows it: its backends
// (docs/examples/mythreads/, and docs/examples/pth/ when GNU Pth is installed), put where
// the doc puts them (runtimes/<name>/, see tests/docs/CMakeLists.txt) and registered by
// their own register.cpp, run every workload they support at the tiny plan through the
// driver; and the rules the doc states for Pth (one processor, the run's stack size seen by
// the static spawn, a semaphore built from a mutex and a condition, a recursive mutex).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"
#include "tests/support/watchdog.hpp"
#if COOPBENCH_DOC_PTH
#include "runtimes/pth/pth.hpp"
#endif

namespace {

// tiny_sweep_is_ok — `coopbench run --backends NAME --plan tiny` (in a child): every
// workload the backend registered has rows, every row ok; returns the rows.
std::vector<std::map<std::string, std::string>> tiny_sweep_is_ok(const std::string& name) {
    const auto* e = coopbench::Registry::instance().backend(name);
    EXPECT_NE(e, nullptr) << name << " is not registered";
    if (!e) return {};
    const auto dir = std::filesystem::temp_directory_path() /
                     ("coopbench-doc-" + name + "-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::remove_all(dir);
    EXPECT_EQ(coopbench::test::cli_in_child(
                  {"run", "--backends", name, "--plan", "tiny", "--timeout", "120", "--out", dir.string(), "--quiet"}),
              0);
    const auto rows = coopbench::test::csv_table(dir / "results.csv");
    std::set<std::string> seen;
    for (const auto& r : rows) {
        EXPECT_EQ(r.at("backend"), name);
        EXPECT_EQ(r.at("status"), "ok") << r.at("point") << ": " << r.at("reason");
        seen.insert(r.at("workload"));
    }
    for (const auto& [workload, runner] : e->runners) EXPECT_TRUE(seen.count(workload)) << "no rows for " << workload;
    std::filesystem::remove_all(dir);
    return rows;
}

}  // namespace

TEST(DocBackends, MyThreadsRunsEveryWorkload) {
    const auto* e = coopbench::Registry::instance().backend("mythreads");
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->origin.find("docs/examples/mythreads/register.cpp"), std::string::npos) << e->origin;
    tiny_sweep_is_ok("mythreads");
}

#if COOPBENCH_DOC_PTH

TEST(DocBackends, PthRunsEveryWorkloadOnOneProcessor) {
    const auto* e = coopbench::Registry::instance().backend("pth");
    ASSERT_NE(e, nullptr);
    EXPECT_FALSE(e->preemptive);
    EXPECT_EQ(e->fixed.at("max_processors"), "1");
    // Asked for 2 processors, every point runs (and is recorded) on 1.
    const auto dir = std::filesystem::temp_directory_path() /
                     ("coopbench-doc-pth-p-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::remove_all(dir);
    ASSERT_EQ(coopbench::test::cli_in_child({"run", "--backends", "pth", "--workloads", "create", "--plan", "tiny",
                                             "--processors", "2", "--out", dir.string(), "--quiet"}),
              0);
    const auto rows = coopbench::test::csv_table(dir / "results.csv");
    ASSERT_FALSE(rows.empty());
    for (const auto& r : rows) EXPECT_EQ(r.at("processors"), "1") << r.at("point");
    std::filesystem::remove_all(dir);
    tiny_sweep_is_ok("pth");
}

TEST(DocBackends, PthStaticSpawnSeesTheRunsStackSize) {
    coopbench::test::Watchdog dog("pth stack size");
    coopbench::RuntimeOptions o;
    o.stack_size = 256 * 1024;
    unsigned seen = 0;
    {
        coopbench::PthBackend::Runtime rt(o);
        rt.run([&] {
            auto t = coopbench::PthBackend::spawn([&] {
                pth_attr_t a = pth_attr_of(pth_self());
                pth_attr_get(a, PTH_ATTR_STACK_SIZE, &seen);
                pth_attr_destroy(a);
            });
            t.join();
        });
    }
    EXPECT_EQ(seen, 256u * 1024u);
    EXPECT_EQ(coopbench::PthBackend::stack_size, 0u) << "the Runtime's destructor resets it";
}

TEST(DocBackends, PthSemaphoreAndRecursiveMutex) {
    coopbench::test::Watchdog dog("pth semaphore");
    coopbench::PthBackend::Runtime rt(coopbench::RuntimeOptions{});
    long order = 0, got = 0;
    bool owner_try_lock = false;
    rt.run([&] {
        coopbench::PthBackend::Semaphore s(0);
        std::vector<coopbench::PthBackend::Thread> waiters;
        for (int i = 0; i < 4; ++i)
            waiters.push_back(coopbench::PthBackend::spawn([&] {
                s.acquire();  // blocks until a release: nothing runs it before
                got += ++order;
            }));
        for (int i = 0; i < 4; ++i) coopbench::PthBackend::yield();
        EXPECT_EQ(order, 0) << "acquire on a zero count returned";
        for (int i = 0; i < 4; ++i) s.release();
        for (auto& t : waiters) t.join();
        coopbench::PthBackend::Mutex m;
        m.lock();
        owner_try_lock = m.try_lock();  // Pth's mutex is recursive
        if (owner_try_lock) m.unlock();
        m.unlock();
    });
    EXPECT_EQ(order, 4);
    EXPECT_EQ(got, 1 + 2 + 3 + 4);
    EXPECT_TRUE(owner_try_lock) << "the doc says Pth's try_lock by the owner succeeds";
}

#else

TEST(DocBackends, Pth) { GTEST_SKIP() << "GNU Pth is not installed (Debian: apt-get install libpth-dev): pth left out"; }

#endif
