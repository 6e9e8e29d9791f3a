// patterns.cpp — ordinary code written for preemptive OS threads, compiled by clang++ with the
// CoopQuantum plugin, that implicit switches must not break (test_patterns.cpp runs each at
// P=1 and P=2, in a forked child with a time limit: a deadlock is a failure). Each function
// returns what OS threads would give (0 = right, unless said otherwise).
//
// The patterns: something the OS thread holds while checked code runs (a function-local
// static's guard, std::call_once's in-progress state, a stdio stream's lock, pthread and
// std locks); errno's value across a switch; a thread_local object used through `this`, a
// reference or a pointer.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "coop/coop.hpp"

namespace {

// crunch — `n` steps of a loop the plugin checks (~ n / 10,000 quanta).
[[gnu::noinline]] std::uint64_t crunch(std::uint64_t n) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 2862933555777941757ULL + (x >> 7) + i;
    return x;
}

std::atomic<std::uint64_t> g_sink{0};
constexpr std::uint64_t kWork = 20'000'000;  // hundreds of quanta

// two — runs `a` and, after `a` had a chance to start, `b` on `processors` workers, with a
// yielding bystander; returns how often the bystander ran while `a` held its resource
// (`a` reports it through `during`).
template <class A, class B>
void two(unsigned processors, A a, B b) {
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        coop::Thread x = coop::spawn(a);
        coop::yield();
        coop::Thread y = coop::spawn(b);
        x.join();
        y.join();
    });
}

// Table — a function-local static whose constructor runs long checked code.
struct Table {
    std::uint64_t v;
    Table() : v(crunch(kWork)) {}
};
[[gnu::noinline]] std::uint64_t lookup() {
    static Table t;  // __cxa_guard_acquire ... __cxa_guard_release around the constructor
    return t.v;
}

std::once_flag g_once;
std::uint64_t g_once_value = 0;
[[gnu::noinline]] std::uint64_t once_value() {
    std::call_once(g_once, [] { g_once_value = crunch(kWork); });
    return g_once_value;
}

}  // namespace

// implicit_pattern_static_guard — two activities reach a function-local static whose constructor
// runs long checked code: both see the one value (OS threads: the second waits for the first).
extern "C" long implicit_pattern_static_guard(unsigned processors) {
    std::uint64_t a = 0, b = 1;
    two(processors, [&] { a = lookup(); }, [&] { b = lookup(); });
    return a == b && a == crunch(kWork) ? 0 : 1;
}

// implicit_pattern_call_once — the same with std::call_once and a long callable.
extern "C" long implicit_pattern_call_once(unsigned processors) {
    std::uint64_t a = 0, b = 1;
    two(processors, [&] { a = once_value(); }, [&] { b = once_value(); });
    return a == b && a == crunch(kWork) ? 0 : 1;
}

// implicit_pattern_flockfile — activity A holds a stream's lock (flockfile) across checked work
// and writes "<A1" ... "A2>"; activity B writes "B" with fputs (which takes the lock). Under
// OS threads B's text never lands inside A's locked section. Returns 0 if the stream is
// "<A1A2>B", 1 otherwise.
extern "C" long implicit_pattern_flockfile(unsigned processors) {
    char* buf = nullptr;
    size_t len = 0;
    FILE* fp = open_memstream(&buf, &len);
    two(
        processors,
        [&] {
            flockfile(fp);
            fputs_unlocked("<A1", fp);
            g_sink += crunch(kWork);
            fputs_unlocked("A2>", fp);
            funlockfile(fp);
        },
        [&] { fputs("B", fp); });
    fclose(fp);
    const long wrong = std::strcmp(buf, "<A1A2>B") == 0 ? 0 : 1;
    std::free(buf);
    return wrong;
}

// implicit_pattern_lock — a lock held by A across checked work, then taken by B (the patterns
// that already worked: they must stay working). `kind`: recursive, shared_w, shared_r,
// timed, scoped, spin (std::atomic_flag), rwlock, trylock, timedlock, pthread_spin.
// Returns 0 when both finished and B did not get in while A held the lock.
extern "C" long implicit_pattern_lock(unsigned processors, const char* kind) {
    static std::recursive_mutex rm;
    static std::shared_mutex sm;
    static std::timed_mutex tm;
    static std::mutex m1, m2;
    static std::atomic_flag spin = ATOMIC_FLAG_INIT;
    static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
    static pthread_mutex_t mx = PTHREAD_MUTEX_INITIALIZER;
    static pthread_spinlock_t ps;
    pthread_spin_init(&ps, PTHREAD_PROCESS_PRIVATE);
    std::atomic<int> inside{0};  // A in its critical section
    std::atomic<int> overlap{0};  // B got the lock while A was inside
    const std::string k = kind;
    auto hold = [&] {
        inside = 1;
        g_sink += crunch(kWork);
        inside = 0;
    };
    auto enter = [&] { overlap += inside.load(); };
    two(
        processors,
        [&] {
            if (k == "recursive") {
                std::lock_guard g(rm);
                std::lock_guard g2(rm);
                hold();
            } else if (k == "shared_w") {
                std::unique_lock g(sm);
                hold();
            } else if (k == "shared_r") {
                std::shared_lock g(sm);
                hold();
            } else if (k == "timed") {
                if (tm.try_lock_for(std::chrono::seconds(10))) {
                    hold();
                    tm.unlock();
                }
            } else if (k == "scoped") {
                std::scoped_lock g(m1, m2);
                hold();
            } else if (k == "spin") {
                while (spin.test_and_set(std::memory_order_acquire)) {
                }
                hold();
                spin.clear(std::memory_order_release);
            } else if (k == "rwlock") {
                pthread_rwlock_wrlock(&rw);
                hold();
                pthread_rwlock_unlock(&rw);
            } else if (k == "trylock") {
                while (pthread_mutex_trylock(&mx) != 0) {
                }
                hold();
                pthread_mutex_unlock(&mx);
            } else if (k == "timedlock") {
                timespec t{};
                clock_gettime(CLOCK_REALTIME, &t);
                t.tv_sec += 10;
                if (pthread_mutex_timedlock(&mx, &t) == 0) {
                    hold();
                    pthread_mutex_unlock(&mx);
                }
            } else if (k == "pthread_spin") {
                pthread_spin_lock(&ps);
                hold();
                pthread_spin_unlock(&ps);
            }
        },
        [&] {
            if (k == "recursive") {
                std::lock_guard g(rm);
                enter();
            } else if (k == "shared_w") {
                std::shared_lock g(sm);
                enter();
            } else if (k == "shared_r") {
                std::unique_lock g(sm);
                enter();
            } else if (k == "timed") {
                std::lock_guard g(tm);
                enter();
            } else if (k == "scoped") {
                std::lock_guard g(m2);
                enter();
            } else if (k == "spin") {
                while (spin.test_and_set(std::memory_order_acquire)) {
                }
                enter();
                spin.clear(std::memory_order_release);
            } else if (k == "rwlock") {
                pthread_rwlock_rdlock(&rw);
                enter();
                pthread_rwlock_unlock(&rw);
            } else if (k == "trylock" || k == "timedlock") {
                pthread_mutex_lock(&mx);
                enter();
                pthread_mutex_unlock(&mx);
            } else if (k == "pthread_spin") {
                pthread_spin_lock(&ps);
                enter();
                pthread_spin_unlock(&ps);
            }
        });
    pthread_spin_destroy(&ps);
    return overlap.load();
}

namespace {
// work_between — checked work long enough to expire the quantum (a call, as in n1).
[[gnu::noinline]] std::uint64_t work_between(std::uint64_t n) { return crunch(n); }
}  // namespace

// implicit_pattern_errno — 8 activities: half parse an overflowing number (ERANGE), half a valid
// one (errno stays 0), then run checked work that switches (implicit: `explicit_yield` false)
// or call coop::yield() (explicit), then read errno. Returns the wrong readings (0 under OS
// threads: errno is the thread's).
extern "C" long implicit_pattern_errno(unsigned processors, bool explicit_yield) {
    std::atomic<long> wrong{0};
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int t = 0; t < 8; ++t)
            ts.push_back(coop::spawn([&, t] {
                const bool overflow = t % 2 == 0;
                const char* s = overflow ? "999999999999999999999999999" : "12345";
                long w = 0;
                for (int r = 0; r < 2000; ++r) {
                    errno = 0;
                    const long v = std::strtol(s, nullptr, 10);
                    if (explicit_yield)
                        coop::yield();
                    else
                        g_sink += work_between(20000 + (v & 7));
                    const int e = errno;
                    w += overflow ? e != ERANGE : e != 0;
                }
                wrong += w;
            }));
        for (auto& x : ts) x.join();
    });
    return wrong.load();
}

namespace {
std::atomic<long> g_tls_total{0};
// Acc — a thread_local object with a member function (n4: `acc.add_many(a, n)`).
struct Acc {
    long sum = 0;
    ~Acc() { g_tls_total += sum; }  // at the worker's exit
    [[gnu::noinline]] void add_many(const int* a, int n) {
        for (int i = 0; i < n; ++i) sum += a[i] + (sum & 1);
    }
    void add_inline(const int* a, int n) {  // inlined into the caller: `this` is the caller's
        for (int i = 0; i < n; ++i) sum += a[i] + (sum & 1);
    }
};
// One object per OS thread, added to g_tls_total when its thread ends; registered for that
// (its _ZTW wrapper) on every thread an access runs on.
thread_local Acc t_acc;

[[gnu::noinline]] void add_by_reference(long& s, const int* a, int n) {
    for (int i = 0; i < n; ++i) s += a[i] + (s & 1);
}
}  // namespace

// implicit_pattern_thread_local — 8 activities add to a thread_local through `mode`: "member" (a
// member function of a thread_local object), "inline" (the same, inlined), "reference" (a
// function taking the variable by reference), "pointer" (`long* p = &t` before the loop).
// Returns the updates lost (0 under OS threads).
extern "C" long implicit_pattern_thread_local(unsigned processors, const char* mode) {
    constexpr int kN = 20000, kR = 40, kT = 8;
    static int data[kN];
    long expect = 0;
    for (int i = 0; i < kN; ++i) expect += data[i] = 2 * (i % 7);  // even: (sum & 1) stays 0
    expect *= static_cast<long>(kT) * kR;
    const std::string m = mode;
    g_tls_total = 0;
    {
        coop::Runtime rt({.processors = processors});
        rt.run([&] {
            std::vector<coop::Thread> ts;
            for (int t = 0; t < kT; ++t)
                ts.push_back(coop::spawn([&] {
                    for (int r = 0; r < kR; ++r) {
                        if (m == "member") {
                            t_acc.add_many(data, kN);
                        } else if (m == "inline") {
                            t_acc.add_inline(data, kN);
                        } else if (m == "reference") {
                            add_by_reference(t_acc.sum, data, kN);
                        } else {
                            long* p = &t_acc.sum;
                            for (int i = 0; i < kN; ++i) *p += data[i] + (*p & 1);
                        }
                    }
                }));
            for (auto& x : ts) x.join();
        });
    }  // the workers ended: their thread_locals are in g_tls_total
    return expect - g_tls_total.load();
}

// ImplicitSpinner — an activity body of a named class (external linkage): its operator()
// and coop's Closure<ImplicitSpinner>::run are shared (linkonce_odr) template code, which
// the plugin splits into plain symbols and checked copies; the body must still be the
// checked copy, or the busy-wait below never lets the setter run on one processor.
struct ImplicitSpinner {
    std::atomic<bool>* flag;
    void operator()() const {
        while (!flag->load(std::memory_order_relaxed)) {
        }
    }
};

// implicit_pattern_named_functor — A busy-waits (ImplicitSpinner) for a flag B sets; 0 when
// both finished.
extern "C" long implicit_pattern_named_functor(unsigned processors) {
    std::atomic<bool> flag{false};
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        coop::Thread a = coop::spawn(ImplicitSpinner{&flag});
        coop::yield();
        coop::Thread b = coop::spawn([&] { flag = true; });
        a.join();
        b.join();
    });
    return 0;
}

namespace {
std::once_flag g_once_throws;
std::atomic<bool> g_throw_once{true};
struct Thrower {
    Thrower() {
        if (g_throw_once.exchange(false)) throw 1;
    }
};
[[gnu::noinline]] int static_that_throws() {
    static Thrower t;  // the constructor throws the first time: __cxa_guard_abort
    return 1;
}
}  // namespace

// implicit_pattern_unwind — a std::call_once callable and a static's constructor that throw
// (the no-switch regions end on the exception path too: pthread_once's bracket in the
// landing pad, __cxa_guard_abort); then checked work must still switch to a yielding
// bystander. Returns 0 when it did (at P=1 a region left open would keep it from running).
extern "C" long implicit_pattern_unwind(unsigned processors) {
    std::atomic<bool> stop{false};
    std::atomic<long> runs{0};
    long during = -1;
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        coop::Thread by = coop::spawn([&] {
            while (!stop.load()) {
                ++runs;
                coop::yield();
            }
        });
        coop::yield();
        try {
            std::call_once(g_once_throws, [] { throw 1; });
        } catch (int) {
        }
        try {
            g_sink += static_that_throws();
        } catch (int) {
        }
        const long before = runs.load();
        g_sink += crunch(kWork);
        during = runs.load() - before;
        stop = true;
        by.join();
    });
    return during > 0 ? 0 : 1;
}

// ---- Exceptional exits out of a no-switch bracket (a call given a thread-local's address,
// a pthread_once): each returns 0 when checked work after the caught exception still
// switches to a yielding bystander. A plain `call` in a frame without cleanups has no unwind
// edge; the bracket's release after it did not run on the exception path, and the activity
// stayed uncooperative (the bystander never ran again at P=1; a yield-based wait deadlocked).
namespace {
struct Validating {
    long sum = 0;
    void add(long x) {  // an ordinary member function that validates
        if (x < 0) throw std::invalid_argument("negative");
        sum += x;
    }
};
thread_local Validating t_validating;
thread_local std::vector<int> t_vec(4);
// No local with a destructor: the bracketed call is a plain `call`, not an invoke.
[[gnu::noinline]] void record(long x) { t_validating.add(x); }
[[gnu::noinline]] void poke(int i) { t_vec.at(static_cast<std::size_t>(i)) = 1; }  // throws out_of_range
pthread_once_t g_once_direct = PTHREAD_ONCE_INIT;
extern "C" void once_init_throws() { throw std::runtime_error("init"); }
[[gnu::noinline]] int once_direct() { return pthread_once(&g_once_direct, once_init_throws); }
}  // namespace

// implicit_pattern_bracket_throw — `how`: "member" (Validating::add throws), "at"
// (std::vector::at on a thread_local), "once" (pthread_once's init routine throws).
extern "C" long implicit_pattern_bracket_throw(unsigned processors, const char* how) {
    const std::string h = how;
    std::atomic<bool> stop{false};
    std::atomic<long> runs{0};
    long during = -1;
    bool caught = false;
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        coop::Thread by = coop::spawn([&] {
            while (!stop.load()) {
                ++runs;
                coop::yield();
            }
        });
        coop::yield();
        try {
            if (h == "member")
                record(-1);
            else if (h == "at")
                poke(100);
            else
                g_sink += static_cast<std::uint64_t>(once_direct());
        } catch (const std::exception&) {
            caught = true;
        }
        const long before = runs.load();
        g_sink += crunch(kWork);
        during = runs.load() - before;
        stop = true;
        by.join();
    });
    return caught && during > 0 ? 0 : 1;
}

// ---- Signal handlers installed through helpers. Four activities raise SIGUSR1 30 times
// each between pieces of checked work; the handler marks its OS thread while it runs
// (`in_handler`). A handler with checks switches: an activity then runs on a thread whose
// handler is suspended (it sees the mark), and SIGUSR1 stays blocked on that thread, so
// later signals are lost. Returns (signals lost) + (times an activity saw the mark).
// Per OS thread. External linkage on purpose, so that this probe does not depend on how the
// plugin handles file-local thread-locals in -fPIC code (the local-dynamic model, tested by
// FileLocalThreadLocalInPicCode below).
extern "C" {
__thread volatile int implicit_test_in_handler;
}
#define in_handler implicit_test_in_handler
namespace {
std::atomic<long> g_signals{0};
[[gnu::noinline]] std::uint64_t handler_work(std::uint64_t n) {  // what the handlers call (checked code)
    std::uint64_t x = 7;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 6364136223846793005ULL + (x >> 3) + i;
    return x;
}
#define COOP_TEST_HANDLER(name)                  \
    void name(int) {                             \
        in_handler = 1;                          \
        g_sink += handler_work(300'000);         \
        ++g_signals;                             \
        in_handler = 0;                          \
    }
COOP_TEST_HANDLER(on_usr1_helper)
COOP_TEST_HANDLER(on_usr1_helper2)
COOP_TEST_HANDLER(on_usr1_prepared)
#undef COOP_TEST_HANDLER
[[gnu::noinline]] void install(int sig, void (*fn)(int)) {  // an ordinary helper that calls sigaction
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(sig, &sa, nullptr);
}
[[gnu::noinline]] void install_twice_removed(void (*fn)(int)) { install(SIGUSR1, fn); }  // a helper's helper
[[gnu::noinline]] void install_prepared(int sig, const struct sigaction* sa) { sigaction(sig, sa, nullptr); }
}  // namespace

// on_usr1_annotated — installed through a helper of another translation unit
// (test_patterns.cpp, compiled without the plugin), which the plugin cannot follow: marked.
__attribute__((annotate("coop_signal_handler"))) void on_usr1_annotated(int) {
    in_handler = 1;
    g_sink += handler_work(300'000);
    ++g_signals;
    in_handler = 0;
}
extern "C" void implicit_test_install_elsewhere(int sig, void (*fn)(int));  // test_patterns.cpp

// implicit_pattern_signal_helper — `how`: "helper" (install(SIGUSR1, h)), "helper2"
// (install_twice_removed(h)), "prepared" (the caller fills a struct sigaction, a helper calls
// sigaction), "annotated" (a handler marked coop_signal_handler, installed from another TU).
extern "C" long implicit_pattern_signal_helper(unsigned processors, const char* how) {
    const std::string h = how;
    g_signals = 0;
    if (h == "helper") {
        install(SIGUSR1, on_usr1_helper);
    } else if (h == "helper2") {
        install_twice_removed(on_usr1_helper2);
    } else if (h == "prepared") {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_usr1_prepared;
        sigemptyset(&sa.sa_mask);
        install_prepared(SIGUSR1, &sa);
    } else {
        implicit_test_install_elsewhere(SIGUSR1, on_usr1_annotated);
    }
    constexpr int kT = 4, kR = 30;
    std::atomic<long> saw{0};
    {
        coop::Runtime rt({.processors = processors});
        rt.run([&] {
            std::vector<coop::Thread> ts;
            for (int t = 0; t < kT; ++t)
                ts.push_back(coop::spawn([&] {
                    for (int k = 0; k < kR; ++k) {
                        raise(SIGUSR1);  // to this OS thread: the handler runs on the activity's stack
                        g_sink += crunch(200'000);
                        if (in_handler) ++saw;
                    }
                }));
            for (auto& x : ts) x.join();
        });
    }
    signal(SIGUSR1, SIG_DFL);
    return (kT * kR - g_signals.load()) + saw.load();
}

// ---- A thread_local of this file's own (internal linkage, no constructor) in -fPIC code:
// the local-dynamic model, __tls_get_addr(module) + offset. The x86-64 back end computed the
// module's TLS block once per function, so after a check that migrated the activity, `&t` in
// the same function was the previous worker's variable. Each round compares the address the
// function computes after checked work with one computed in a separate function (its own
// access). Returns the rounds where they differ (0 under OS threads, and 0 at P=1).
namespace {
thread_local long t_local_slot;
[[gnu::noinline]] long* fresh_local_slot() { return &t_local_slot; }
}  // namespace

extern "C" long implicit_pattern_local_dynamic_tls(unsigned processors) {
    std::atomic<long> wrong{0};
    coop::Runtime rt({.processors = processors});
    rt.run([&] {
        std::vector<coop::Thread> ts;
        for (int t = 0; t < 8; ++t)
            ts.push_back(coop::spawn([&] {
                long w = 0;
                for (int r = 0; r < 400; ++r) {
                    t_local_slot += 1;  // by name, before the checked work
                    g_sink += work_between(20000 + static_cast<std::uint64_t>(r & 7));
                    long* p = &t_local_slot;  // by name, after it
                    w += p != fresh_local_slot();
                    *p += 1;
                }
                wrong += w;
            }));
        for (auto& x : ts) x.join();
    });
    return wrong.load();
}
