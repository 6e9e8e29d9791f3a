// test_patterns.cpp — patterns.cpp's programs (compiled with the CoopQuantum plugin) at P=1
// and P=2, each in a forked child with a time limit (tests/support/child.hpp): a deadlock is
// a failure with "child hung", not a stuck test. The answer expected is the OS threads' one.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "tests/support/child.hpp"

extern "C" long implicit_pattern_static_guard(unsigned processors);
extern "C" long implicit_pattern_call_once(unsigned processors);
extern "C" long implicit_pattern_flockfile(unsigned processors);
extern "C" long implicit_pattern_lock(unsigned processors, const char* kind);
extern "C" long implicit_pattern_errno(unsigned processors, bool explicit_yield);
extern "C" long implicit_pattern_thread_local(unsigned processors, const char* mode);
extern "C" long implicit_pattern_named_functor(unsigned processors);
extern "C" long implicit_pattern_unwind(unsigned processors);
extern "C" long implicit_pattern_bracket_throw(unsigned processors, const char* how);
extern "C" long implicit_pattern_signal_helper(unsigned processors, const char* how);
extern "C" long implicit_pattern_local_dynamic_tls(unsigned processors);

// implicit_test_install_elsewhere — a helper the plugin does not see (this file is compiled
// without it): patterns.cpp's annotated handler is installed through it.
extern "C" void implicit_test_install_elsewhere(int sig, void (*fn)(int)) {
    struct sigaction sa {};
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
}

namespace {

constexpr int kLimit = 90;  // seconds per child; the patterns take well under one unloaded

// run — fn's result in a child, as text ("0" is the OS threads' answer).
template <class F>
std::string run(F fn) {
    return coopbench::test::in_child([&] { return std::to_string(fn()); }, kLimit);  // "0": right
}

class Patterns : public testing::TestWithParam<unsigned> {};

// A function-local static whose constructor runs long checked code: the constructor holds the
// guard (__cxa_guard_acquire); a check that switched let a second activity on the same worker
// wait for it in the OS. Seen hanging at P=1 with the plugin before the guard was a no-switch
// region.
TEST_P(Patterns, FunctionLocalStaticWithALongConstructor) {
    EXPECT_EQ(run([] { return implicit_pattern_static_guard(GetParam()); }), "0");
}

// std::call_once with a long callable (it runs inside pthread_once). Seen hanging at P=1 before.
TEST_P(Patterns, CallOnceWithALongCallable) {
    EXPECT_EQ(run([] { return implicit_pattern_call_once(GetParam()); }), "0");
}

// flockfile held across checked work: another activity on the same worker entered the stream's
// lock (recursive per OS thread) and wrote inside the locked section. Seen failing before ("1").
TEST_P(Patterns, StreamLockedWithFlockfile) {
    EXPECT_EQ(run([] { return implicit_pattern_flockfile(GetParam()); }), "0");
}

// errno's value across an implicit switch (checked work between strtol and the test of errno)
// and an explicit one (coop::yield()). Seen failing before at both (thousands wrong).
TEST_P(Patterns, ErrnoSurvivesAnImplicitSwitch) {
    EXPECT_EQ(run([] { return implicit_pattern_errno(GetParam(), false); }), "0");
}
TEST_P(Patterns, ErrnoSurvivesAnExplicitSwitch) {
    EXPECT_EQ(run([] { return implicit_pattern_errno(GetParam(), true); }), "0");
}

// A thread_local object used through `this` (a member function, called or inlined), a
// reference or a pointer: no update lost. Seen failing before (most updates lost).
TEST_P(Patterns, ThreadLocalThroughAMemberFunction) {
    EXPECT_EQ(run([] { return implicit_pattern_thread_local(GetParam(), "member"); }), "0");
}
TEST_P(Patterns, ThreadLocalThroughAnInlinedMemberFunction) {
    EXPECT_EQ(run([] { return implicit_pattern_thread_local(GetParam(), "inline"); }), "0");
}
TEST_P(Patterns, ThreadLocalThroughAReference) {
    EXPECT_EQ(run([] { return implicit_pattern_thread_local(GetParam(), "reference"); }), "0");
}
TEST_P(Patterns, ThreadLocalThroughAPointer) {
    EXPECT_EQ(run([] { return implicit_pattern_thread_local(GetParam(), "pointer"); }), "0");
}

// Locks held across checked work that already worked (kept working): B never gets in while A
// holds the lock, and both finish.
TEST_P(Patterns, LocksHeldAcrossCheckedWork) {
    for (const char* kind : {"recursive", "shared_w", "shared_r", "timed", "scoped", "spin", "rwlock", "trylock",
                             "timedlock", "pthread_spin"})
        EXPECT_EQ(run([&] { return implicit_pattern_lock(GetParam(), kind); }), "0") << kind;
}

// A call_once callable and a static's constructor that throw: the regions end on the
// exception path too, and checked work afterwards switches again.
TEST_P(Patterns, RegionsEndWhenTheyThrow) {
    EXPECT_EQ(run([] { return implicit_pattern_unwind(GetParam()); }), "0");
}

// A call given a thread-local's address (`t.add(x)`, `t_vec.at(i)`) and a direct pthread_once
// whose init routine throws, each a plain `call` in a frame without cleanups: the no-switch
// bracket ends on the exception path too (the plugin makes the call an invoke with a cleanup
// pad), and checked work after the catch switches to a yielding bystander. Seen failing at P=1
// before ("1": the bystander ran 0 times; the review's probe deadlocked in a yield-based wait).
TEST_P(Patterns, ThreadLocalCallThatThrowsEndsItsRegion) {
    for (const char* how : {"member", "at"})
        EXPECT_EQ(run([&] { return implicit_pattern_bracket_throw(GetParam(), how); }), "0") << how;
}
TEST_P(Patterns, PthreadOnceThatThrowsEndsItsRegion) {
    EXPECT_EQ(run([] { return implicit_pattern_bracket_throw(GetParam(), "once"); }), "0");
}

// Signal handlers installed through helpers of the same translation unit (one that calls
// sigaction with its parameter, a helper of that helper, one given a prepared struct
// sigaction) and a handler installed from another translation unit, marked
// annotate("coop_signal_handler"): no switch inside any of them, so every one of the 120
// signals is handled and no activity runs on a thread inside a handler. Seen failing before
// at P=1 and P=2 (e.g. 69 of 120 lost, 90 activities inside a handler).
TEST_P(Patterns, SignalHandlerInstalledThroughAHelper) {
    for (const char* how : {"helper", "helper2", "prepared"})
        EXPECT_EQ(run([&] { return implicit_pattern_signal_helper(GetParam(), how); }), "0") << how;
}
TEST_P(Patterns, SignalHandlerMarkedForThePlugin) {
    EXPECT_EQ(run([] { return implicit_pattern_signal_helper(GetParam(), "annotated"); }), "0");
}

// A thread_local of the file's own in -fPIC code (the local-dynamic model): the address the
// function computes after checked work is the thread's it now runs on. Seen failing at P=2
// before the plugin's per-access accessor (the back end reused the TLS block of the worker
// the activity had left).
TEST_P(Patterns, FileLocalThreadLocalInPicCode) {
    EXPECT_EQ(run([] { return implicit_pattern_local_dynamic_tls(GetParam()); }), "0");
}

// An activity body of a named class (shared template code, split by the plugin into a plain
// symbol and a checked copy) busy-waits for a flag another activity sets: the body that runs
// must be the checked copy. Seen hanging at P=1 when the runtime stored the plain symbol.
TEST_P(Patterns, NamedFunctorActivityBodyIsChecked) {
    EXPECT_EQ(run([] { return implicit_pattern_named_functor(GetParam()); }), "0");
}

INSTANTIATE_TEST_SUITE_P(Processors, Patterns, testing::Values(1u, 2u), testing::PrintToStringParamName());

}  // namespace
