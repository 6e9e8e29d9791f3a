// test_one_file_backend.cpp — adding a backend, proven: a backend defined entirely in this
// file (OS threads with spin locks) registers itself with one line and runs every
// registered workload at the "tiny" size through the same driver path users take
// (coopbench::cli_main: `coopbench run ...`, each point in a child process), and
// `coopbench list` shows it with its options and the file it comes from.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "harness/cli.hpp"
#include "harness/register_backend.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/csv.hpp"

namespace {

// SpinThreads — OS threads (std::thread) with a test-and-test-and-set spin mutex, a
// generation-counter condition variable and a CAS semaphore: everything a backend needs.
struct SpinThreads {
    static constexpr bool preemptive = true;  // OS threads: spinning on them is safe

    class Thread {
      public:
        Thread() = default;
        explicit Thread(std::thread t) : t_(std::move(t)) {}
        Thread(Thread&&) noexcept = default;
        Thread& operator=(Thread&& o) noexcept {
            join();
            t_ = std::move(o.t_);
            return *this;
        }
        ~Thread() { join(); }
        void join() {
            if (t_.joinable()) t_.join();
        }

      private:
        std::thread t_;
    };

    template <class F>
    static Thread spawn(F&& fn) {
        try {
            return Thread(std::thread(std::forward<F>(fn)));
        } catch (const std::system_error& e) {
            throw coopbench::SpawnError(std::string("std::thread: ") + e.what());
        }
    }

    static void yield() { std::this_thread::yield(); }

    class Mutex {
      public:
        void lock() {
            // acquire on success: the critical section sees the previous holder's writes.
            while (held_.exchange(true, std::memory_order_acquire))
                while (held_.load(std::memory_order_relaxed)) std::this_thread::yield();
        }
        bool try_lock() {
            // acquire: as lock(); the relaxed pre-check only avoids a needless write.
            return !held_.load(std::memory_order_relaxed) && !held_.exchange(true, std::memory_order_acquire);
        }
        void unlock() {
            // release: publishes the critical section to the next holder.
            held_.store(false, std::memory_order_release);
        }

      private:
        std::atomic<bool> held_{false};
    };

    class CondVar {
      public:
        void wait(Mutex& m) {
            // The generation is read while `m` is held, so a notify that follows a state
            // change made under `m` increments it after this read: no lost wake-up.
            // acquire/release on gen_ pair waiter and notifier (the mutex orders the rest).
            const unsigned g = gen_.load(std::memory_order_acquire);
            m.unlock();
            while (gen_.load(std::memory_order_acquire) == g) std::this_thread::yield();
            m.lock();
        }
        void notify_one() { notify_all(); }  // waking more than one is a permitted spurious wake-up
        void notify_all() { gen_.fetch_add(1, std::memory_order_release); }

      private:
        std::atomic<unsigned> gen_{0};
    };

    class Semaphore {
      public:
        explicit Semaphore(std::ptrdiff_t initial) : count_(initial) {}
        void acquire() {
            for (;;) {
                std::ptrdiff_t c = count_.load(std::memory_order_relaxed);
                // acquire on the CAS: pairs with release() so the releaser's writes are seen.
                if (c > 0 && count_.compare_exchange_weak(c, c - 1, std::memory_order_acquire)) return;
                std::this_thread::yield();
            }
        }
        void release() { count_.fetch_add(1, std::memory_order_release); }

      private:
        std::atomic<std::ptrdiff_t> count_;
    };

    class Runtime {
      public:
        explicit Runtime(const coopbench::RuntimeOptions&) {}
        template <class F>
        void run(F&& main) {
            spawn(std::forward<F>(main)).join();
        }
    };
};

}  // namespace

// The one registration line.
COOPBENCH_REGISTER_BACKEND(SpinThreads, "test-spinthreads", "test: OS threads with spin locks, defined in one file",
                           {coopbench::OptionSpec{"spin", "yield", "what a waiter does (test option)", {"yield"}}});

namespace {

// cli — `coopbench ARGS...` in this process (the shared helper).
int cli(std::vector<std::string> args) { return coopbench::test::cli_here(std::move(args)); }

// supported_workloads — the workloads that declare they run on SpinThreads (supports<B>()).
template <class... Ws>
std::set<std::string> supported_in(coopbench::TypeList<Ws...>) {
    std::set<std::string> names;
    coopbench::Machine m;
    ((coopbench::workload_supports<Ws, SpinThreads>() ? void(names.insert(Ws::info(m).name)) : void()), ...);
    return names;
}
std::set<std::string> supported_workloads() { return supported_in(coopbench::AllWorkloads{}); }

}  // namespace

TEST(OneFileBackend, SatisfiesTheConceptAndIsRegistered) {
    static_assert(coopbench::Backend<SpinThreads>);
    const auto* e = coopbench::Registry::instance().backend("test-spinthreads");
    ASSERT_NE(e, nullptr);
    EXPECT_NE(e->origin.find("tests/extension/test_one_file_backend.cpp"), std::string::npos) << e->origin;
    EXPECT_TRUE(e->preemptive);
    // Every workload that supports it (all but those restricted to one runtime, e.g. the
    // lock-free units of coop) was instantiated for it, and no other.
    for (const auto& name : supported_workloads())
        EXPECT_TRUE(e->runners.count(name)) << "no runner for workload " << name;
    EXPECT_EQ(e->runners.size(), supported_workloads().size());
}

TEST(OneFileBackend, ListShowsItWithOptionsAndOrigin) {
    testing::internal::CaptureStdout();
    const int rc = cli({"list"});
    const std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(rc, 0);
    EXPECT_NE(out.find("test-spinthreads"), std::string::npos) << out;
    EXPECT_NE(out.find("tests/extension/test_one_file_backend.cpp"), std::string::npos) << out;
    EXPECT_NE(out.find("spin=yield"), std::string::npos) << out;
}

TEST(OneFileBackend, RunsEveryWorkloadThroughTheDriver) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("coopbench-extension-" + std::to_string(static_cast<long>(::getpid())));
    std::filesystem::remove_all(dir);
    const int rc = cli({"run", "--backends", "test-spinthreads", "--plan", "tiny", "--isolation", "process", "--timeout",
                        "120", "--out", dir.string(), "--quiet"});
    EXPECT_EQ(rc, 0);
    const auto rows = coopbench::test::csv_rows(dir / "results.csv");
    ASSERT_GE(rows.size(), 2u) << "no results in " << dir;
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < rows[0].size(); ++i) col[rows[0][i]] = i;
    for (const char* c : {"backend", "workload", "status", "reason"}) ASSERT_TRUE(col.count(c)) << "no column " << c;
    std::set<std::string> seen;
    for (std::size_t r = 1; r < rows.size(); ++r) {
        const auto& row = rows[r];
        ASSERT_EQ(row.size(), rows[0].size()) << "row " << r;
        EXPECT_EQ(row[col["backend"]], "test-spinthreads");
        EXPECT_EQ(row[col["status"]], "ok") << row[col["workload"]] << ": " << row[col["reason"]];
        seen.insert(row[col["workload"]]);
    }
    for (const auto& name : supported_workloads())
        EXPECT_TRUE(seen.count(name)) << "workload " << name << " missing from results.csv";
    std::filesystem::remove_all(dir);
}
