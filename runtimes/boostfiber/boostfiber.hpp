// boostfiber.hpp — backend `boostfiber`: Boost.Fiber (1.74) fibers on P worker threads
// that share one fiber scheduler, as a peer of the native runtime.
//
// Variants (register.cpp), one per Boost.Fiber scheduling algorithm, option `algorithm`:
//   boostfiber/round_robin     one thread's own queue (boost::fibers::algo::round_robin); P = 1 only
//   boostfiber/shared_work     one global queue shared by P threads (algo::shared_work)
//   boostfiber/work_stealing   a queue per thread, idle threads steal (algo::work_stealing(P))
// The shared algorithms poll when idle (Boost's default suspend=false) while the P threads
// fit the CPUs; beyond that, or with idle=sleep, they are wrapped (scheduling.hpp) so idle
// threads sleep and are woken when another thread queues work (boostorg/fiber#203, #327).
//
// Options users may set (--backend-opt key=value), recorded with each result:
//   stack      pooled | fixed | protected   (stacks.hpp); default pooled
//   idle       auto | sleep | spin: an idle worker (shared_work, work_stealing) polls the
//              queues (spin: Boost's own default suspend=false, as examples/work_sharing.cpp
//              installs shared_work: a CPU per idle thread) or sleeps and is woken (sleep:
//              suspend=true, Waking). auto (default): spin when the run's P threads each have a
//              CPU of their own (P <= the CPUs it may use), sleep when they outnumber the CPUs,
//              where a polling thread would take the CPU of a thread with work.
//   stack_kib  KiB per stack, for every allocator; default kDefaultStackKib (Boost's own
//              default is 128: stack=fixed stack_kib=128 is Boost.Fiber out of the box).
//              RuntimeOptions::stack_size, when non-zero, wins over stack_kib.
//
// Runtime::run(main) starts P fresh OS threads (restricted to the run's P cores, one core
// each with RuntimeOptions::pin), each installs the algorithm; thread 0 runs `main` on its
// own (pinned) main fiber, as Boost.Fiber's examples do (run() says why not on a spawned
// fiber), the others park their main fiber on a fiber condition variable until main has
// finished. The calling thread never gets a fiber scheduler, so each run starts from clean
// per-thread state. Exception: Boost's work_stealing keeps static state (a barrier sized
// by the first run's thread count and a scheduler table indexed by a global counter,
// boostorg/fiber#217), so it runs once per process: a second work_stealing Runtime
// throws std::runtime_error saying so. The driver runs each point in its own process.
//
// Primitives: boost::fibers::mutex and condition_variable; Boost.Fiber has no semaphore,
// so Semaphore is a counter under a fiber mutex with a fiber condition variable. Channel:
// the workloads' channels (never closed) are Boost.Fiber's own, unbuffered_channel at C = 0
// and buffered_channel at the nearest capacity it allows otherwise; a channel that may be
// closed is buffered_channel where it holds exactly C, else the generic one (see Channel).
//
// Measured (2-core KVM, g++ 12 -O2, Boost 1.74; callgrind instruction counts are exact,
// times are noisy): one thread, round_robin: a yield ~490 instructions (~55-80 ns),
// spawn+join one fiber at a time ~2000 instructions (~300-420 ns), uncontended
// lock+unlock ~263 instructions. Bulk creation (N fibers, then join all) with a pool
// that is still cold, as in every isolated point: ~6-10 us per fiber, almost all of it
// first-touch page faults (~2.7 per fiber: Boost's pool links its free list through the
// bottom of each chunk, the fiber's control block sits at the top); once the pool is
// warm ~0.8-1.4 us. The `fixed` (Boost default, 128 KiB) allocator costs ~8 us per fiber
// even warm (an mmap+munmap each) and one memory mapping per live fiber, so 100000 live
// fibers exceed vm.max_map_count (65530) — capacity() says so in advance.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <latch>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <boost/fiber/algo/round_robin.hpp>
#include <boost/fiber/buffered_channel.hpp>
#include <boost/fiber/unbuffered_channel.hpp>
#include <boost/fiber/algo/shared_work.hpp>
#include <boost/fiber/algo/work_stealing.hpp>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>

// Boost.Fiber's detail/cpu_relax.hpp leaks a lower-case function-like macro, cpu_relax(),
// into every file that includes it; it breaks any later declaration of a function of that
// name (locks/abortable.hpp has one). Its only users, Boost's spinlock headers, are all
// included above (through context.hpp), so the macro can go.
#ifdef cpu_relax
#undef cpu_relax
#endif

#include "runtimes/boostfiber/scheduling.hpp"
#include "runtimes/boostfiber/stacks.hpp"
#include "runtimes/channel.hpp"
#include "runtimes/concept.hpp"
#include "runtimes/os/os_threads.hpp"

namespace coopbench {

namespace boostfiber {

// kDefaultStackKib — the default stack size (KiB), used with the pooled allocator: what a
// user who creates many fibers picks. A pooled stack costs a pool pop and the pages it
// touches (warm: ~0.8-1.4 us per fiber vs ~8 us for Boost's default 128 KiB malloc'd
// stack); 16 and 32 KiB touch the same pages, so 32 costs the same and leaves more than
// twice the headroom: every workload's tiny plan passes with 16 KiB *protected* stacks
// (stack=protected stack_kib=16; a guard page would catch an overflow; tests/boostfiber).
// Sanitizers inflate frames, hence 256 there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr std::size_t kDefaultStackKib = 256;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr std::size_t kDefaultStackKib = 256;
#else
inline constexpr std::size_t kDefaultStackKib = 32;
#endif
#else
inline constexpr std::size_t kDefaultStackKib = 32;
#endif

// Algorithm — Boost.Fiber's scheduling algorithm of a run.
enum class Algorithm { round_robin, shared_work, work_stealing };

// parse_algorithm — "round_robin" | "shared_work" | "work_stealing".
inline Algorithm parse_algorithm(const std::string& s) {
    if (s == "round_robin") return Algorithm::round_robin;
    if (s == "shared_work") return Algorithm::shared_work;
    if (s == "work_stealing") return Algorithm::work_stealing;
    throw std::invalid_argument("boostfiber: unknown algorithm '" + s +
                                "' (round_robin, shared_work, work_stealing)");
}

// Idle — what an idle worker thread of shared_work or work_stealing does (option idle).
enum class Idle { automatic, sleep, spin };

// parse_idle — "auto" | "sleep" | "spin".
inline Idle parse_idle(const std::string& s) {
    if (s == "auto") return Idle::automatic;
    if (s == "sleep") return Idle::sleep;
    if (s == "spin") return Idle::spin;
    throw std::invalid_argument("boostfiber: unknown idle '" + s + "' (auto, sleep, spin)");
}

// spins — whether a run's idle workers poll: idle=spin, or idle=auto with each of the P
// threads on a CPU of its own (`cpus`: the CPUs the run may use). Oversubscribed, a polling
// thread would hold a CPU that a thread with ready fibers is waiting for, so auto sleeps.
inline bool spins(Idle idle, unsigned processors, std::size_t cpus) {
    return idle == Idle::spin || (idle == Idle::automatic && processors <= cpus);
}

// Config — a run's effective configuration, from RuntimeOptions.
struct Config {
    Algorithm algorithm = Algorithm::work_stealing;
    StackKind stack = StackKind::pooled;
    std::size_t stack_bytes = kDefaultStackKib * 1024;
    unsigned processors = 1;
    bool pin = false;
    bool generic_channel = false;  // option channel: boost (Boost's own channels) | generic (parse_channel)
    Idle idle = Idle::automatic;   // option idle: auto | sleep (suspend=true, Waking) | spin (Boost's suspend=false)

    // from — parse the options; throws std::invalid_argument on a bad value.
    static Config from(const RuntimeOptions& o) {
        Config c;
        c.algorithm = parse_algorithm(o.option("algorithm", "work_stealing"));
        c.stack = parse_stack_kind(o.option("stack", "pooled"));
        const std::string kib = o.option("stack_kib", "");
        if (o.stack_size != 0) {
            c.stack_bytes = o.stack_size;
        } else if (!kib.empty()) {
            std::size_t used = 0;
            const unsigned long long v = std::stoull(kib, &used);
            if (used != kib.size() || v == 0) throw std::invalid_argument("boostfiber: bad stack_kib '" + kib + "'");
            c.stack_bytes = static_cast<std::size_t>(v) * 1024;
        }
        if (c.stack_bytes < boost::context::stack_traits::minimum_size())
            c.stack_bytes = boost::context::stack_traits::minimum_size();
        c.idle = parse_idle(o.option("idle", "auto"));
        c.processors = o.processors == 0 ? 1 : o.processors;
        c.pin = o.pin;
        return c;
    }
};

// parse_channel — the option channel: false for "boost" (the default), true for "generic";
// throws std::invalid_argument otherwise. Parsed by the Runtime's constructor, on the
// calling thread, not by Config::from: capacity() may run Config::from inside a fiber
// (a workload's program may size its groups there), whose stack may be Boost's minimum (tests/boostfiber's minimum protected stacks), so its frame
// gains no strings for an option capacity() does not need.
inline bool parse_channel(const RuntimeOptions& o) {
    const std::string channel = o.option("channel", "boost");
    if (channel != "boost" && channel != "generic")
        throw std::invalid_argument("boostfiber: unknown channel '" + channel + "' (boost, generic)");
    return channel == "generic";
}

// read_meminfo_kib — a /proc/meminfo field in KiB, or -1.
inline long long read_meminfo_kib(const std::string& field) {
    std::ifstream in("/proc/meminfo");
    std::string key;
    long long v;
    std::string unit;
    while (in >> key >> v) {
        std::getline(in, unit);
        if (key == field + ":") return v;
    }
    return -1;
}

}  // namespace boostfiber

// BoostFiberBackend — the backend type (see the top of this file); registered as three
// variants in register.cpp.
struct BoostFiberBackend {
    static constexpr std::string_view name = "boostfiber";

    // min_stack_size — Boost.Context's minimum: the harness refuses a smaller --stack-size
    // (harness/registry.hpp) instead of Config::from raising it silently.
    static std::size_t min_stack_size() { return boost::context::stack_traits::minimum_size(); }

    // stacks — the running Runtime's stack source (null outside a run: Boost's default).
    static inline std::shared_ptr<boostfiber::StackSource> stacks;

    // Thread — a joinable fiber; joins on destruction and before being assigned over.
    class Thread {
      public:
        Thread() = default;
        explicit Thread(boost::fibers::fiber f) : f_(std::move(f)) {}
        Thread(Thread&&) noexcept = default;
        Thread& operator=(Thread&& o) noexcept {
            if (this != &o) {
                join();
                f_ = std::move(o.f_);
            }
            return *this;
        }
        ~Thread() { join(); }
        void join() {
            if (f_.joinable()) f_.join();
        }

      private:
        boost::fibers::fiber f_;
    };

    // spawn — a fiber running fn, queued (launch::post) on the calling thread's scheduler.
    template <class F>
    static Thread spawn(F&& fn) {
        try {
            if (stacks)
                return Thread(boost::fibers::fiber(boost::fibers::launch::post, std::allocator_arg,
                                                   boostfiber::StackHandle(stacks), std::forward<F>(fn)));
            return Thread(boost::fibers::fiber(boost::fibers::launch::post, std::forward<F>(fn)));
        } catch (const std::bad_alloc&) {
            throw SpawnError("boost::fibers::fiber: out of memory for a stack");
        } catch (const std::system_error& e) {
            throw SpawnError(std::string("boost::fibers::fiber: ") + e.what());
        }
    }

    // yield — boost::this_fiber::yield(): the caller goes to the back of the ready queue.
    static void yield() { boost::this_fiber::yield(); }

    // Mutex — boost::fibers::mutex (a waiting fiber is suspended, its thread runs others).
    class Mutex {
      public:
        void lock() { m_.lock(); }
        bool try_lock() { return m_.try_lock(); }
        void unlock() { m_.unlock(); }
        boost::fibers::mutex& native() { return m_; }

      private:
        boost::fibers::mutex m_;
    };

    // CondVar — boost::fibers::condition_variable over Mutex; wait() returns with m held.
    class CondVar {
      public:
        void wait(Mutex& m) {
            std::unique_lock<boost::fibers::mutex> lk(m.native(), std::adopt_lock);
            c_.wait(lk);
            lk.release();  // the caller still holds m
        }
        void notify_one() { c_.notify_one(); }
        void notify_all() { c_.notify_all(); }

      private:
        boost::fibers::condition_variable c_;
    };

    // Semaphore — a counter under a fiber mutex; acquire waits on a fiber condition variable
    // while the count is zero (the predicate is re-checked under the mutex: no lost wake-up).
    class Semaphore {
      public:
        explicit Semaphore(std::ptrdiff_t initial) : count_(initial) {}
        void acquire() {
            std::unique_lock<boost::fibers::mutex> lk(m_);
            c_.wait(lk, [this] { return count_ > 0; });
            --count_;
        }
        void release() {
            {
                std::lock_guard<boost::fibers::mutex> g(m_);
                ++count_;
            }
            c_.notify_one();
        }

      private:
        boost::fibers::mutex m_;
        boost::fibers::condition_variable c_;
        std::ptrdiff_t count_;
    };

    // Channel — Boost.Fiber's own channels behind the concept's Channel (Go's semantics).
    // A channel its program never closes (the workloads', made with NeverClosed: a Boost.Fiber
    // user who never closes picks these, Boost's docs "Channels"):
    //   C = 0: unbuffered_channel, Boost's rendezvous;
    //   C >= 1: buffered_channel(2^k), whose ring keeps one slot empty and so holds 2^k - 1
    //     values (its size must be a power of two >= 2): 2^k - 1 is C when C + 1 is a power of
    //     two, else the nearest such capacity to C, the larger on a tie (buffered_capacity:
    //     C = 10 holds 7, C = 64 holds 63, C = 2 holds 3). The rows that ran with another
    //     capacity than C say so (context.json's backend.<name>.channel, the channel table's
    //     caption).
    //   close() throws ChannelClosed: in Boost 1.74 unbuffered_channel::close() wakes a
    //     producer parked with its value but leaves that producer's slot (on its stack) in
    //     the channel; the producer returns "closed", and a later or concurrently woken pop()
    //     takes the dangling slot and schedules the dead context (a SIGSEGV in
    //     tests/apps/test_channels.cpp's CloseWakesEveryBlockedSender).
    // A channel that may be closed (Channel(C), the concept's tests): buffered_channel(C + 1)
    // when that holds exactly C, else GenericChannel (runtimes/channel.hpp: one fiber mutex,
    // condition variables), C = 0 included; rounding would change what a closing program sees.
    // The backend option channel=generic makes every channel the generic one (to compare).
    // Close: Boost's push on a closed channel returns channel_op_status::closed (send throws
    // ChannelClosed), pop drains a buffered channel and then returns closed (recv: nullopt),
    // close() wakes every waiter. Boost's close is idempotent, so a flag makes the second
    // close throw as the concept requires.
    template <class T>
    class Channel {
      public:
        static constexpr std::string_view kind =
            "Boost.Fiber's own channels: C = 0 unbuffered_channel; C >= 1 buffered_channel(2^k) holding "
            "2^k - 1 values, the nearest to C, the larger on a tie (C = 1, 3, 7, 15, 31, 63 exact; C = 2 -> 3, "
            "C = 10 -> 7, C = 64 -> 63); a channel that may be closed: buffered_channel only where it holds "
            "exactly C, else generic (fiber mutex, condition variables); --backend-opt channel=generic: generic";

        // Channel — a channel that may be closed (see above). The constructors are kept out
        // of line, so Boost's channel constructors and their error paths do not grow the
        // frame of the fiber that makes the channel (a workload's fibers make theirs), whose
        // stack may be Boost's minimum.
        [[gnu::noinline]] explicit Channel(std::size_t capacity) : capacity_(capacity) {
            if (!generic_option() && capacity > 0 && ((capacity + 1) & capacity) == 0)
                buffered_ = std::make_unique<boost::fibers::buffered_channel<T>>(capacity + 1);
            else generic_ = std::make_unique<GenericChannel<BoostFiberBackend, T>>(capacity);
            count_made();
        }
        // Channel — a channel its program never closes: Boost's own at every C (see above).
        [[gnu::noinline]] Channel(std::size_t capacity, NeverClosed) : never_closed_(true) {
            if (generic_option()) {
                generic_ = std::make_unique<GenericChannel<BoostFiberBackend, T>>(capacity);
                capacity_ = capacity;
            } else if (capacity == 0) {
                unbuffered_ = std::make_unique<boost::fibers::unbuffered_channel<T>>();
                capacity_ = 0;
            } else {
                capacity_ = buffered_capacity(capacity);
                buffered_ = std::make_unique<boost::fibers::buffered_channel<T>>(capacity_ + 1);
            }
            count_made();
        }
        Channel(const Channel&) = delete;
        Channel& operator=(const Channel&) = delete;

        void send(T v) {
            if (generic_) return generic_->send(std::move(v));
            const auto st = unbuffered_ ? unbuffered_->push(std::move(v)) : buffered_->push(std::move(v));
            if (st != boost::fibers::channel_op_status::success) throw ChannelClosed("send on closed channel");
        }

        std::optional<T> recv() {
            if (generic_) return generic_->recv();
            T v{};
            const auto st = unbuffered_ ? unbuffered_->pop(v) : buffered_->pop(v);
            if (st != boost::fibers::channel_op_status::success) return std::nullopt;
            return std::optional<T>(std::move(v));
        }

        void close() {
            if (never_closed_)
                throw ChannelClosed("close of a Boost.Fiber channel made never to be closed (Channel(C, NeverClosed))");
            if (generic_) return generic_->close();
            // relaxed: only the exchange's atomicity matters (exactly one close wins); Boost's
            // close orders everything else under its own locks.
            if (closed_.exchange(true, std::memory_order_relaxed)) throw ChannelClosed("close of closed channel");
            buffered_->close();
        }

        // implementation — which channel this is: "unbuffered_channel", "buffered_channel" or
        // "generic" (for tests and the rows' context).
        std::string_view implementation() const {
            return unbuffered_ ? "unbuffered_channel" : buffered_ ? "buffered_channel" : "generic";
        }
        // capacity — the most values it holds (0: a rendezvous); may differ from the C asked
        // for on a never-closed channel (buffered_capacity).
        std::size_t capacity() const { return capacity_; }

      private:
        // generic_option — the running Runtime's option channel=generic (false outside a run).
        static bool generic_option() { return channel_generic.load(std::memory_order_relaxed); }
        // count_made — one more channel of this implementation (Runtime::counters).
        void count_made() const {
            // relaxed: counts read after the run's threads are joined (or as a snapshot).
            channels_made[unbuffered_ ? 0 : buffered_ ? 1 : 2].fetch_add(1, std::memory_order_relaxed);
        }

        std::unique_ptr<boost::fibers::buffered_channel<T>> buffered_;
        std::unique_ptr<boost::fibers::unbuffered_channel<T>> unbuffered_;
        std::unique_ptr<GenericChannel<BoostFiberBackend, T>> generic_;
        std::size_t capacity_ = 0;
        bool never_closed_ = false;
        std::atomic<bool> closed_{false};  // Boost's channels only: a close happened
    };

    // buffered_capacity — the capacity 2^k - 1 (k >= 1) of a buffered_channel nearest to c
    // (>= 1), the larger on a tie: what a never-closed channel of capacity c holds.
    static constexpr std::size_t buffered_capacity(std::size_t c) {
        std::size_t lo = 1;  // 2^k - 1 <= c, the largest such
        while (2 * lo + 1 <= c) lo = 2 * lo + 1;
        if (lo == c) return c;
        const std::size_t hi = 2 * lo + 1;
        return c - lo < hi - c ? lo : hi;
    }

    // channel_generic — the running Runtime's option channel=generic, read by Channel's
    // constructors. Relaxed: it is written before the Runtime starts its workers (whose start
    // orders it before every fiber) and reset after they are joined.
    static inline std::atomic<bool> channel_generic{false};
    // channels_made — channels made in this process: unbuffered_channel, buffered_channel,
    // generic (Runtime::counters: each run's rows say which channels it used).
    static inline std::array<std::atomic<std::uint64_t>, 3> channels_made{};

    // work_stealing_used — set by the first work_stealing Runtime of the process (boostorg/fiber#217).
    static inline std::atomic<bool> work_stealing_used{false};

    // Runtime — P worker threads sharing one Boost.Fiber scheduling algorithm (see the top).
    class Runtime {
      public:
        // Runtime — validate the options; throws std::invalid_argument on a bad option and
        // std::runtime_error for round_robin with P > 1 or a second work_stealing runtime.
        explicit Runtime(const RuntimeOptions& o) : cfg_(boostfiber::Config::from(o)) {
            using boostfiber::Algorithm;
            cfg_.generic_channel = boostfiber::parse_channel(o);
            if (cfg_.algorithm == Algorithm::round_robin && cfg_.processors != 1)
                throw std::runtime_error("boostfiber/round_robin schedules the fibers of one thread only: it runs with "
                                         "processors=1 (got " + std::to_string(cfg_.processors) + ")");
            if (cfg_.algorithm == Algorithm::work_stealing && work_stealing_used.exchange(true))
                throw std::runtime_error(
                    "boostfiber/work_stealing can run once per process: Boost.Fiber's work_stealing keeps static "
                    "state (boostorg/fiber#217); run each point in its own process (--isolation process)");
            // One worker thread (P = 1): every fiber starts and ends on it, the pool unlocked.
            stacks_ = std::make_shared<boostfiber::StackSource>(cfg_.stack, cfg_.stack_bytes, cfg_.processors > 1);
        }
        Runtime(const Runtime&) = delete;
        Runtime& operator=(const Runtime&) = delete;

        // idle_spins — whether the last run()'s idle workers polled (idle=spin, or idle=auto
        // with the P threads fitting the CPUs; round_robin's one thread never waits on others).
        bool idle_spins() const { return spin_; }

        // config — the effective configuration (options parsed, defaults applied).
        const boostfiber::Config& config() const { return cfg_; }

        // counters — the channels made so far, by implementation (a run's difference joins
        // its row's counters: which channel the workload's C and the option chose).
        std::map<std::string, std::uint64_t> counters() const {
            return {{"channels_unbuffered_channel", channels_made[0].load(std::memory_order_relaxed)},
                    {"channels_buffered_channel", channels_made[1].load(std::memory_order_relaxed)},
                    {"channels_generic", channels_made[2].load(std::memory_order_relaxed)}};
        }

        // run — main as a fiber on worker 0 of P; returns when main has returned (its
        // exception, if any, is rethrown here).
        template <class F>
        void run(F&& main) {
            const unsigned p = cfg_.processors;
            const std::vector<int> cpus = os::choose_cpus(p);
            boostfiber::Peers peers(p);
            std::latch installed(p);
            bool aborted = false;  // written before count_down, read after wait: ordered by the latch
            boost::fibers::mutex stop_mutex;
            boost::fibers::condition_variable stop_cv;
            bool stop = false;
            std::exception_ptr error;
            stacks = stacks_;
            channel_generic.store(cfg_.generic_channel, std::memory_order_relaxed);
            spin_ = boostfiber::spins(cfg_.idle, p, cpus.size());

            auto worker = [&](unsigned i) {
                if (cfg_.pin)
                    os::pin_current_thread({cpus[i % cpus.size()]});
                else
                    os::pin_current_thread(cpus);
                install(peers, i);
                installed.arrive_and_wait();
                if (aborted) return;
                if (i == 0) {
                    // main runs on this thread's own context, as Boost.Fiber's examples run
                    // theirs (examples/work_sharing.cpp: the main thread's fiber, waiting on a
                    // condition variable). That context is pinned: shared_work keeps it, like
                    // the dispatcher, in its thread-local queue, which it serves only when the
                    // shared queue is empty. A main spawned as a fiber would sit in the shared
                    // queue instead and keep it from ever being empty while the workload runs,
                    // so the dispatcher, which alone releases terminated fibers (their stacks)
                    // and moves fibers readied from other threads or timers, would not run: each
                    // iteration's joined fibers would keep their stacks and the next iteration
                    // would take fresh ones (page faults; create at 3-4x Boost's own program).
                    try {
                        main();
                    } catch (...) {
                        error = std::current_exception();
                    }
                    {
                        std::lock_guard<boost::fibers::mutex> g(stop_mutex);
                        stop = true;
                    }
                    stop_cv.notify_all();
                } else {
                    std::unique_lock<boost::fibers::mutex> lk(stop_mutex);
                    stop_cv.wait(lk, [&] { return stop; });
                }
            };

            std::vector<std::thread> threads;
            threads.reserve(p);
            std::string spawn_error;
            for (unsigned i = 0; i < p; ++i) {
                try {
                    threads.emplace_back(worker, i);
                } catch (const std::system_error& e) {
                    // The started workers are released without running anything. (Boost's
                    // work_stealing constructor waits for all P threads itself: a failure
                    // here would hang it, which is why capacity() is checked first.)
                    spawn_error = e.what();
                    aborted = true;
                    installed.count_down(static_cast<std::ptrdiff_t>(p - i));
                    break;
                }
            }
            for (auto& t : threads) t.join();
            stacks = nullptr;
            channel_generic.store(false, std::memory_order_relaxed);
            if (!spawn_error.empty()) throw std::runtime_error("boostfiber: starting worker threads: " + spawn_error);
            if (error) std::rethrow_exception(error);
        }

      private:
        void install(boostfiber::Peers& peers, unsigned i) {
            using boostfiber::Algorithm;
            using boostfiber::Waking;
            namespace algo = boost::fibers::algo;
            switch (cfg_.algorithm) {
                case Algorithm::round_robin:
                    boost::fibers::use_scheduling_algorithm<algo::round_robin>();
                    break;
                case Algorithm::shared_work:
                    // idle=spin: Boost's own algorithm as its examples install it (suspend=false:
                    // an idle thread polls the shared queue, so no wake-up is needed).
                    if (spin_)
                        boost::fibers::use_scheduling_algorithm<algo::shared_work>(false);
                    else  // suspend=true: an idle thread sleeps instead of spinning (boostorg/fiber#203).
                        boost::fibers::use_scheduling_algorithm<Waking<algo::shared_work, false>>(peers, i, true);
                    break;
                case Algorithm::work_stealing:
                    if (spin_)
                        boost::fibers::use_scheduling_algorithm<algo::work_stealing>(
                            static_cast<std::uint32_t>(peers.count()), false);
                    else
                        boost::fibers::use_scheduling_algorithm<Waking<algo::work_stealing, true>>(
                            peers, i, static_cast<std::uint32_t>(peers.count()), true);
                    break;
            }
        }

        boostfiber::Config cfg_;
        bool spin_ = false;  // this run's idle workers poll (boostfiber::spins), set by run() before they start
        std::shared_ptr<boostfiber::StackSource> stacks_;
    };

    // capacity — whether `threads` live fibers fit: each started fiber touches the top pages
    // of its stack, where Boost.Fiber also keeps its control block: 12 KiB resident each
    // (skynet L=6, 1.11 million fibers alive at once on work_stealing, peaked at ~13 GB, i.e.
    // ~11.7 KiB per fiber), and at most half of MemAvailable is taken (the machine may be
    // shared; Go's capacity check takes the same half); the fixed/protected allocators cost
    // one/two memory mappings per fiber (vm.max_map_count). Both are limits of the system
    // known before the run: the reason begins "system limit: " (harness/runner.hpp,
    // kRefusalPrefix), so the point is recorded refused, not failed; a bad option stays a
    // failure.
    static std::optional<std::string> capacity(const RuntimeOptions& o, std::size_t threads) {
        boostfiber::Config c;
        try {
            c = boostfiber::Config::from(o);
        } catch (const std::exception& e) {
            return std::string(e.what());
        }
        const long long avail_kib = boostfiber::read_meminfo_kib("MemAvailable");
        const long double need_kib = static_cast<long double>(threads) * 12.0L;
        if (avail_kib > 0 && need_kib > static_cast<long double>(avail_kib) * 0.5L)
            return "system limit: " + std::to_string(threads) + " fibers need about " +
                   std::to_string(static_cast<long long>(need_kib / 1024)) + " MiB resident (12 KiB each), " +
                   "more than half of MemAvailable (" + std::to_string(avail_kib / 1024) + " MiB)";
        const bool mmap_each = c.stack == boostfiber::StackKind::protected_ ||
                               (c.stack == boostfiber::StackKind::fixed && c.stack_bytes >= (128u << 10));
        if (mmap_each) {
            std::ifstream in("/proc/sys/vm/max_map_count");
            long long maps = 0;
            const long long per = c.stack == boostfiber::StackKind::protected_ ? 2 : 1;
            if (in >> maps && static_cast<long double>(threads) * per > static_cast<long double>(maps) * 0.9L)
                return "system limit: " + std::to_string(threads) + " fibers with " +
                       (c.stack == boostfiber::StackKind::fixed ? "fixed" : "protected") + " stacks need " +
                       std::to_string(per) + " memory mapping(s) each; vm.max_map_count is " + std::to_string(maps);
        }
        return std::nullopt;
    }
};

}  // namespace coopbench
