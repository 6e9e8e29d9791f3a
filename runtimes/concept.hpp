// concept.hpp — the Backend concept: the one interface every workload is written against.
//
// A backend is a struct (a namespace-like type) with nested types and static functions:
//
//   struct MyBackend {
//     static constexpr std::string_view name = "mine";            // optional: a label for tests
//     class Runtime   { explicit Runtime(const coopbench::RuntimeOptions&);
//                       template <class F> void run(F&& main); };   // runs main as a thread of
//                                                                   // this backend; returns when
//                                                                   // main has finished
//     class Thread    { void join(); };                             // movable handle; join
//                                                                   // returns when the thread
//                                                                   // has ended, and everything
//                                                                   // it wrote happens-before
//                                                                   // join's return
//     template <class F> static Thread spawn(F&& fn);               // throws SpawnError on failure
//     static void yield();
//     class Mutex     { void lock(); bool try_lock(); void unlock(); };
//     class CondVar   { void wait(Mutex& held); void notify_one(); void notify_all(); };
//     class Semaphore { explicit Semaphore(std::ptrdiff_t initial); void acquire(); void release(); };
//   };
//
// Optional members, detected with `requires` (see below and harness/registry.hpp,
// harness/run_point.hpp):
//   static std::size_t min_stack_size();   // the smallest --stack-size the backend takes;
//       without it: PTHREAD_STACK_MIN for a preemptive backend, else 4096 (registry.hpp).
//   Runtime::counters() -> a map-like range of (std::string, number) pairs, e.g.
//       std::map<std::string, std::uint64_t>: cumulative counts of the runtime (native: steals,
//       parks), readable while it runs; each run's difference joins its counters in the
//       results (run_point.hpp).
//   static std::optional<std::string> capacity(const RuntimeOptions&, std::size_t threads);
//       says in advance why `threads` live threads cannot fit (pid_max, memory, ...), so a
//       point fails cleanly instead of taking the machine down.
//   static constexpr bool preemptive;   // true for OS threads; spin-waiting workloads need it.
//   template <class T> class Channel;   // the backend's own channel (HasChannel below); a
//       backend without one gets coopbench::GenericChannel, built from its Mutex and
//       CondVar (runtimes/channel.hpp). Go's semantics:
//         explicit Channel(std::size_t capacity);  // 0: unbuffered, a rendezvous
//         void send(T v);            // blocks while full (C = 0: until a receiver took v);
//                                    // throws ChannelClosed if the channel is or becomes closed
//         std::optional<T> recv();   // blocks while empty; nothing once closed and drained
//         void close();              // wakes every waiter; a second close throws ChannelClosed
//         static constexpr std::string_view kind;  // what it is, for context.json
//       Optionally also Channel(std::size_t capacity, NeverClosed): a channel its program
//       promises never to close (the workloads' channels, workloads/apps/via.hpp and
//       workloads/micro/channel.hpp, made through apps::never_closed_channel), for which the
//       backend may use an implementation whose close is unsafe; its close() throws
//       ChannelClosed. Its capacity may be the nearest the implementation allows (a
//       backend that rounds says so in `kind`).
//
// Preconditions (what the harness guarantees a backend; docs/adding-a-backend.md):
//   - One Runtime at a time per process: the driver constructs a Runtime, calls run() once,
//     destroys it, and only then constructs another (run_point, harness/run_point.hpp); a
//     point's fork is a fresh process with one Runtime, in which the workload runs its
//     warm-up and measured iterations one after the other. A backend may therefore keep
//     process-wide statics set by its Runtime (pthreads: thread attributes; stdthread: the
//     run's cores) and read them from its static spawn (e.g. the run's stack size), as marl
//     requires "no existing scheduler bound" before binding one. Two Runtimes alive at once
//     are not supported.
//   - spawn, yield and the synchronisation objects are used only by threads of the running
//     Runtime; every Thread is joined (or destroyed, which joins) before main returns.
//   - Workloads never lock a Mutex they hold nor try_lock it while holding it, and unlock it
//     on the thread that locked it: a recursive mutex is acceptable, try_lock by the owner
//     may succeed or fail (each success balanced by one unlock).
//   - Semaphore is required even when the library has none (build it from Mutex + CondVar).
//   - A backend limited to one processor registers with the fixed option max_processors
//     (COOPBENCH_REGISTER_BACKEND_VARIANT): the driver runs its points with P <= that.
// `name` is optional and not part of the concept: the harness never reads it (the
// registered name is the registration macro's string); the project's typed tests use it to
// label their cases.
//
// Everything is resolved at compile time: a workload is a template over B and calls
// B::spawn, B::Mutex::lock, ... directly; no virtual call sits on a hot path. The harness
// picks a backend at run time from the registry (harness/registry.hpp), nowhere else.
#pragma once

#include <concepts>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace coopbench {

// RuntimeOptions and SpawnError are the backend's side of the harness's interface (what its
// Runtime is built from, what its spawn throws), so they are defined here: a backend includes
// this header only and depends on nothing of the driver.

// RuntimeOptions — the run's configuration, handed to every backend's Runtime.
struct RuntimeOptions {
    unsigned processors = 1;       // worker processors (cores) the backend may use; >= 1
    bool pin = false;              // pin workers / restrict threads to `processors` cores
    std::size_t stack_size = 0;    // bytes per thread stack; 0 = the backend's default
    std::map<std::string, std::string> extra;  // backend-specific options (validated by the registry)

    // option — an extra option's value, or `fallback` when it was not given.
    std::string option(const std::string& key, std::string fallback = {}) const {
        auto it = extra.find(key);
        return it == extra.end() ? fallback : it->second;
    }
};

// SpawnError — thrown by B::spawn when the system refuses a thread; what() says why
// (e.g. "pthread_create: EAGAIN (Resource temporarily unavailable)").
class SpawnError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// ChannelClosed — thrown by a channel's send on a closed channel and by a second close
// (Go panics in both cases); workloads catch it and report the point failed.
class ChannelClosed : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

// NeverClosed — the tag of a channel's constructor for a channel no one will close (above).
struct NeverClosed {};

namespace detail {
struct NopFn {
    void operator()() const noexcept {}
};
}  // namespace detail

template <class B>
concept Backend =
    requires {
        typename B::Runtime;
        typename B::Thread;
        typename B::Mutex;
        typename B::CondVar;
        typename B::Semaphore;
    } &&
    std::constructible_from<typename B::Runtime, const RuntimeOptions&> &&
    std::movable<typename B::Thread> &&
    std::default_initializable<typename B::Mutex> &&
    std::default_initializable<typename B::CondVar> &&
    std::constructible_from<typename B::Semaphore, std::ptrdiff_t> &&
    requires(typename B::Runtime& rt, detail::NopFn fn, typename B::Thread& t,
             typename B::Mutex& m, typename B::CondVar& cv, typename B::Semaphore& s) {
        rt.run(fn);
        { B::spawn(fn) } -> std::same_as<typename B::Thread>;
        t.join();
        B::yield();
        m.lock();
        { m.try_lock() } -> std::same_as<bool>;
        m.unlock();
        cv.wait(m);
        cv.notify_one();
        cv.notify_all();
        s.acquire();
        s.release();
    };

// has_capacity — does B say in advance how many threads fit?
template <class B>
concept HasCapacity = requires(const RuntimeOptions& o, std::size_t n) {
    { B::capacity(o, n) } -> std::same_as<std::optional<std::string>>;
};

// HasChannel — B brings its own channel (a template over the value type, see above).
template <class B>
concept HasChannel = requires(typename B::template Channel<long>& ch, long v) {
    requires std::constructible_from<typename B::template Channel<long>, std::size_t>;
    ch.send(v);
    { ch.recv() } -> std::same_as<std::optional<long>>;
    ch.close();
    { B::template Channel<long>::kind } -> std::convertible_to<std::string_view>;
};

// is_preemptive — B's threads are preempted by the OS (spin-waiting on them is safe).
template <class B>
constexpr bool is_preemptive() {
    if constexpr (requires { B::preemptive; }) return B::preemptive;
    else return false;
}

// capacity_problem — why `threads` live threads of B cannot fit, or nothing.
template <Backend B>
std::optional<std::string> capacity_problem(const RuntimeOptions& o, std::size_t threads) {
    if constexpr (HasCapacity<B>) return B::capacity(o, threads);
    else return std::nullopt;
}

}  // namespace coopbench
