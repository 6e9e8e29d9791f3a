// coop.hpp — coop, a cooperative lock-free user-level threading runtime (public API).
//
// After F. Negele, F. Friedrich, S. Oh, B. Egger, "On the Design and Implementation of an
// Efficient Lock-Free Scheduler" (JSSPP 2015/2017). Architecture: docs/native-runtime.md.
//
// Example (compiled: docs/examples/coop_sketch.cpp), after #include <coop/coop.hpp>:
//   coop::Runtime rt({.processors = 2});
//   rt.run([] {                                  // main runs as an activity
//       coop::Mutex m;  long n = 0;
//       std::vector<coop::Thread> ts;
//       for (int i = 0; i < 100; ++i)
//           ts.push_back(coop::spawn([&] { std::lock_guard g(m); ++n; }));
//       for (auto& t : ts) t.join();             // blocks the activity, not the worker
//   });                                          // returns when everything has finished
//
// Activities switch only at yield(), check() when the quantum runs out, blocking calls
// (join, Mutex, CondVar, Semaphore, sleep_for, and coop's I/O: io.hpp, net.hpp) and their
// end. Sockets, pipes and other pollable fds waited on through coop/io.hpp or coop/net.hpp
// park the activity, not its worker (an idle worker polls epoll for them); run other
// blocking work (regular-file reads, getaddrinfo) through coop::io::blocking. A blocking OS
// call made directly (::read on a blocking fd, sleep, std::mutex, ...) still blocks the
// whole worker and every activity queued behind it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "activity.hpp"
#include "condition.hpp"
#include "mutex.hpp"
#include "quantum.hpp"
#include "semaphore.hpp"

namespace coop {

// Options — a runtime's configuration.
struct Options {
    unsigned processors = 0;     // worker OS threads; 0 = std::thread::hardware_concurrency()
    bool pin = false;            // pin worker i to the i-th CPU of choose_cpus (cpus.hpp, hwloc)
    std::size_t stack_size = 0;  // usable bytes per activity stack; 0 = kDefaultStackSize
    bool guard = true;           // a PROT_NONE guard page below every stack
    // scheduling — the scheduling algorithm: global (the paper's), work_stealing
    // (per-processor rings, Go's design) or parasail (owner-guarded LIFO deques).
    Scheduling scheduling = Scheduling::global;
};

// Runtime — starts the processors in its constructor and stops them in its destructor.
// At most one Runtime may exist at a time (constructing a second throws
// std::logic_error); runtimes may follow one another in a process.
class Runtime {
  public:
    explicit Runtime(const Options& options = {});
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // run — runs `main` as an activity and returns when it and every activity started
    // meanwhile have finished. Call from a thread that is not one of this runtime's
    // activities. Throws std::runtime_error when main never ran (no stack could be had).
    template <class F>
    void run(F&& main);

    // processors — the number of processors.
    unsigned processors() const noexcept;

    // stats — the scheduler's counters so far (parks, wakeups; for the local policies also
    // steals, steal_batches, failed_steals, runnext_hits, local_picks, global_picks,
    // overflowed), summed over processors; racy while processors run (statistics).
    std::map<std::string, std::uint64_t> stats() const;
    // (stats()["stack_failures"]: activities that got no stack and never ran.)

    // stack_failure — why the first activity that got no stack did not ("" if none).
    std::string stack_failure() const;

  private:
    void wait_all_finished();
    internal::RuntimeState* state_;
};

template <class Entry>
class BasicThread;
// Thread — the join handle of an activity started by coop::spawn.
using Thread = BasicThread<internal::Untyped>;
template <class F>
Thread spawn(Priority priority, F&& fn);

// BasicThread — the join handle of an activity. Destroying a joinable handle joins. `Entry`
// is how join reaches the scheduler, as BasicMutex's (mutex.hpp): internal::Untyped for
// coop::Thread (coop::spawn's; branches once on the running runtime's algorithm), Algo<K> for
// Algo<K>::Thread (Algo<K>::spawn's; algorithm K's code, no branch).
template <class Entry>
class BasicThread {
  public:
    BasicThread() = default;
    BasicThread(BasicThread&& o) noexcept : a_(std::exchange(o.a_, nullptr)) {}
    BasicThread& operator=(BasicThread&& o) noexcept {
        if (this != &o) {
            join();
            a_ = std::exchange(o.a_, nullptr);
        }
        return *this;
    }
    ~BasicThread() { join(); }

    // join — waits until the activity has finished (blocking the calling activity, not its
    // processor; from a non-worker thread it polls). No-op when not joinable. Returns false
    // when the activity never ran because no stack could be had for it (its closure was
    // destroyed unrun; Runtime::stack_failure says why), true otherwise.
    bool join() noexcept {
        if (a_ != nullptr) {
            if constexpr (std::is_same_v<Entry, internal::Untyped>)
                return internal::join_and_free(std::exchange(a_, nullptr));
            else
                return internal::join_and_free_as<Entry::kind>(std::exchange(a_, nullptr));
        }
        return true;
    }
    // joinable — whether join() still has something to wait for.
    bool joinable() const noexcept { return a_ != nullptr; }

  private:
    template <class F>
    friend Thread spawn(Priority, F&&);
    friend Entry;  // Algo<K>::spawn
    explicit BasicThread(internal::Activity* a) : a_(a) {}
    internal::Activity* a_ = nullptr;
};

namespace internal {
// new_closure — a descriptor holding `fn` (spawn's allocation; the caller sets its body and
// starts it), with its queue node. Throws std::bad_alloc, or std::runtime_error when no
// runtime is running.
template <class F>
Closure<std::decay_t<F>>* new_closure(F&& fn) {
    using Fn = std::decay_t<F>;
    using C = Closure<Fn>;
    static_assert(alignof(C) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "coop::spawn: over-aligned closure");
    if (!runtime_active()) throw std::runtime_error("coop::spawn: no coop::Runtime is running");
    Node* node = nullptr;
    void* mem = allocate_descriptor(sizeof(C), &node);
    C* c = ::new (mem) C;
    try {
        // A fresh block has no queue node: take it here, where a refusal reaches the spawner
        // as std::bad_alloc. Its first enqueue (start -> awakened, noexcept) would otherwise
        // allocate it and end the process (docs/native-runtime.md, "When no stack can be had").
        if (node == nullptr) node = detail::allocate_node();
        ::new (static_cast<void*>(c->storage)) Fn(std::forward<F>(fn));
    } catch (...) {
        c->node = node;
        c->pooled = sizeof(C) <= kDescriptorBlock;
        free_descriptor(c);
        throw;
    }
    c->node = node;  // the enqueue uses it (acquire() swaps it for a pooled one if hazardous)
    c->pooled = sizeof(C) <= kDescriptorBlock;
    return c;
}
}  // namespace internal

// spawn — starts `fn()` as a new activity of `priority` in the running runtime and returns
// its join handle. The activity gets a stack when it first runs, not now: a spawned but
// not yet run activity costs only its descriptor (48 bytes + the closure). Throws
// std::bad_alloc, or std::runtime_error when no runtime is running. `fn` must not throw.
template <class F>
Thread spawn(Priority priority, F&& fn) {
    auto* c = internal::new_closure(std::forward<F>(fn));
    c->body = &std::remove_pointer_t<decltype(c)>::run;
    internal::start(c, priority);
    return Thread(c);
}

// spawn — starts `fn()` with Priority::Default.
template <class F>
Thread spawn(F&& fn) {
    return spawn(Priority::Default, std::forward<F>(fn));
}

// yield — lets the ready activities of the same or higher priority run first (Fig. 2
// SWITCH). Outside an activity: std::this_thread::yield(). No-op in an uncooperative scope.
void yield() noexcept;

// Algo<K> — coop's API for a runtime whose Options::scheduling is K, chosen at compile time:
// spawn, join (Algo<K>::Thread), yield, and the parking primitives suspend / make_ready
// (for coop::Channel's `Entry` parameter) reach that algorithm's Scheduler<A> by a static
// cast, with no run-time branch on the algorithm; an activity it spawns finishes through
// A's code too. The untyped functions (coop::spawn, coop::yield, Thread::join, ...) work
// for every runtime: they branch once on the running runtime's algorithm and then run the
// same code. Calling Algo<K> while a runtime of another algorithm runs is a programming
// error (checked by COOP_ASSERT in debug and sanitizer builds, undefined otherwise).
// coop::Mutex/CondVar/Semaphore park untyped; BasicMutex<Algo<K>> etc. through Algo<K>.
//   coop::Runtime rt({.processors = 4, .scheduling = coop::Scheduling::work_stealing});
//   using WS = coop::Algo<coop::Scheduling::work_stealing>;
//   rt.run([] { WS::Thread t = WS::spawn([] { WS::yield(); }); t.join(); });
template <Scheduling K>
struct Algo {
    static constexpr Scheduling kind = K;

    // Thread — the join handle of an activity spawned by Algo<K>::spawn (as coop::Thread;
    // join reaches A's code without the branch).
    using Thread = BasicThread<Algo>;

    // spawn — as coop::spawn.
    template <class F>
    static Thread spawn(Priority priority, F&& fn) {
        auto* c = internal::new_closure(std::forward<F>(fn));
        c->body = &std::remove_pointer_t<decltype(c)>::template run_and_finish<K>;
        internal::start_as<K>(c, priority);
        return Thread(c);
    }
    template <class F>
    static Thread spawn(F&& fn) {
        return spawn(Priority::Default, std::forward<F>(fn));
    }

    // yield — as coop::yield.
    static void yield() noexcept { internal::yield_as<K>(); }

    // suspend / make_ready — as internal::suspend / internal::make_ready (activity.hpp).
    static void suspend(internal::Finalizer finalizer, void* value) noexcept {
        internal::suspend_as<K>(finalizer, value);
    }
    static void make_ready(internal::Activity* a) noexcept { internal::make_ready_as<K>(a); }
};

// AnyAlgo — the untyped API (coop::Thread, coop::spawn, coop::yield, internal::suspend /
// make_ready) under Algo<K>'s names, for code generic over the two (the harness adapter,
// runtimes/native/native.hpp): the running runtime's algorithm is chosen at run time.
struct AnyAlgo {
    using Thread = coop::Thread;
    template <class F>
    static Thread spawn(Priority priority, F&& fn) {
        return coop::spawn(priority, std::forward<F>(fn));
    }
    template <class F>
    static Thread spawn(F&& fn) {
        return coop::spawn(Priority::Default, std::forward<F>(fn));
    }
    static void yield() noexcept { coop::yield(); }
    static void suspend(internal::Finalizer finalizer, void* value) noexcept { internal::suspend(finalizer, value); }
    static void make_ready(internal::Activity* a) noexcept { internal::make_ready(a); }
};

// check — the paper's implicit switch check, written explicitly (the clang plugin in
// plugin/ inserts the same code): costs `cost` quantum units; switches (like yield) when
// the quantum runs out. Inline: a decrement of a thread-local counter and a branch
// (quantum.hpp); the call only when the counter goes negative.
inline void check(std::int32_t cost = 1) noexcept {
    if ((coop_quantum_left -= cost) < 0) [[unlikely]]
        coop_quantum_expired();
}

// uncooperative — RAII: no switch happens through check() or yield() while one is alive
// on the current activity (Sect. 3.1's "uncooperative" blocks). Blocking inside one
// (join, lock contention, sleep_for) is a programming error. On exit from the outermost
// scope, an exhausted quantum switches.
class uncooperative {
  public:
    uncooperative() noexcept : a_(internal::current()) {
        if (a_ != nullptr) ++a_->uncooperative;
    }
    ~uncooperative() {
        if (a_ != nullptr && --a_->uncooperative == 0 && coop_quantum_left <= 0) yield();
    }
    uncooperative(const uncooperative&) = delete;
    uncooperative& operator=(const uncooperative&) = delete;

  private:
    internal::Activity* a_;
};

// sleep_until_ns / sleep_for — suspends the current activity (not its processor) for at
// least `d`. Sleepers are woken by processors that are idle or yielding (timer list polled
// every kTimerPollMask+1 yields and by the idle loop, which parks with the earliest
// deadline as its timeout), so a processor that runs an activity that never switches
// delays other sleepers. Outside an activity: std::this_thread::sleep_for.
void sleep_until_ns(std::int64_t deadline_ns) noexcept;
template <class Rep, class Period>
void sleep_for(std::chrono::duration<Rep, Period> d) {
    if (internal::current() == nullptr) {
        std::this_thread::sleep_for(d);
        return;
    }
    sleep_until_ns(internal::now_ns() +
                   std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

// in_activity — whether the caller runs as a coop activity.
inline bool in_activity() noexcept { return internal::current() != nullptr; }

template <class F>
void Runtime::run(F&& main) {
    Thread t = spawn(Priority::Default, std::forward<F>(main));
    wait_all_finished();
    if (!t.join()) throw std::runtime_error("coop::Runtime::run: main never ran, no stack: " + stack_failure());
}

}  // namespace coop
