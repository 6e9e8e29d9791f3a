// units_workloads.hpp — Quirk's benchmarks (2008, section 9) as harness workloads, each in
// two variants that `coopbench list` and the figures name:
//
//   fib, ddb              lock-free units (units/units.hpp: OwnerQueue, futures on coop);
//                         backend `native` only (they are built on coop's activities)
//   fib-mutex, ddb-mutex  the same programs on the mutex-per-unit baseline
//                         (units/baseline.hpp: thread per message, mutex+condition futures);
//                         every backend
//
// fib (k, work): value = ms for the whole computation. Counters: cpu_s (process CPU time
// during the run; Figs. 5-6 are drawn from it: lost = cpu(P) - cpu(1), waste = cpu(P) /
// cpu(1)), messages, ns_per_message. Speedup (Fig. 4) = time(1) / time(P), drawn by
// scripts/figures/quirk_fib.py. Check: the result equals fib(k).
// ddb (rounds, hot_pct, work; 4 servers, 28 clients): value = ms. Counters: operations,
// ops_p<i> (operations run by processor i: Fig. 7), migrations_per_1e6 (units that ran on
// another processor than the time before, per 10^6 operations: Fig. 8), hot_migrations and
// hot_migrations_per_1e6 (the hot key's server), migrations_s<j> / migrations_clients (Fig.
// 9), utilisation (1 - carrier idle time / (time x P): Fig. 10), cpu_util (process CPU time /
// (time x P), for every variant). Check: every counter key's final value equals the
// increments the clients sent to it.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/workload.hpp"
#include "runtimes/native/native.hpp"
#include "workloads/common.hpp"
#include "workloads/units/programs.hpp"

namespace coopbench {

namespace unitsprog {

// cpu_seconds — CPU time of the whole process (every thread).
inline double cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// processors_upto — "1", "2", ... cores (the sweep of Figs. 4-10).
inline std::vector<std::string> processors_upto(unsigned cores) {
    std::vector<std::string> v;
    for (unsigned p = 1; p <= std::max(1u, cores); p = p < 4 ? p + 1 : p * 2) v.push_back(std::to_string(p));
    if (v.back() != std::to_string(std::max(1u, cores))) v.push_back(std::to_string(cores));
    return v;
}

template <class B>
constexpr bool is_coop() {
    return is_native_backend_v<B>;  // native, native-ws, native-parasail (typed or not)
}

inline std::vector<ParamSpec> fib_params() {
    return {{"k", "18", "fib(k) is computed", 1}, {"work", "0", "extra work per fib and plus (loop iterations)", 0}};
}
inline std::map<std::string, std::vector<Grid>> fib_plans(const Machine& m, bool baseline) {
    const auto procs = processors_upto(m.cores);
    std::map<std::string, std::vector<Grid>> plans;
    plans["tiny"] = {{{"k", values({10})}, {"work", values({0})}}};
    plans["quick"] = {{{"k", values({baseline ? 16 : 20})}, {"work", values({0, 1000})}, {"processors", procs}}};
    plans["paper"] = {{{"k", values({baseline ? 18 : 24})}, {"work", values({0, 100, 1000, 10000})}, {"processors", procs}}};
    plans["quirk"] = plans["paper"];
    return plans;
}
inline std::vector<ParamSpec> ddb_params() {
    return {{"rounds", "500", "steps per client (each: an increment, a get, sometimes a put)", 1},
            {"hot_pct", "50", "percent of increments that go to the hot key 0", 0},
            {"work", "200", "extra work per server operation (loop iterations)", 0}};
}
inline std::map<std::string, std::vector<Grid>> ddb_plans(const Machine& m, bool baseline) {
    const auto procs = processors_upto(m.cores);
    std::map<std::string, std::vector<Grid>> plans;
    plans["tiny"] = {{{"rounds", values({20})}}};
    plans["quick"] = {{{"rounds", values({baseline ? 100 : 1000})}, {"processors", procs}}};
    plans["paper"] = {{{"rounds", values({baseline ? 500 : 5000})}, {"hot_pct", values({50})}, {"processors", procs}}};
    plans["quirk"] = plans["paper"];
    return plans;
}

// info — the WorkloadInfo of a units workload (unit: ms).
inline WorkloadInfo info(std::string name, std::string origin, std::string description, std::vector<ParamSpec> params,
                         std::map<std::string, std::vector<Grid>> plans) {
    WorkloadInfo w;
    w.name = std::move(name);
    w.origin = std::move(origin);
    w.description = std::move(description);
    w.unit = "ms";
    w.params = std::move(params);
    w.plans = std::move(plans);
    return w;
}

// Timed — a run's wall-clock and process CPU seconds, and the baseline's error (if any).
struct Timed {
    double secs = 0;
    double cpu = 0;
    std::string error;
};

// timed — runs body() and times it (wall clock and process CPU).
template <class F>
Timed timed(F&& body) {
    Timed t;
    const double cpu0 = cpu_seconds();
    Stopwatch clock;
    body();
    t.secs = clock.seconds();
    t.cpu = cpu_seconds() - cpu0;
    return t;
}

// on_units — body() inside a units::Scope of `procs` processors, stopped (every message sent
// has run) before the time is taken; body(scope) may read the scope's stats.
template <class F>
Timed on_units(unsigned procs, F&& body) {
    return timed([&] {
        units::Scope scope(procs);
        body(scope);
    });
}

// on_baseline — body(sys) on the mutex-per-unit baseline of backend B (a thread per
// message), every thread joined before the time is taken; the baseline's error, if any.
template <Backend B, class F>
Timed on_baseline(F&& body) {
    std::string error;
    Timed t = timed([&] {
        units::baseline::System<B> sys;
        MutexSys<B>::system = &sys;
        body(sys);
        sys.join_all();
        error = sys.error();
        MutexSys<B>::system = nullptr;
    });
    t.error = std::move(error);
    return t;
}

inline DdbParams ddb_from(const Context& ctx) {
    DdbParams p;
    p.rounds = static_cast<long>(ctx.i64("rounds"));
    p.hot_pct = static_cast<long>(ctx.i64("hot_pct"));
    p.work = ctx.i64("work");
    return p;
}

}  // namespace unitsprog

// FibUnits — `fib` on lock-free units.
struct FibUnits {
    static WorkloadInfo info(const Machine& m) {
        return unitsprog::info("fib", "Quirk 2008, section 9, Figs. 4-6",
                               "variant units (lock-free OwnerQueue units, futures on coop): tree-recursive fib by "
                               "free operations and futures",
                               unitsprog::fib_params(), unitsprog::fib_plans(m, false));
    }
    template <Backend B>
    static constexpr bool supports() {
        return unitsprog::is_coop<B>();
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        using namespace unitsprog;
        const long k = static_cast<long>(ctx.i64("k"));
        const std::int64_t work = ctx.i64("work");
        long got = 0;
        const Timed t = on_units(ctx.options.processors, [&](units::Scope& scope) {
            got = units::wait(units::send(&fib<UnitsSys>, k, work));
            scope.stop();
        });
        if (ctx.inject_fault) got += 1;
        if (auto bad = expect("fib(" + std::to_string(k) + ")", got, fib_expected(k))) return Outcome::failed(*bad);
        return fib_outcome(t.secs, t.cpu, k);
    }
    static Outcome fib_outcome(double secs, double cpu, long k) {
        Outcome o = Outcome::measured(secs, secs * 1e3);
        const double msgs = static_cast<double>(unitsprog::fib_messages(k));
        o.counters["cpu_s"] = cpu;
        o.counters["messages"] = msgs;
        o.counters["ns_per_message"] = secs * 1e9 / msgs;
        return o;
    }
};

// FibMutex — `fib-mutex`: the same program on the mutex-per-unit baseline.
struct FibMutex {
    static WorkloadInfo info(const Machine& m) {
        return unitsprog::info("fib-mutex", "Quirk 2008, section 9, Figs. 4-6 (baseline)",
                               "variant mutex (thread per message, mutex+condition futures): the fib program of `fib`",
                               unitsprog::fib_params(), unitsprog::fib_plans(m, true));
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        using namespace unitsprog;
        const long k = static_cast<long>(ctx.i64("k"));
        const std::int64_t work = ctx.i64("work");
        const auto total = static_cast<std::size_t>(fib_messages(k));
        if (auto why = capacity_problem<B>(ctx.options, std::min<std::size_t>(total, 4096)))
            return Outcome::failed(*why);
        long got = 0;
        const Timed t = on_baseline<B>([&](auto& sys) { got = sys.send(&fib<MutexSys<B>>, k, work).get(); });
        if (!t.error.empty()) return Outcome::failed(t.error);
        if (ctx.inject_fault) got += 1;
        if (auto bad = expect("fib(" + std::to_string(k) + ")", got, fib_expected(k))) return Outcome::failed(*bad);
        return FibUnits::fib_outcome(t.secs, t.cpu, k);
    }
};

// DdbUnits — `ddb` on lock-free units.
struct DdbUnits {
    static WorkloadInfo info(const Machine& m) {
        return unitsprog::info("ddb", "Quirk 2008, section 9, Figs. 7-10",
                               "variant units (lock-free OwnerQueue units on coop): 4 server units, 28 client units, "
                               "a hot key",
                               unitsprog::ddb_params(), unitsprog::ddb_plans(m, false));
    }
    template <Backend B>
    static constexpr bool supports() {
        return unitsprog::is_coop<B>();
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        using namespace unitsprog;
        const unsigned procs = ctx.options.processors;
        Ddb<UnitsSys> db(ddb_from(ctx));
        units::Stats st;
        const Timed t = on_units(procs, [&](units::Scope& scope) {
            for (auto& f : db.start()) units::wait(f);
            scope.stop();  // every increment sent has run
            st = scope.stats();
        });
        const double secs = t.secs, cpu = t.cpu;
        if (auto bad = db.check(ctx.inject_fault); !bad.empty()) return Outcome::failed(bad);

        Outcome o = Outcome::measured(secs, secs * 1e3);
        const double ops = static_cast<double>(db.operations());
        o.counters["operations"] = ops;
        double idle = 0;
        for (std::size_t i = 0; i < st.operations_per_processor.size(); ++i) {
            o.counters["ops_p" + std::to_string(i)] = static_cast<double>(st.operations_per_processor[i]);
            idle += st.idle_seconds_per_processor[i];
        }
        std::uint64_t migr = 0, migr_clients = 0;
        for (std::size_t j = 0; j < db.servers.size(); ++j) {
            o.counters["migrations_s" + std::to_string(j)] = static_cast<double>(db.servers[j]->migrations());
            o.counters["ops_s" + std::to_string(j)] = static_cast<double>(db.servers[j]->operations());
            migr += db.servers[j]->migrations();
        }
        for (auto& c : db.clients) migr_clients += c->migrations();
        migr += migr_clients;
        o.counters["migrations_clients"] = static_cast<double>(migr_clients);
        o.counters["migrations_per_1e6"] = static_cast<double>(migr) * 1e6 / ops;
        const auto& hot = *db.servers[db.hot_server()];
        o.counters["hot_migrations"] = static_cast<double>(hot.migrations());
        o.counters["hot_migrations_per_1e6"] =
            static_cast<double>(hot.migrations()) * 1e6 / std::max(1.0, static_cast<double>(hot.operations()));
        o.counters["hot_scheduled"] = static_cast<double>(hot.scheduled());
        o.counters["utilisation"] = std::max(0.0, 1.0 - idle / (secs * procs));
        o.counters["cpu_util"] = cpu / (secs * procs);
        o.counters["ns_per_operation"] = secs * 1e9 / ops;
        return o;
    }
};

// DdbMutex — `ddb-mutex`: the same program on the mutex-per-unit baseline.
struct DdbMutex {
    static WorkloadInfo info(const Machine& m) {
        return unitsprog::info("ddb-mutex", "Quirk 2008, section 9, Figs. 7-10 (baseline)",
                               "variant mutex (thread per message, mutex per unit): the ddb program of `ddb`",
                               unitsprog::ddb_params(), unitsprog::ddb_plans(m, true));
    }
    template <Backend B>
    static Outcome run(const Context& ctx) {
        using namespace unitsprog;
        const unsigned procs = ctx.options.processors;
        if (auto why = capacity_problem<B>(ctx.options, 512)) return Outcome::failed(*why);
        Ddb<MutexSys<B>> db(ddb_from(ctx));
        const Timed t = on_baseline<B>([&](auto&) {
            for (auto& f : db.start()) f.wait();
        });
        const double secs = t.secs, cpu = t.cpu;
        if (!t.error.empty()) return Outcome::failed(t.error);
        if (auto bad = db.check(ctx.inject_fault); !bad.empty()) return Outcome::failed(bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        const double ops = static_cast<double>(db.operations());
        o.counters["operations"] = ops;
        for (std::size_t j = 0; j < db.servers.size(); ++j)
            o.counters["ops_s" + std::to_string(j)] = static_cast<double>(db.servers[j]->operations());
        o.counters["cpu_util"] = cpu / (secs * procs);
        o.counters["ns_per_operation"] = secs * 1e9 / ops;
        return o;
    }
};

}  // namespace coopbench
