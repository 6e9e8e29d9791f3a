// eratosthenes.hpp — the concurrent prime sieve (Negele et al. 2017, section 5 and
// Table 1; paper: N = 10000).
//
// A generator thread feeds 2..N, then the terminator 0, into a channel. A sieve stage reads
// its input channel: the first number it gets is a prime p (every smaller prime's stage has
// removed its multiples); the stage records p, creates its output channel, spawns the next
// stage on it, and passes on every following number not divisible by p, then the
// terminator, and joins the stage it spawned. So each prime found starts a new filter
// thread, and the pipeline grows to pi(N) stages. Channels have capacity C (a parameter; 1
// as in the classic program): with via=monitor (the paper's program) BoundedBuffers (a
// B::Mutex and two B::CondVars), with via=channel the backend's channels
// (workloads/apps/via.hpp). Both variants end the pipeline with the terminator 0 (a channel
// is never closed), so they are the same computation. Value: ms from before the first spawn to
// after the last join. Self-check: the number and the sum of the primes found equal a
// sequential sieve's (1229 primes for N = 10000).
//
// Ownership: a stage owns its output channel and the thread it spawned, and joins that
// thread before its channel goes out of scope. If the backend refuses a stage's thread,
// the stage records the error and keeps draining its input until the terminator, so the
// stages before it and the generator still finish (the point then fails).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/apps/via.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
// sequential_primes — the primes in 2..n by the sequential sieve (the reference).
inline std::vector<std::int64_t> sequential_primes(std::int64_t n) {
    std::vector<std::int64_t> primes;
    if (n < 2) return primes;
    std::vector<bool> composite(static_cast<std::size_t>(n) + 1, false);
    for (std::int64_t i = 2; i <= n; ++i) {
        if (composite[static_cast<std::size_t>(i)]) continue;
        primes.push_back(i);
        for (std::int64_t j = i * i; j <= n; j += i) composite[static_cast<std::size_t>(j)] = true;
    }
    return primes;
}
}  // namespace detail

// Eratosthenes — the concurrent prime sieve workload (see the file comment).
struct Eratosthenes {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "eratosthenes";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "concurrent prime sieve up to N: one filter thread per prime, chained by channels "
                        "of capacity C";
        w.unit = "ms";
        w.params = {{"N", "10000", "sieve the numbers 2..N"},
                    {"C", "1", "capacity of each channel between stages"},
                    apps::via_param()};
        const auto via = apps::both_vias();
        w.plans["tiny"] = {{{"N", values({200})}, {"C", values({1})}, {"via", via}}};
        w.plans["quick"] = {{{"N", values({2000})}, {"C", values({1})}, {"via", via}}};
        w.plans["paper"] = {{{"N", values({10000})}, {"C", values({1})}, {"via", via}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 1.8e-8 * param_number(p, "N") * param_number(p, "N"); };
        return w;
    }

    // Sieve — the state the pipeline's stages share: the channel capacity, the primes found
    // and the first spawn failure (both guarded by `mutex`).
    template <Backend B, apps::Via via>
    struct Sieve {
        using Channel = apps::Pipe<B, std::int64_t, via>;
        std::size_t capacity;
        typename B::Mutex mutex;
        std::vector<std::int64_t> primes;  // guarded by mutex
        std::string error;                 // the first spawn failure; guarded by mutex

        // record — note the prime p.
        void record(std::int64_t p) {
            mutex.lock();
            primes.push_back(p);
            mutex.unlock();
        }
        // fail — keep the first spawn failure.
        void fail(const std::string& why) {
            mutex.lock();
            if (error.empty()) error = why;
            mutex.unlock();
        }

        // stage — one filter of the pipeline, reading `in` (see the file comment).
        void stage(Channel& in) {
            const std::int64_t p = in.take();
            if (p == 0) return;  // the terminator: no prime left
            record(p);
            Channel out(capacity);
            std::optional<typename B::Thread> next;
            try {
                next.emplace(B::spawn([this, &out] { stage(out); }));
            } catch (const SpawnError& e) {
                fail(std::string(e.what()) + " at the stage of prime " + std::to_string(p));
                while (in.take() != 0) {
                }
                return;
            }
            for (std::int64_t v = in.take(); v != 0; v = in.take())
                if (v % p != 0) out.put(v);
            out.put(0);
            next->join();
        }
    };

    template <Backend B>
    static Outcome run(const Context& ctx) {
        if (apps::via_of(ctx) == apps::Via::channel) return run_via<B, apps::Via::channel>(ctx);
        return run_via<B, apps::Via::monitor>(ctx);
    }

    // run_via — the program over the variant's channels.
    template <Backend B, apps::Via via>
    static Outcome run_via(const Context& ctx) {
        const std::int64_t n = ctx.i64("N");
        const auto reference = detail::sequential_primes(n);

        Sieve<B, via> sieve;
        sieve.capacity = ctx.size("C");
        sieve.primes.reserve(reference.size());
        typename Sieve<B, via>::Channel first(sieve.capacity);

        Group<B> group(2);
        // Live at once: the generator, one stage per prime and the stage that sees the end.
        if (!group.check_capacity(ctx, reference.size() + 2)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        const bool spawned = apps::spawn_gated(group, gate, 2, [&](std::size_t i) {
            if (i == 0) {
                for (std::int64_t v = 2; v <= n; ++v) first.put(v);
                first.put(0);
            } else {
                sieve.stage(first);
            }
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        if (!sieve.error.empty()) return Outcome::failed(sieve.error);
        std::int64_t sum = 0, want_sum = 0;
        for (auto p : sieve.primes) sum += p;
        for (auto p : reference) want_sum += p;
        auto count = static_cast<std::int64_t>(sieve.primes.size());
        if (ctx.inject_fault) count += 1;
        if (auto bad = expect("primes found", count, static_cast<std::int64_t>(reference.size())))
            return Outcome::failed(*bad);
        if (auto bad = expect("sum of primes", sum, want_sum)) return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["primes"] = static_cast<double>(count);
        o.counters["threads"] = static_cast<double>(count + 2);
        return o;
    }
};

}  // namespace coopbench
