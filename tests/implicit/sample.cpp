// sample.cpp — one function per placement rule of the CoopQuantum plugin; check_plugin.py
// compiles it with the plugin and checks the IR (the expectation is in each comment).
#include <signal.h>

#include <csignal>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int ext(int);

// leaf: no call, no loop -> no check.
extern "C" int leaf(int x) { return x * 3 + 1; }

// short_loop: a short innermost loop -> checked once per chunk (a coop.chunk counter).
extern "C" long short_loop(const int* a, long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) s += a[i] ^ (s >> 3);
    return s;
}

// long_loop: a long loop body -> a check at its latch every iteration, no chunk counter.
extern "C" double long_loop(long n, double* v) {
    double s = 0;
    for (long i = 0; i < n; ++i) {
        s += v[i] * v[i] / (v[i] + 1.0) - s * 0.5 + v[i] * 3.0 - 1.0 / (s + 2.0);
        v[i] = s * 0.25 + v[i] / 3.0 + s / (v[i] + 7.0) - v[i] * v[i] / (s + 11.0);
        s = s / (v[i] + 13.0) + v[i] / (s + 17.0) - s * v[i] / 19.0;
    }
    return s;
}

// caller: calls without a loop -> an entry check.
extern "C" int caller(int x) { return ext(x) + 1; }

// callee_checked: calls -> an entry check. loop_calls_checked: its loop always calls it
// -> no latch check (the entry check of the callee is enough), only its own entry check.
extern "C" [[gnu::noinline]] int callee_checked(int x) { return ext(x) * 2; }
extern "C" long loop_calls_checked(long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) s += callee_checked(static_cast<int>(i)) + (s >> 1) * 3 + (s ^ i) + (s & 7) * 5;
    return s;
}

// annotated_uncooperative: never checked.
extern "C" __attribute__((annotate("coop_uncooperative"))) long annotated_uncooperative(long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) s += ext(static_cast<int>(i));
    return s;
}

// coop::runtime_like: coop's namespace is the runtime -> never checked.
namespace coop {
[[gnu::noinline]] long runtime_like(long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) s += ext(static_cast<int>(i));
    return s;
}
}  // namespace coop

// inline_checked: an inline function with a check -> internal linkage (never shared with
// uninstrumented code through the linker).
[[gnu::noinline]] inline long inline_checked(long n) {
    long s = 0;
    for (long i = 0; i < n; ++i) s += ext(static_cast<int>(i)) + (s >> 2);
    return s;
}

extern "C" long use_all(long n) { return inline_checked(n) + coop::runtime_like(n); }

// zero_fill: a loop the optimiser turns into llvm.memset -> a check after it, charging the
// bytes (a leaf without a loop otherwise).
extern "C" void zero_fill(int* a, long n) {
    for (long i = 0; i < n; ++i) a[i] = 0;
}

// pragma_no_unroll: the short loop of short_loop, which the source says not to unroll -> not
// unrolled by the plugin either; checked once per chunk.
extern "C" long pragma_no_unroll(const int* a, long n) {
    long s = 0;
#pragma clang loop unroll(disable)
    for (long i = 0; i < n; ++i) s += a[i] ^ (s >> 3);
    return s;
}

// on_signal / on_sigaction: signal handlers (installed with signal() and sigaction()) ->
// never checked, although they loop and call.
extern "C" void on_signal(int sig) {
    for (int i = 0; i < sig; ++i) ext(i);
}
extern "C" void on_sigaction(int sig, siginfo_t*, void*) {
    for (int i = 0; i < sig; ++i) ext(i);
}
extern "C" void install_handlers() {
    std::signal(SIGUSR1, &on_signal);
    struct sigaction sa {};
    sa.sa_sigaction = &on_sigaction;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGUSR2, &sa, nullptr);
}

// on_helper_signal / on_helper_sigaction: installed through helpers of this file (the
// helper stores its parameter for sigaction(), or passes it to signal()) -> never checked.
extern "C" void on_helper_signal(int sig) {
    for (int i = 0; i < sig; ++i) ext(i);
}
extern "C" void on_helper_sigaction(int sig) {
    for (int i = 0; i < sig; ++i) ext(i);
}
extern "C" [[gnu::noinline]] void install_with_sigaction(int sig, void (*fn)(int)) {
    struct sigaction sa {};
    sa.sa_handler = fn;
    sigaction(sig, &sa, nullptr);
}
extern "C" [[gnu::noinline]] void install_with_signal(int sig, void (*fn)(int)) { std::signal(sig, fn); }
extern "C" void install_through_helpers() {
    install_with_sigaction(SIGUSR1, on_helper_sigaction);
    install_with_signal(SIGUSR2, on_helper_signal);
}
// not_a_handler: a callback stored by a function that installs a handler through a helper,
// but not handed to it -> checked as usual.
extern "C" void not_a_handler(int n) {
    for (int i = 0; i < n; ++i) ext(i);
}
void (*volatile g_callback)(int);
extern "C" void install_and_keep_callback() {
    install_with_sigaction(SIGTERM, on_helper_sigaction);
    g_callback = &not_a_handler;
}
// on_marked: a handler installed where the plugin cannot see it, marked -> never checked.
extern "C" __attribute__((annotate("coop_signal_handler"))) void on_marked(int sig) {
    for (int i = 0; i < sig; ++i) ext(i);
}

// tls_call_may_throw: a call given a thread-local's address (bracketed) that may throw, in
// a function without cleanups -> an invoke whose own landing pad releases and resumes.
struct Counter {
    long n = 0;
    [[gnu::noinline]] void add(long x) {
        if (x < 0) throw std::invalid_argument("negative");
        n += ext(static_cast<int>(x));
    }
};
thread_local Counter t_counter;
extern "C" void tls_call_may_throw(long x) { t_counter.add(x); }

// cold_paths: a short common path (a test, a call) and long cold ones, a throw (a path
// that cannot return) and a catch handler (reached only by unwinding) -> the entry check
// charges the instructions outside loops that a call can run on its way to a return
// without an exception; each cold path is charged where it starts (a decrement, no branch).
extern "C" int cold_paths(std::vector<std::string>& out, int x) {
    if (x < 0) throw std::invalid_argument("negative: " + std::to_string(x) + " of " + std::to_string(out.size()));
    try {
        return ext(x);
    } catch (const std::exception& e) {
        out.clear();
        out.push_back(std::string(e.what()) + " at " + std::to_string(x) + " after " + std::to_string(out.size()));
        return -1;
    }
}
