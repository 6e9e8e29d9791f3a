// bench_units.cpp — Google Benchmark (not a test): the end-to-end cost of units' hot paths
// on coop with ONE processor (Quirk 2008's scheduler, units/units.hpp):
//   SendToIdleUnit  — main sends one message to each of U idle units (each send makes the
//                     sender the owner and puts the unit on the ready queue), then waits for
//                     the last one; the carrier drains every unit. Per message: message
//                     allocation, OwnerQueue enq + count, ready-queue enqueue + semaphore
//                     release, carrier dequeue, begin_deq, the (empty) operation, resolve,
//                     end_deq, free. Target: <= 200 ns, about the
//                     cost of one coop spawn, so that a send stays cheaper than an activity.
//   SendToBusyUnit  — U messages to ONE unit per round (only the first send schedules).
//   FreeOperation   — U free operations per round.
// Run: build/release/tests/units/bench_units [--benchmark_repetitions=5]
// Instruction counts: `bench_units --idle-rounds N` runs N rounds of SendToIdleUnit without
// Google Benchmark; under valgrind --tool=callgrind the difference between two N divided by
// the messages is the instructions per message (all threads).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "units/units.hpp"

namespace {

constexpr int kU = 1024;

struct Acc {
    long n = 0;
};

template <class Body>
void in_units(benchmark::State& st, Body&& body) {
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        units::Scope scope(1);
        body();
        scope.stop();
    });
    st.counters["ns_per_msg"] =
        benchmark::Counter(static_cast<double>(st.iterations()) * kU, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
    st.counters["ns_per_msg"] = st.counters["ns_per_msg"];
}

void SendToIdleUnit(benchmark::State& st) {
    std::vector<std::unique_ptr<units::Unit<Acc>>> us;
    for (int i = 0; i < kU; ++i) us.push_back(std::make_unique<units::Unit<Acc>>());
    in_units(st, [&] {
        for (auto _ : st) {
            for (int i = 0; i < kU - 1; ++i) (void)units::send(*us[static_cast<std::size_t>(i)], [](Acc& a) { ++a.n; });
            units::wait_ready(units::send(*us[kU - 1], [](Acc& a) { ++a.n; }));
        }
    });
    long total = 0;
    for (auto& u : us) total += u->state().n;
    if (total != static_cast<long>(st.iterations()) * kU) st.SkipWithError("lost messages");
}
BENCHMARK(SendToIdleUnit)->UseRealTime()->Unit(benchmark::kMicrosecond);

void SendToBusyUnit(benchmark::State& st) {
    units::Unit<Acc> u;
    in_units(st, [&] {
        for (auto _ : st) {
            for (int i = 0; i < kU - 1; ++i) (void)units::send(u, [](Acc& a) { ++a.n; });
            units::wait_ready(units::send(u, [](Acc& a) { ++a.n; }));
        }
    });
    if (u.state().n != static_cast<long>(st.iterations()) * kU) st.SkipWithError("lost messages");
}
BENCHMARK(SendToBusyUnit)->UseRealTime()->Unit(benchmark::kMicrosecond);

void FreeOperation(benchmark::State& st) {
    in_units(st, [&] {
        for (auto _ : st) {
            for (int i = 0; i < kU - 1; ++i) (void)units::send([] {});
            units::wait_ready(units::send([] {}));
        }
    });
}
BENCHMARK(FreeOperation)->UseRealTime()->Unit(benchmark::kMicrosecond);

// idle_rounds — N rounds of SendToIdleUnit, no benchmark library (for callgrind).
int idle_rounds(long n) {
    std::vector<std::unique_ptr<units::Unit<Acc>>> us;
    for (int i = 0; i < kU; ++i) us.push_back(std::make_unique<units::Unit<Acc>>());
    coop::Runtime rt({.processors = 1});
    rt.run([&] {
        units::Scope scope(1);
        for (long r = 0; r < n; ++r) {
            for (int i = 0; i < kU - 1; ++i) (void)units::send(*us[static_cast<std::size_t>(i)], [](Acc& a) { ++a.n; });
            units::wait_ready(units::send(*us[kU - 1], [](Acc& a) { ++a.n; }));
        }
    });
    long total = 0;
    for (auto& u : us) total += u->state().n;
    std::printf("%ld messages\n", total);
    return total == n * kU ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 3 && std::string(argv[1]) == "--idle-rounds") return idle_rounds(std::stol(argv[2]));
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
