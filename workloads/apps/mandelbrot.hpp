// mandelbrot.hpp — the parallel Mandelbrot set (Negele et al. 2017, section 5 and
// Table 1; paper: N = 100 parts, C = 2000, K = 5000).
//
// A C x C grid of points over [-2, 1] x [-1.5, 1.5] is split into N parts of consecutive
// rows (part t gets rows [t*C/N, (t+1)*C/N)), computed by N threads, with at most K
// iterations of z <- z^2 + c per point. Each thread sums the iterations of its points in
// its own counter. Value: ms from before the first spawn to after the last join.
// Self-check: the total iteration count equals a sequential computation's (the same
// function, so the same floating-point operations; computed outside the measured region).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
// mandelbrot_rows — the iterations of the points in rows [from, to) of the c x c grid.
inline std::int64_t mandelbrot_rows(std::int64_t c, std::int64_t k, std::int64_t from, std::int64_t to) {
    std::int64_t total = 0;
    const double step = 3.0 / static_cast<double>(c);
    for (std::int64_t row = from; row < to; ++row) {
        const double ci = -1.5 + step * static_cast<double>(row);
        for (std::int64_t col = 0; col < c; ++col) {
            const double cr = -2.0 + step * static_cast<double>(col);
            double zr = 0, zi = 0;
            std::int64_t it = 0;
            while (it < k && zr * zr + zi * zi <= 4.0) {
                const double t = zr * zr - zi * zi + cr;
                zi = 2.0 * zr * zi + ci;
                zr = t;
                ++it;
            }
            total += it;
        }
    }
    return total;
}
}  // namespace detail

// Mandelbrot — the parallel Mandelbrot workload (see the file comment).
struct Mandelbrot {
    static WorkloadInfo info(const Machine&) {
        WorkloadInfo w;
        w.name = "mandelbrot";
        w.origin = "Negele et al. 2017, Table 1";
        w.description = "Mandelbrot set on a C x C grid split into N parts computed by N threads, at most "
                        "K iterations per point";
        w.unit = "ms";
        w.params = {{"N", "100", "parts (threads)"},
                    {"C", "2000", "grid points per side"},
                    {"K", "5000", "iterations per point at most"}};
        w.plans["tiny"] = {{{"N", values({10})}, {"C", values({60})}, {"K", values({200})}}};
        w.plans["quick"] = {{{"N", values({100})}, {"C", values({600})}, {"K", values({1000})}}};
        w.plans["paper"] = {{{"N", values({100})}, {"C", values({2000})}, {"K", values({5000})}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 1e-9 * param_number(p, "C") * param_number(p, "C") * param_number(p, "K"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::int64_t c = ctx.i64("C");
        const std::int64_t k = ctx.i64("K");
        std::vector<Padded<std::int64_t>> iterations(n);  // thread t writes iterations[t] only

        Group<B> group(n);
        if (!group.check_capacity(ctx, n)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        const auto parts = static_cast<std::int64_t>(n);
        const bool spawned = apps::spawn_gated(group, gate, n, [&](std::size_t t) {
            const auto part = static_cast<std::int64_t>(t);
            iterations[t].value = detail::mandelbrot_rows(c, k, part * c / parts, (part + 1) * c / parts);
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        std::int64_t total = 0;
        for (auto& i : iterations) total += i.value;
        if (ctx.inject_fault) total += 1;
        if (auto bad = expect("iterations", total, detail::mandelbrot_rows(c, k, 0, c))) return Outcome::failed(*bad);
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["iterations"] = static_cast<double>(total);
        return o;
    }
};

}  // namespace coopbench
