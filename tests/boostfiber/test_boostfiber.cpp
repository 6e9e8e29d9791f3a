// Tests of the boostfiber backend: every workload on every algorithm (work_stealing in a
// child process per runtime: Boost allows one per process), the primitives under
// contention across P threads, the wake-up of sleeping schedulers (boostorg/fiber #327),
// no spinning when idle (#203), and the clear error of a second work_stealing runtime (#217).
#include <gtest/gtest.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

// boostfiber.hpp first: it includes Boost.Fiber and removes Boost's cpu_relax() macro.
#include "runtimes/boostfiber/boostfiber.hpp"
#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "tests/support/child.hpp"
#include "tests/support/grid.hpp"
#include "tests/support/watchdog.hpp"

using coopbench::BoostFiberBackend;
using B = coopbench::BoostFiberBackend;
using coopbench::test::in_child;
using coopbench::test::Watchdog;

static_assert(coopbench::Backend<BoostFiberBackend>);

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kScale = 4;  // sanitizers: smaller stress sizes
#else
constexpr int kScale = 1;
#endif

unsigned processors() { return std::max(2u, std::thread::hardware_concurrency()); }

// options — a run of `algorithm` on P threads whose idle workers sleep (idle=sleep: the
// project's Waking wrapper, whose wake-ups these tests check; with the default idle=auto a
// run that fits the CPUs would poll instead, Boost's own code).
coopbench::RuntimeOptions options(const std::string& algorithm, unsigned p) {
    coopbench::RuntimeOptions o;
    o.processors = p;
    o.extra["algorithm"] = algorithm;
    o.extra["idle"] = "sleep";
    return o;
}

// TinyCase — one runnable point: workload name, runner, context.
struct TinyCase {
    std::string name;
    coopbench::RunFn run;
    coopbench::Context ctx;
};

template <class... Ws>
void collect(std::vector<TinyCase>& out, coopbench::TypeList<Ws...>) {
    coopbench::Machine m;
    m.cores = 2;
    (
        [&] {
            // Workloads that leave this backend out (supports<B>() false) are not in the registry either.
            if constexpr (coopbench::workload_supports<Ws, B>()) {
                const auto info = Ws::info(m);
                // The tiny plan's points as written (tests/support's one grid expander), P=1
                // where a grid names no processors; the workload's defaults filled in below.
                for (const auto& pt : coopbench::test::expand_grids(info.plans.at("tiny"), 1)) {
                    TinyCase c{info.name, &coopbench::run_point<B, Ws>, {}};
                    c.ctx.params = pt.params;
                    for (const auto& ps : info.params)
                        if (!c.ctx.params.count(ps.name)) c.ctx.params[ps.name] = ps.default_value;
                    c.ctx.options.processors = pt.processors;
                    out.push_back(c);
                }
            }
        }(),
        ...);
}

std::vector<TinyCase> tiny_cases() {
    std::vector<TinyCase> v;
    collect(v, coopbench::AllWorkloads{});
    return v;
}

std::string describe(const TinyCase& c) {
    std::string s = c.name;
    for (const auto& [k, v] : c.ctx.params) s += " " + k + "=" + v;
    return s + " P=" + std::to_string(c.ctx.options.processors);
}

// run_all_tiny — every workload's tiny points on `algorithm` with P processors, and each
// once more with a fault injected (its self-check must then fail). Idle workers sleep
// (the Waking wrapper) unless `idle` says otherwise.
void run_all_tiny(const std::string& algorithm, unsigned p, const std::string& idle = "sleep") {
    auto cases = tiny_cases();
    ASSERT_FALSE(cases.empty());
    for (auto c : cases) {
        c.ctx.options.processors = p;
        c.ctx.options.extra["algorithm"] = algorithm;
        c.ctx.options.extra["idle"] = idle;
        Watchdog dog("tiny point", 60);
        auto o = c.run(c.ctx);
        EXPECT_TRUE(o.ok) << describe(c) << ": " << o.reason;
        c.ctx.inject_fault = true;
        auto f = c.run(c.ctx);
        EXPECT_FALSE(f.ok) << describe(c) << ": an injected fault went unnoticed";
        EXPECT_EQ(f.reason.rfind("self-check failed", 0), 0u) << describe(c) << ": not the self-check: " << f.reason;
    }
}

// --- stress bodies, written once, run on every algorithm -----------------------------

// mutex_stress — fibers increment a plain counter under B::Mutex, yielding inside the
// critical section; `inside` catches two holders at once. Returns "" or what went wrong.
std::string mutex_stress(const coopbench::RuntimeOptions& o) {
    const int fibers = 16, rounds = 2000 / kScale;
    std::int64_t counter = 0;
    std::atomic<int> inside{0};
    std::atomic<int> overlaps{0};
    std::atomic<int> try_ok{0};
    B::Runtime rt(o);
    rt.run([&] {
        B::Mutex m;
        std::vector<B::Thread> ts;
        for (int f = 0; f < fibers; ++f)
            ts.push_back(B::spawn([&, f] {
                for (int r = 0; r < rounds; ++r) {
                    const bool via_try = (r + f) % 7 == 0 && m.try_lock();
                    if (via_try)
                        try_ok.fetch_add(1, std::memory_order_relaxed);
                    else
                        m.lock();
                    if (inside.fetch_add(1, std::memory_order_relaxed) != 0) overlaps.fetch_add(1);
                    const std::int64_t seen = counter;
                    if (r % 3 == 0) B::yield();
                    counter = seen + 1;
                    inside.fetch_sub(1, std::memory_order_relaxed);
                    m.unlock();
                }
            }));
        for (auto& t : ts) t.join();
    });
    if (overlaps.load() != 0) return "mutual exclusion violated " + std::to_string(overlaps.load()) + " times";
    if (counter != std::int64_t{fibers} * rounds)
        return "counter " + std::to_string(counter) + " != " + std::to_string(fibers * rounds);
    if (try_ok.load() == 0) return "try_lock never succeeded";
    return "";
}

// condvar_stress — producers and consumers through a bounded buffer guarded by B::Mutex
// and two B::CondVar; every item is consumed exactly once (sum and count), none is lost
// (a lost wake-up hangs: the watchdog or the child's timeout turns that into a failure).
std::string condvar_stress(const coopbench::RuntimeOptions& o) {
    const int producers = 4, consumers = 4, items = 4000 / kScale;  // items per producer
    std::int64_t consumed_sum = 0, consumed_count = 0;
    B::Runtime rt(o);
    rt.run([&] {
        B::Mutex m;
        B::CondVar not_empty, not_full;
        std::vector<std::int64_t> buf;
        const std::size_t cap = 3;
        int producers_left = producers;
        std::vector<B::Thread> ts;
        for (int p = 0; p < producers; ++p)
            ts.push_back(B::spawn([&, p] {
                for (int i = 0; i < items; ++i) {
                    m.lock();
                    while (buf.size() == cap) not_full.wait(m);
                    buf.push_back(std::int64_t{p} * items + i + 1);
                    not_empty.notify_one();
                    m.unlock();
                }
                m.lock();
                if (--producers_left == 0) not_empty.notify_all();
                m.unlock();
            }));
        for (int c = 0; c < consumers; ++c)
            ts.push_back(B::spawn([&] {
                for (;;) {
                    m.lock();
                    while (buf.empty() && producers_left > 0) not_empty.wait(m);
                    if (buf.empty()) {
                        m.unlock();
                        return;
                    }
                    consumed_sum += buf.back();
                    ++consumed_count;
                    buf.pop_back();
                    not_full.notify_one();
                    m.unlock();
                }
            }));
        for (auto& t : ts) t.join();
    });
    const std::int64_t n = std::int64_t{producers} * items;
    if (consumed_count != n) return "consumed " + std::to_string(consumed_count) + " of " + std::to_string(n);
    if (consumed_sum != n * (n + 1) / 2) return "items duplicated or altered (sum mismatch)";
    return "";
}

// semaphore_stress — at most `permits` fibers hold the semaphore at once; all finish.
std::string semaphore_stress(const coopbench::RuntimeOptions& o) {
    const int fibers = 12, rounds = 1000 / kScale, permits = 3;
    std::atomic<int> holders{0}, max_holders{0};
    std::atomic<std::int64_t> done{0};
    B::Runtime rt(o);
    rt.run([&] {
        B::Semaphore s(permits);
        std::vector<B::Thread> ts;
        for (int f = 0; f < fibers; ++f)
            ts.push_back(B::spawn([&] {
                for (int r = 0; r < rounds; ++r) {
                    s.acquire();
                    const int h = holders.fetch_add(1) + 1;
                    int seen = max_holders.load();
                    while (h > seen && !max_holders.compare_exchange_weak(seen, h)) {
                    }
                    B::yield();
                    holders.fetch_sub(1);
                    s.release();
                    done.fetch_add(1);
                }
            }));
        for (auto& t : ts) t.join();
    });
    if (max_holders.load() > permits) return "semaphore let " + std::to_string(max_holders.load()) + " in";
    if (done.load() != std::int64_t{fibers} * rounds) return "lost acquisitions";
    return "";
}

// wakeup_rendezvous — two fibers that must run on two threads at once: each announces
// itself, then spins (never yielding) until the other has announced itself. main's
// thread runs one of them, so the other must be taken by a worker that was asleep when
// it was queued (#327). Gives up after 20 s and reports a lost wake-up.
std::string wakeup_rendezvous(const coopbench::RuntimeOptions& o) {
    std::atomic<int> arrived{0};
    std::atomic<bool> gave_up{false};
    std::thread::id ids[2];
    B::Runtime rt(o);
    rt.run([&] {
        // Let the other workers reach their idle sleep first.
        boost::this_fiber::sleep_for(std::chrono::milliseconds(50));
        std::vector<B::Thread> ts;
        for (int i = 0; i < 2; ++i)
            ts.push_back(B::spawn([&, i] {
                ids[i] = std::this_thread::get_id();
                arrived.fetch_add(1);
                const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                while (arrived.load() < 2)
                    if (std::chrono::steady_clock::now() > until) {
                        gave_up = true;
                        return;
                    }
            }));
        for (auto& t : ts) t.join();
    });
    if (gave_up) return "a sleeping scheduler was not woken: the second fiber never ran in parallel";
    if (ids[0] == ids[1]) return "both fibers ran on the same thread";
    return "";
}

// idle_cpu — while main sleeps 300 ms, the runtime's P threads must be asleep: process
// CPU time stays well below the elapsed time (a spinning worker would burn all of it).
std::string idle_cpu(const coopbench::RuntimeOptions& o) {
    double cpu = 0, wall = 0;
    auto cpu_now = [] {
        timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    B::Runtime rt(o);
    rt.run([&] {
        boost::this_fiber::sleep_for(std::chrono::milliseconds(50));  // start-up settles
        const double c0 = cpu_now();
        const auto w0 = std::chrono::steady_clock::now();
        boost::this_fiber::sleep_for(std::chrono::milliseconds(300));
        cpu = cpu_now() - c0;
        wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    });
    if (cpu > 0.25 * wall)
        return "idle runtime used " + std::to_string(cpu) + " s CPU in " + std::to_string(wall) + " s";
    return "";
}

}  // namespace

// --- round_robin and shared_work: in this process -------------------------------------

TEST(BoostFiber, RoundRobinRunsEveryWorkload) { run_all_tiny("round_robin", 1); }
TEST(BoostFiber, SharedWorkRunsEveryWorkloadP1) { run_all_tiny("shared_work", 1); }
TEST(BoostFiber, SharedWorkRunsEveryWorkloadP) { run_all_tiny("shared_work", processors()); }

TEST(BoostFiber, RoundRobinRejectsSeveralProcessors) {
    try {
        B::Runtime rt(options("round_robin", 2));
        FAIL() << "round_robin accepted processors=2";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("processors=1"), std::string::npos) << e.what();
    }
}

TEST(BoostFiber, BadOptionsAreRejected) {
    auto o = options("shared_work", 1);
    o.extra["stack"] = "huge";
    EXPECT_THROW(B::Runtime{o}, std::invalid_argument);
    o = options("fifo", 1);
    EXPECT_THROW(B::Runtime{o}, std::invalid_argument);
    o = options("shared_work", 1);
    o.extra["stack_kib"] = "12abc";
    EXPECT_THROW(B::Runtime{o}, std::invalid_argument);
    o = options("shared_work", 1);
    o.extra["idle"] = "nap";
    EXPECT_THROW(B::Runtime{o}, std::invalid_argument);
}

// idle=auto (the default): poll, as Boost's own default suspend=false does, while every one
// of the P threads has a CPU of its own; sleep when they outnumber the CPUs the run may use.
TEST(BoostFiber, IdleAutoSpinsOnlyWhileTheThreadsFitTheCpus) {
    namespace boostfiber = coopbench::boostfiber;
    using boostfiber::Idle;
    EXPECT_TRUE(boostfiber::spins(Idle::automatic, 1, 2));
    EXPECT_TRUE(boostfiber::spins(Idle::automatic, 2, 2));
    EXPECT_FALSE(boostfiber::spins(Idle::automatic, 3, 2));
    EXPECT_FALSE(boostfiber::spins(Idle::sleep, 1, 64));
    EXPECT_TRUE(boostfiber::spins(Idle::spin, 16, 2));
    EXPECT_EQ(boostfiber::Config::from(coopbench::RuntimeOptions{}).idle, Idle::automatic);
    // a run chooses by the CPUs it may use (choose_cpus gives all of them for a P beyond the
    // machine): polling while P fits them, sleeping beyond
    const auto cpus = static_cast<unsigned>(coopbench::os::choose_cpus(std::thread::hardware_concurrency() + 1).size());
    for (unsigned p : {cpus, cpus + 1}) {
        coopbench::RuntimeOptions o;
        o.processors = p;
        o.extra = {{"algorithm", "shared_work"}};
        Watchdog dog("idle=auto", 60);
        B::Runtime rt(o);
        std::atomic<int> ran{0};  // the fibers may run on any of the P threads
        rt.run([&] {
            std::vector<boost::fibers::fiber> fs;
            for (int i = 0; i < 50; ++i) fs.emplace_back([&ran] { ran.fetch_add(1, std::memory_order_relaxed); });
            for (auto& f : fs) f.join();
        });
        EXPECT_EQ(ran.load(), 50);
        EXPECT_EQ(rt.idle_spins(), p <= cpus) << "P=" << p << " on " << cpus << " CPUs";
    }
}

// idle=spin: Boost's own shared_work(suspend=false), as its examples install it: every
// workload's tiny points pass at P threads (no wake-up needed: idle threads poll).
TEST(BoostFiber, SharedWorkSpinningRunsEveryWorkloadP) {
    auto cases = tiny_cases();
    ASSERT_FALSE(cases.empty());
    for (auto c : cases) {
        c.ctx.options.processors = processors();
        c.ctx.options.extra = {{"algorithm", "shared_work"}, {"idle", "spin"}};
        Watchdog dog("idle=spin tiny point", 60);
        auto o = c.run(c.ctx);
        EXPECT_TRUE(o.ok) << describe(c) << ": " << o.reason;
    }
}

TEST(BoostFiber, EveryStackAllocatorWorks) {
    for (const char* kind : {"pooled", "fixed", "protected"}) {
        auto o = options("shared_work", processors());
        o.extra["stack"] = kind;
        o.extra["stack_kib"] = "64";
        coopbench::Context ctx;
        ctx.options = o;
        ctx.params = {{"N", "200"}};
        Watchdog dog("stack allocator", 60);
        auto r = coopbench::run_point<B, coopbench::Create>(ctx);
        EXPECT_TRUE(r.ok) << kind << ": " << r.reason;
    }
}

// The default stack size's headroom (kDefaultStackKib = 32): every workload still passes
// on a 16 KiB stack with a guard page below it, which turns an overflow into a crash
// instead of silent corruption. Not Boost's minimum: boost::context::stack_traits::
// minimum_size() is MINSIGSTKSZ, which differs between machines (8 KiB on some, where
// City's channel program, whose run_via frame alone is about 6 KiB, does not fit).
// Sanitizer builds inflate frames: skipped there.
TEST(BoostFiber, EveryWorkloadFitsInSmallProtectedStacks) {
    if (kScale != 1) GTEST_SKIP() << "sanitizer build: frames are larger";
    constexpr std::size_t kSmallKib = 16;
    const std::size_t kib = std::max(kSmallKib, boost::context::stack_traits::minimum_size() / 1024);
    for (auto c : tiny_cases()) {
        c.ctx.options.processors = processors();
        c.ctx.options.extra = {{"algorithm", "shared_work"}, {"stack", "protected"}, {"stack_kib", std::to_string(kib)}};
        Watchdog dog("minimum stacks", 60);
        auto o = c.run(c.ctx);
        EXPECT_TRUE(o.ok) << describe(c) << ": " << o.reason;
    }
}

TEST(BoostFiber, CapacityRefusesTooManyFibers) {
    auto o = options("shared_work", 1);
    EXPECT_FALSE(B::capacity(o, 1000).has_value());
    auto why = B::capacity(o, std::size_t{1} << 40);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find("MemAvailable"), std::string::npos) << *why;
}

TEST(BoostFiber, ExceptionInMainIsRethrown) {
    B::Runtime rt(options("shared_work", 2));
    EXPECT_THROW(rt.run([] { throw std::logic_error("from main"); }), std::logic_error);
}

namespace {

// live_stacks_peak — `rounds` times: spawn n empty fibers, join them all (as create does); the
// most fiber stacks that were handed out and not yet given back, seen after each round.
// A fiber's stack comes back when Boost's dispatcher releases the terminated fiber (joining
// does not free it), and the dispatcher runs only when the ready queue has nothing else.
long long live_stacks_peak(const coopbench::RuntimeOptions& o, int rounds, int n) {
    long long peak = 0;
    B::Runtime rt(o);
    rt.run([&] {
        for (int r = 0; r < rounds; ++r) {
            std::vector<B::Thread> ts;
            ts.reserve(static_cast<std::size_t>(n));
            for (int i = 0; i < n; ++i) ts.push_back(B::spawn([] {}));
            for (auto& t : ts) t.join();
            peak = std::max(peak, B::stacks->live());
        }
    });
    return peak;
}

}  // namespace

// The workload's main runs where Boost.Fiber's examples run it, on the thread's own (pinned)
// context: shared_work serves pinned contexts, the dispatcher's included, only when its shared
// queue is empty, so a main that were a fiber of that queue would keep the dispatcher from
// ever running during the workload; every fiber joined in one iteration would keep its stack
// into the next (each iteration on fresh, page-faulting stacks: create at 3-4x Boost's own).
TEST(BoostFiber, JoinedFibersGiveTheirStacksBackBetweenRounds) {
    constexpr int kRounds = 5, kN = 200;
    Watchdog dog("stacks given back", 60);
    for (const auto& [algo, p] : {std::pair<std::string, unsigned>{"round_robin", 1}, {"shared_work", 1},
                                  {"shared_work", processors()}}) {
        const long long peak = live_stacks_peak(options(algo, p), kRounds, kN);
        EXPECT_LT(peak, 2 * kN) << algo << " P=" << p << ": " << peak << " stacks still held after " << kRounds
                                << " rounds of " << kN << " joined fibers";
    }
}

TEST(BoostFiber, MutexStress) {
    Watchdog dog("mutex stress", 120);
    EXPECT_EQ(mutex_stress(options("round_robin", 1)), "");
    EXPECT_EQ(mutex_stress(options("shared_work", processors())), "");
}

TEST(BoostFiber, CondVarStress) {
    Watchdog dog("condvar stress", 120);
    EXPECT_EQ(condvar_stress(options("round_robin", 1)), "");
    EXPECT_EQ(condvar_stress(options("shared_work", processors())), "");
}

TEST(BoostFiber, SemaphoreStress) {
    Watchdog dog("semaphore stress", 120);
    EXPECT_EQ(semaphore_stress(options("round_robin", 1)), "");
    EXPECT_EQ(semaphore_stress(options("shared_work", processors())), "");
}

TEST(BoostFiber, SharedWorkWakesSleepingWorker) {
    Watchdog dog("wake-up", 60);
    EXPECT_EQ(wakeup_rendezvous(options("shared_work", 2)), "");
}

TEST(BoostFiber, SharedWorkIdleDoesNotSpin) { EXPECT_EQ(idle_cpu(options("shared_work", processors())), ""); }

// --- work_stealing: one runtime per child process --------------------------------------

TEST(BoostFiberWorkStealing, RunsEveryWorkload) {
    for (auto c : tiny_cases()) {
        for (bool fault : {false, true}) {
            c.ctx.options.processors = processors();
            c.ctx.options.extra["algorithm"] = "work_stealing";
            c.ctx.inject_fault = fault;
            const std::string r = in_child([&] {
                auto o = c.run(c.ctx);
                return o.ok ? std::string() : "failed: " + o.reason;
            });
            // A detected fault is the workload's own self-check failing, nothing else: a
            // crash, a hang or any other failure of the faulty run is a test failure too.
            if (fault)
                EXPECT_EQ(r.rfind("failed: self-check failed", 0), 0u)
                    << describe(c) << ": the injected fault was not reported by the self-check: '" << r << "'";
            else
                EXPECT_EQ(r, "") << describe(c);
        }
    }
}

TEST(BoostFiberWorkStealing, SecondRuntimeFailsClearly) {
    const std::string r = in_child([] {
        {
            B::Runtime first(options("work_stealing", 2));
            bool ran = false;
            first.run([&] { ran = true; });
            if (!ran) return std::string("first runtime did not run main");
        }
        try {
            B::Runtime second(options("work_stealing", 2));
            return std::string("a second work_stealing runtime was accepted");
        } catch (const std::runtime_error& e) {
            const std::string what = e.what();
            if (what.find("once per process") == std::string::npos || what.find("217") == std::string::npos)
                return "unclear message: " + what;
        }
        // Other algorithms still work in the same process.
        B::Runtime other(options("shared_work", 2));
        bool ran = false;
        other.run([&] { ran = true; });
        return ran ? std::string() : std::string("shared_work after work_stealing did not run");
    });
    EXPECT_EQ(r, "");
}

TEST(BoostFiberWorkStealing, MutexStress) {
    EXPECT_EQ(in_child([] { return mutex_stress(options("work_stealing", processors())); }), "");
}
TEST(BoostFiberWorkStealing, CondVarStress) {
    EXPECT_EQ(in_child([] { return condvar_stress(options("work_stealing", processors())); }), "");
}
TEST(BoostFiberWorkStealing, SemaphoreStress) {
    EXPECT_EQ(in_child([] { return semaphore_stress(options("work_stealing", processors())); }), "");
}
TEST(BoostFiberWorkStealing, WakesSleepingWorker) {
    EXPECT_EQ(in_child([] { return wakeup_rendezvous(options("work_stealing", 2)); }, 60), "");
}
TEST(BoostFiberWorkStealing, IdleDoesNotSpin) {
    EXPECT_EQ(in_child([] { return idle_cpu(options("work_stealing", processors())); }), "");
}

// --- channels: Boost.Fiber's own where the program never closes them -------------------

TEST(BoostFiberChannel, BufferedCapacityIsTheNearestBoostAllows) {
    // buffered_channel(2^k) holds 2^k - 1; the nearest to C, the larger on a tie.
    static_assert(B::buffered_capacity(1) == 1 && B::buffered_capacity(3) == 3 && B::buffered_capacity(63) == 63);
    const std::vector<std::pair<std::size_t, std::size_t>> want = {
        {1, 1}, {2, 3}, {3, 3}, {4, 3}, {5, 7}, {6, 7}, {7, 7}, {10, 7}, {11, 15}, {12, 15}, {15, 15}, {64, 63}, {100, 127}};
    for (auto [c, held] : want) EXPECT_EQ(B::buffered_capacity(c), held) << "C=" << c;
}

namespace {

// ChannelSeen — what a channel turned out to be, and how many sends completed before any
// receive (on round_robin, P=1: deterministic) — its real capacity.
struct ChannelSeen {
    std::string implementation;
    std::size_t capacity = 0;
    std::size_t sends_before_receive = 0;
    std::string error;
};

// probe_channel — makes a channel of capacity c (never closed or closable) in a round_robin
// run with `channel` as the option, lets a sender fill it while the main fiber yields, then
// receives everything and checks the order.
ChannelSeen probe_channel(std::size_t c, bool never_closed, const std::string& channel) {
    ChannelSeen seen;
    auto o = options("round_robin", 1);
    if (!channel.empty()) o.extra["channel"] = channel;
    B::Runtime rt(o);
    rt.run([&] {
        using Chan = B::Channel<long>;
        std::unique_ptr<Chan> ch(never_closed ? new Chan(coopbench::apps::never_closed_channel<Chan>(c)) : new Chan(c));
        seen.implementation = std::string(ch->implementation());
        seen.capacity = ch->capacity();
        const long n = static_cast<long>(c) + 20;
        std::size_t sent = 0;
        B::Thread sender = B::spawn([&] {
            for (long i = 0; i < n; ++i) {
                ch->send(i);
                ++sent;
            }
        });
        for (int i = 0; i < 50; ++i) B::yield();  // the sender runs until the channel is full
        seen.sends_before_receive = sent;
        for (long i = 0; i < n; ++i) {
            const std::optional<long> v = ch->recv();
            if (!v || *v != i) {
                seen.error = "recv " + std::to_string(i) + " got " + (v ? std::to_string(*v) : std::string("nothing"));
                break;
            }
        }
        sender.join();
    });
    return seen;
}

}  // namespace

TEST(BoostFiberChannel, NeverClosedChannelsAreBoostsOwnAtTheNearestCapacity) {
    Watchdog dog("never-closed channels", 60);
    struct Want {
        std::size_t c;
        const char* implementation;
        std::size_t held;
    };
    for (const Want& w : {Want{0, "unbuffered_channel", 0}, Want{1, "buffered_channel", 1}, Want{7, "buffered_channel", 7},
                          Want{10, "buffered_channel", 7}, Want{64, "buffered_channel", 63}}) {
        const ChannelSeen s = probe_channel(w.c, /*never_closed=*/true, "");
        EXPECT_EQ(s.implementation, w.implementation) << "C=" << w.c;
        EXPECT_EQ(s.capacity, w.held) << "C=" << w.c;
        EXPECT_EQ(s.sends_before_receive, w.held) << "C=" << w.c << ": the channel did not hold what it says";
        EXPECT_EQ(s.error, "") << "C=" << w.c;
    }
}

TEST(BoostFiberChannel, GenericOptionKeepsTheGenericChannelAtExactlyC) {
    Watchdog dog("generic channels", 60);
    for (std::size_t c : {0u, 1u, 10u}) {
        const ChannelSeen s = probe_channel(c, /*never_closed=*/true, "generic");
        EXPECT_EQ(s.implementation, "generic") << "C=" << c;
        EXPECT_EQ(s.capacity, c);
        EXPECT_EQ(s.sends_before_receive, c) << "C=" << c;
        EXPECT_EQ(s.error, "") << "C=" << c;
    }
    auto o = options("round_robin", 1);
    o.extra["channel"] = "boost-ish";
    EXPECT_THROW(B::Runtime{o}, std::invalid_argument);
}

TEST(BoostFiberChannel, ClosableChannelsAreExactAndClose) {
    Watchdog dog("closable channels", 60);
    // A channel that may be closed: buffered_channel only where it holds exactly C.
    for (auto [c, impl] : {std::pair<std::size_t, const char*>{0, "generic"}, {7, "buffered_channel"}, {10, "generic"}}) {
        const ChannelSeen s = probe_channel(c, /*never_closed=*/false, "");
        EXPECT_EQ(s.implementation, impl) << "C=" << c;
        EXPECT_EQ(s.sends_before_receive, c) << "C=" << c;
        EXPECT_EQ(s.error, "") << "C=" << c;
    }
    B::Runtime rt(options("round_robin", 1));
    rt.run([] {
        B::Channel<long> closable(7);
        closable.close();
        EXPECT_THROW(closable.send(1), coopbench::ChannelClosed);
        EXPECT_THROW(closable.close(), coopbench::ChannelClosed);
        B::Channel<long> never(0, coopbench::NeverClosed{});
        EXPECT_THROW(never.close(), coopbench::ChannelClosed);  // Boost 1.74's unbuffered close is unsafe
    });
}

TEST(BoostFiberChannel, WorkloadsUseBoostsChannelsUnlessGenericIsAsked) {
    // The `channel` and `producer via=channel` workloads' rows count the channels they made
    // by implementation (Runtime::counters): Boost's own by default, the generic one with
    // channel=generic; both pass their self-checks on P threads.
    Watchdog dog("workload channels", 120);
    int seen = 0;
    for (auto c : tiny_cases()) {
        const bool channel = c.name == "channel";
        const bool producer = c.name == "producer" && c.ctx.params["via"] == "channel";
        if (!channel && !producer) continue;
        ++seen;
        const std::size_t cap = std::stoul(c.ctx.params.at("C"));
        c.ctx.options.processors = processors();
        c.ctx.options.extra["algorithm"] = "shared_work";
        for (const std::string opt : {"boost", "generic"}) {
            c.ctx.options.extra["channel"] = opt;
            const auto o = c.run(c.ctx);
            ASSERT_TRUE(o.ok) << describe(c) << " channel=" << opt << ": " << o.reason;
            const double unbuffered = o.counters.at("channels_unbuffered_channel");
            const double buffered = o.counters.at("channels_buffered_channel");
            const double generic = o.counters.at("channels_generic");
            if (opt == "generic") {
                EXPECT_EQ(unbuffered + buffered, 0) << describe(c);
                EXPECT_GT(generic, 0) << describe(c);
            } else {
                EXPECT_EQ(generic, 0) << describe(c) << ": a workload's channel fell back to the generic one";
                EXPECT_GT(cap == 0 ? unbuffered : buffered, 0) << describe(c);
                EXPECT_EQ(cap == 0 ? buffered : unbuffered, 0) << describe(c);
            }
        }
    }
    EXPECT_GT(seen, 0) << "no channel or producer via=channel point in the tiny plans";
}
