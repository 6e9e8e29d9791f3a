// test_exception_state.cpp — the C++ exception state belongs to the activity across a switch.
//
// The C++ runtime keeps, per OS thread, the stack of exceptions being handled (what
// `throw;`, std::current_exception() and a handler's end use) and the number of exceptions
// in flight (std::uncaught_exceptions()): libsupc++'s __cxa_eh_globals. An activity that
// switches inside a catch handler, or in a destructor run by unwinding, leaves its entries
// there; an activity that runs next on that worker would otherwise push onto, pop and free
// them (its handler's end pops the other's exception: a heap-use-after-free under ASan, a
// SIGSEGV at P=2, "terminate called without an active exception"). coop's switch keeps
// them with the activity (coop/src/switch.hpp); a fresh activity starts with none.
//
// Each test runs on every algorithm at one and two processors. Kinds of switch inside the
// handler: a yield, a contended coop::Mutex (the lock parks: another activity holds it
// across a yield), a rendezvous coop::Channel send (parks until a logger activity takes it),
// the same as in workloads/apps/eratosthenes.hpp, whose failed stage drains its input
// channel inside the handler. Checks after the switch: the caught object, `throw;`,
// std::current_exception(), std::uncaught_exceptions(); a child spawned inside a handler
// sees no exception.
//
// Seen failing before the fix (switch.hpp saving errno only): all 54 cases (3 tests x 3
// algorithms x P=1,2 x 3 kinds of switch), with hundreds to thousands of wrong exceptions
// each. Without the trampoline's reset alone (a fresh activity inherits the caught stack of
// the activity that switched to it): all 54 fail too (current_exception() not null after
// the handlers). Clean under ASan and TSan with the fix.
#include <gtest/gtest.h>

#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "coop/channel.hpp"
#include "coop/coop.hpp"
#include "tests/native/support.hpp"

namespace {

constexpr int kWatchdogSeconds = 60;
constexpr int kActivities = 6;
const int kRounds = static_cast<int>(coop_test::scaled(400, 4));

enum class Switch { yield, mutex, channel };

struct Param {
    coop::Scheduling scheduling;
    unsigned processors;
    Switch how;
};

struct Err : std::runtime_error {
    int id, round;
    Err(int i, int r) : std::runtime_error("err"), id(i), round(r) {}
};

[[gnu::noinline]] void throw_err(int id, int round) { throw Err(id, round); }

// Counts of what went wrong (all must stay 0) and of what was checked.
struct Tally {
    std::atomic<long> wrong_caught{0}, wrong_rethrow{0}, wrong_current{0}, wrong_uncaught{0},
        wrong_child{0}, checked{0};
};

// Shared by one test's activities: the mutex a holder keeps across a yield, the logger's channel.
struct World {
    explicit World(Switch h) : how(h) {}
    Switch how;
    coop::Mutex m;
    coop::Channel<int> log{0};
};

// switch_here — one switch of the kind under test.
void switch_here(World& w, int id) {
    switch (w.how) {
        case Switch::yield:
            coop::yield();
            break;
        case Switch::mutex: {
            w.m.lock();  // parks when another activity holds it (across its yield below)
            coop::yield();
            w.m.unlock();
            break;
        }
        case Switch::channel:
            w.log.send(id);  // rendezvous: parks until the logger takes it
            break;
    }
}

// check_handled — inside a handler of Err(id, round): the caught object is e, `throw;` and
// current_exception() give it, and no exception is in flight.
void check_handled(Tally& t, const Err& e, int id, int round) {
    if (e.id != id || e.round != round) ++t.wrong_caught;
    if (std::uncaught_exceptions() != 0) ++t.wrong_uncaught;
    std::exception_ptr p = std::current_exception();
    if (p == nullptr) {
        ++t.wrong_current;
    } else {
        try {
            std::rethrow_exception(p);
        } catch (const Err& e2) {
            if (e2.id != id || e2.round != round) ++t.wrong_current;
        } catch (...) {
            ++t.wrong_current;
        }
    }
    try {
        throw;
    } catch (const Err& e3) {
        if (e3.id != id || e3.round != round) ++t.wrong_rethrow;
    } catch (...) {
        ++t.wrong_rethrow;
    }
    ++t.checked;
}

// Unwinder — a frame whose destructor runs during the unwinding of Err(id, round): it
// switches there, then checks that exactly one exception is in flight, and that a nested
// try/catch in the destructor handles its own exception and leaves the outer one in flight.
struct Unwinder {
    World& w;
    Tally& t;
    int id, round;
    ~Unwinder() {
        if (std::uncaught_exceptions() != 1) ++t.wrong_uncaught;
        switch_here(w, id);
        if (std::uncaught_exceptions() != 1) ++t.wrong_uncaught;
        try {
            throw_err(id + 1000, round);
        } catch (const Err& inner) {
            switch_here(w, id);
            if (inner.id != id + 1000 || inner.round != round) ++t.wrong_caught;
            if (std::uncaught_exceptions() != 1) ++t.wrong_uncaught;
        }
        if (std::uncaught_exceptions() != 1) ++t.wrong_uncaught;
    }
};

// run_world — kActivities activities run body(world, tally, id); with Switch::channel a
// logger takes their messages (the number of sends is counted by the body: `sends` each).
template <class Body>
void run_world(const Param& param, Tally& t, long sends_per_activity, Body body) {
    coop_test::Watchdog dog("ExceptionState", kWatchdogSeconds);
    coop::Options o;
    o.processors = param.processors;
    o.scheduling = param.scheduling;
    coop::Runtime rt(o);
    rt.run([&] {
        World w(param.how);
        coop::Thread logger;
        if (param.how == Switch::channel)
            logger = coop::spawn([&] {
                for (long i = 0; i < kActivities * sends_per_activity; ++i) (void)w.log.recv();
            });
        std::vector<coop::Thread> ts;
        for (int id = 0; id < kActivities; ++id) ts.push_back(coop::spawn([&, id] { body(w, t, id); }));
        for (auto& th : ts) th.join();
        if (logger.joinable()) logger.join();
    });
}

class ExceptionState : public ::testing::TestWithParam<Param> {};

// A switch inside a catch handler; nested handlers (a second exception caught inside the
// first handler, with a switch in each) keep the order of the caught stack.
TEST_P(ExceptionState, ASwitchInsideAHandlerKeepsTheActivitysException) {
    Tally t;
    run_world(GetParam(), t, 2L * kRounds, [](World& w, Tally& t, int id) {
        for (int r = 0; r < kRounds; ++r) {
            try {
                throw_err(id, r);
            } catch (const Err& e) {
                switch_here(w, id);
                check_handled(t, e, id, r);
                try {
                    throw_err(id + 100, r);
                } catch (const Err& e2) {
                    switch_here(w, id);
                    check_handled(t, e2, id + 100, r);
                }
                check_handled(t, e, id, r);  // the inner one popped, the outer one back on top
            }
            if (std::current_exception() != nullptr || std::uncaught_exceptions() != 0) ++t.wrong_current;
        }
    });
    EXPECT_EQ(t.checked.load(), 3L * kActivities * kRounds);
    EXPECT_EQ(t.wrong_caught.load(), 0);
    EXPECT_EQ(t.wrong_rethrow.load(), 0);
    EXPECT_EQ(t.wrong_current.load(), 0);
    EXPECT_EQ(t.wrong_uncaught.load(), 0);
}

// A switch in a destructor run by unwinding (std::uncaught_exceptions() is 1 there, on
// whichever worker it resumes), then the handler of the same exception.
TEST_P(ExceptionState, ASwitchInADestructorDuringUnwindingKeepsTheExceptionInFlight) {
    Tally t;
    run_world(GetParam(), t, 3L * kRounds, [](World& w, Tally& t, int id) {
        for (int r = 0; r < kRounds; ++r) {
            try {
                Unwinder u{w, t, id, r};
                throw_err(id, r);
            } catch (const Err& e) {
                switch_here(w, id);
                check_handled(t, e, id, r);
            }
        }
    });
    EXPECT_EQ(t.checked.load(), 1L * kActivities * kRounds);
    EXPECT_EQ(t.wrong_caught.load(), 0);
    EXPECT_EQ(t.wrong_rethrow.load(), 0);
    EXPECT_EQ(t.wrong_current.load(), 0);
    EXPECT_EQ(t.wrong_uncaught.load(), 0);
}

// An activity spawned inside a handler (and run while its parent is switched away there)
// starts with no exception: none caught, none in flight; an exception_ptr handed to it
// rethrows the parent's exception.
TEST_P(ExceptionState, AnActivitySpawnedInsideAHandlerStartsWithNoException) {
    Tally t;
    run_world(GetParam(), t, 1L * kRounds / 4, [](World& w, Tally& t, int id) {
        for (int r = 0; r < kRounds / 4; ++r) {
            try {
                throw_err(id, r);
            } catch (const Err& e) {
                std::exception_ptr p = std::current_exception();
                coop::Thread child = coop::spawn([&t, p, id, r] {
                    if (std::current_exception() != nullptr || std::uncaught_exceptions() != 0) ++t.wrong_child;
                    try {
                        std::rethrow_exception(p);
                    } catch (const Err& e2) {
                        if (e2.id != id || e2.round != r) ++t.wrong_child;
                    }
                    if (std::current_exception() != nullptr) ++t.wrong_child;
                });
                switch_here(w, id);
                child.join();
                check_handled(t, e, id, r);
            }
        }
    });
    EXPECT_EQ(t.checked.load(), 1L * kActivities * (kRounds / 4));
    EXPECT_EQ(t.wrong_child.load(), 0);
    EXPECT_EQ(t.wrong_caught.load(), 0);
    EXPECT_EQ(t.wrong_rethrow.load(), 0);
    EXPECT_EQ(t.wrong_current.load(), 0);
    EXPECT_EQ(t.wrong_uncaught.load(), 0);
}

std::vector<Param> params() {
    std::vector<Param> v;
    for (auto s : {coop::Scheduling::global, coop::Scheduling::work_stealing, coop::Scheduling::parasail})
        for (unsigned p : {1u, 2u})
            for (auto h : {Switch::yield, Switch::mutex, Switch::channel}) v.push_back({s, p, h});
    return v;
}

std::string name(const ::testing::TestParamInfo<Param>& info) {
    const Param& p = info.param;
    std::string s = p.scheduling == coop::Scheduling::global           ? "global"
                    : p.scheduling == coop::Scheduling::work_stealing ? "work_stealing"
                                                                       : "parasail";
    s += "_P" + std::to_string(p.processors) + "_";
    s += p.how == Switch::yield ? "yield" : p.how == Switch::mutex ? "mutex" : "channel";
    return s;
}

INSTANTIATE_TEST_SUITE_P(Policies, ExceptionState, ::testing::ValuesIn(params()), name);

}  // namespace
