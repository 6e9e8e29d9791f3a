// test_parasail_steal.cpp — a thief never waits for the owner of a ParaSail deque
// (parasail_queue.hpp). Directed: a guard hook stops the owner inside its critical section
// and, from there, runs a thief to completion. Were the thief to queue in the owner guard
// until the owner leaves (as the blog's non-owner does), it would wait for ever: the
// watchdog turns that into a failure. This was native-parasail's collapse at P=2
// (TokenRing 22.8 s against 0.14 s at P=1): idle processors slept in the guard's queue
// and every contended steal cost a futex sleep and a cross-core wake-up.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "coop/src/owner_guard.hpp"
#include "coop/src/ws/parasail_queue.hpp"
#include "tests/support/watchdog.hpp"

namespace {

struct Job {
    int id = 0;
};

// HookedGuard — Base with a hook run once inside the next owner access.
template <class Base>
struct HookedGuard : Base {
    static inline std::function<void()> inside;
    template <class F>
    decltype(auto) owner_access(F&& fn) {
        return Base::owner_access([&]() -> decltype(auto) {
            if (inside) {
                auto hook = std::move(inside);
                inside = nullptr;
                hook();
            }
            return fn();
        });
    }
};

template <class G>
class ParasailSteal : public ::testing::Test {};
using Guards = ::testing::Types<HookedGuard<coop::OwnerGuard>, HookedGuard<coop::OwnerGuardAsym>>;
TYPED_TEST_SUITE(ParasailSteal, Guards);

TYPED_TEST(ParasailSteal, ThiefGivesUpWhileOwnerInside) {
    coopbench::test::Watchdog wd("ParasailSteal.ThiefGivesUpWhileOwnerInside", 30);
    coop::ws::ParasailQueue<Job, TypeParam> q;
    Job a{1}, b{2}, c{3};
    q.push_back(&a);
    q.push_back(&b);  // two items: a thief goes for the guard, not only the size hint
    Job* stolen = &c;
    TypeParam::inside = [&] {
        std::thread thief([&] { stolen = q.stealer().steal(); });
        thief.join();  // the owner is inside push_back: a waiting thief never returns
    };
    q.push_back(&c);
    EXPECT_EQ(stolen, nullptr) << "the owner was inside: the thief must give up";
    // Nothing lost: all three are still there, the thief can take the oldest now.
    EXPECT_EQ(q.stealer().steal(), &a);
    EXPECT_EQ(q.pop_back(), &c);
    EXPECT_EQ(q.pop_back(), &b);
    EXPECT_EQ(q.pop_back(), nullptr);
}

}  // namespace
