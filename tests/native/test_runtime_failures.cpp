// test_runtime_failures.cpp — coop's Runtime and allocators under injected failures and
// misuse: the constructor's exception safety, descriptor slab alignment (no descriptor
// straddles two cache lines) and a use of a freed descriptor reported by ASan. Links coop_hooked.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <system_error>
#include <vector>

#include "coop/coop.hpp"
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

// Defect 5: every pooled descriptor (64-byte block) starts on a cache line, so neighbours
// on different processors never share one (`quantum` is written on every check()). The
// bodies capture nothing, so their descriptors are pooled in every build (TSan adds a field).
std::atomic<long> g_misaligned{0}, g_pooled{0};
TEST(RuntimeFailures, DescriptorsDoNotStraddleCacheLines) {
    coop_test::Watchdog dog("RuntimeFailures.DescriptorsDoNotStraddleCacheLines", 60);
    static_assert(coop::internal::kDescriptorBlock == coop::kCacheLine);
    g_misaligned = 0, g_pooled = 0;
    coop::Runtime rt(coop::Options{.processors = 2});
    rt.run([] {
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 3000; ++i)  // more than one slab (64 KiB = 1024 blocks)
            ts.push_back(coop::spawn([] {
                coop::internal::Activity* self = coop::internal::current();
                if (!self->pooled) return;
                g_pooled.fetch_add(1);
                if (reinterpret_cast<std::uintptr_t>(self) % coop::kCacheLine != 0) g_misaligned.fetch_add(1);
            }));
    });
    EXPECT_EQ(g_pooled.load(), 3000) << "the test's descriptors should all be pooled";
    EXPECT_EQ(g_misaligned.load(), 0) << "descriptors straddling two cache lines";
}

// Defect 4: a use of a freed descriptor is reported (ASan: the slab block is poisoned on
// free). Only ASan builds can see it; elsewhere the test says so and skips.
TEST(RuntimeFailuresDeathTest, UseOfAFreedDescriptorIsReported) {
    if (!COOP_ASAN) GTEST_SKIP() << "needs AddressSanitizer (the asan preset)";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_DEATH(
        {
            coop::Runtime rt(coop::Options{.processors = 1});
            rt.run([] {
                static coop::internal::Activity* freed = nullptr;
                coop::Thread t = coop::spawn([] { freed = coop::internal::current(); });
                t.join();  // frees the descriptor into this processor's cache
                volatile coop::Priority q = freed->priority;  // use after free
                (void)q;
            });
        },
        "use-after-poison|heap-use-after-free");
}

}  // namespace
