// scenarios.cpp — coop programs without a single explicit yield, compiled twice by clang++:
// with the CoopQuantum plugin (functions suffixed _implicit) and without (suffixed _plain).
// test_implicit.cpp runs them.
#include <atomic>
#include <cstdint>

#include "coop/coop.hpp"

#if defined(COOP_SCENARIO_PLAIN)
#define SCENARIO(name) name##_plain
#else
#define SCENARIO(name) name##_implicit
#endif

namespace {

// spin_until — busy-waits for the flag (relaxed loads: nothing but the loop's own check
// can switch away).
[[gnu::noinline]] long spin_until(const std::atomic<bool>& flag) {
    long spins = 0;
    while (!flag.load(std::memory_order_relaxed)) ++spins;
    return spins;
}

// burn — `n` steps of a loop the plugin checks; returns something the compiler must keep.
[[gnu::noinline]] std::uint64_t burn(std::uint64_t n) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 2862933555777941757ULL + (x >> 7) + i;
    return x;
}

// burn_uncooperative — the same loop in a function the plugin must leave alone.
[[gnu::noinline]] __attribute__((annotate("coop_uncooperative"))) std::uint64_t burn_uncooperative(std::uint64_t n) {
    std::uint64_t x = 1;
    for (std::uint64_t i = 0; i < n; ++i) x = x * 2862933555777941757ULL + (x >> 7) + i;
    return x;
}

std::atomic<std::uint64_t> g_sink{0};

}  // namespace

// busy_wait — one processor; activity A busy-waits for a flag that activity B sets. A runs
// first (spawned first; main then blocks in join). Returns A's spin count.
extern "C" long SCENARIO(coop_scenario_busy_wait)() {
    long spins = -1;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        std::atomic<bool> flag{false};
        coop::Thread a = coop::spawn([&] { spins = spin_until(flag); });
        coop::Thread b = coop::spawn([&] { flag.store(true, std::memory_order_relaxed); });
        a.join();
        b.join();
    });
    return spins;
}

// switches_during — on one processor, how often a yielding bystander ran while `work`
// ran (0: no switch happened inside it). `work(runs)` returns what it saw of `runs`.
template <class F>
static long switches_during(F work) {
    long seen = -1;
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        std::atomic<bool> stop{false};
        std::atomic<long> runs{0};
        coop::Thread other = coop::spawn([&] {
            while (!stop.load()) {
                runs.fetch_add(1);
                coop::yield();
            }
        });
        coop::yield();  // let the bystander start
        seen = work(runs);
        stop = true;
        other.join();
    });
    return seen;
}

// Each runs ~1000 quanta of checked work (2.5e6 iterations of a >= 4-instruction loop).
constexpr std::uint64_t kBurn = 2500000;

// switches_plain_loop — checked work with nothing to stop a switch: the bystander runs.
extern "C" long SCENARIO(coop_scenario_switches_plain_loop)() {
    return switches_during([](std::atomic<long>& runs) {
        const long before = runs.load();
        g_sink += burn(kBurn);
        return runs.load() - before;
    });
}

// switches_uncooperative_scope — the same work in a coop::uncooperative scope (measured
// inside it: the scope's end may switch, as it should with an exhausted quantum).
extern "C" long SCENARIO(coop_scenario_switches_uncooperative_scope)() {
    return switches_during([](std::atomic<long>& runs) {
        coop::uncooperative scope;
        const long before = runs.load();
        g_sink += burn(kBurn);
        return runs.load() - before;
    });
}

// switches_uncooperative_function — the same loop in an annotated function.
extern "C" long SCENARIO(coop_scenario_switches_uncooperative_function)() {
    return switches_during([](std::atomic<long>& runs) {
        const long before = runs.load();
        const std::uint64_t x = burn_uncooperative(kBurn);
        const long seen = runs.load() - before;
        g_sink += x;
        return seen;
    });
}
