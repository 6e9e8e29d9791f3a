// matrix.hpp — parallel matrix multiplication (Negele et al. 2017, section 6, Fig. 10).
//
// C = A * B for N x N matrices of doubles with deterministic contents, by the naive triple
// loop (i, j, k; not cache-optimised: B is walked down its columns), distributed over M
// threads each computing a separate block of consecutive rows of C (thread t gets rows
// [t*N/M, (t+1)*N/M)). Value: ms from before the first spawn to after the last join; Fig.
// 10 plots (a) the speedup over M = 1 and (b) this time, against M.
//
// Self-check: the entries of A and B are small integers, so every product and partial sum
// is an integer far below 2^53 and the double arithmetic is exact whatever the order. For
// the weights x_j = (j mod 7) + 1, the row checksums (C x)_i must equal the reference
// (A (B x))_i, computed single-threaded in integer arithmetic in O(N^2) (a wrong, missing
// or misplaced row shows up in its own checksum); the reported checksum is their sum.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/start.hpp"
#include "workloads/common.hpp"

namespace coopbench {

namespace detail {
// matrix_a, matrix_b — the deterministic integer contents of A and B, in [-9, 9].
inline std::int64_t matrix_a(std::int64_t i, std::int64_t k) { return (i * 31 + k * 17 + 3) % 19 - 9; }
inline std::int64_t matrix_b(std::int64_t k, std::int64_t j) { return (k * 13 + j * 29 + 7) % 19 - 9; }
inline std::int64_t matrix_weight(std::int64_t j) { return j % 7 + 1; }

// matrix_threads — M for Fig. 10, from 1 to top = 2 * cores + 3 (beyond the cores): every
// value up to 8, about 16 steps across the whole range, and cores, cores + 1 and 2 * cores
// (where the paper sees the speedup drop and recover), ascending.
inline std::vector<std::string> matrix_threads(unsigned cores) {
    const std::int64_t c = std::max<std::int64_t>(cores, 1);
    const std::int64_t top = 2 * c + 3;
    std::set<std::int64_t> ms = {c, c + 1, 2 * c, top};
    for (std::int64_t m = 1; m <= std::min<std::int64_t>(8, top); ++m) ms.insert(m);
    for (std::int64_t i = 1; i <= 16; ++i) ms.insert(std::max<std::int64_t>(1, (top * i + 8) / 16));
    std::vector<std::string> v;
    for (auto m : ms) v.push_back(std::to_string(m));
    return v;
}
}  // namespace detail

// Matrix — the matrix multiplication workload of Fig. 10 (see the file comment).
struct Matrix {
    static WorkloadInfo info(const Machine& machine) {
        WorkloadInfo w;
        w.name = "matrix";
        w.origin = "Negele et al. 2017, Fig. 10";
        w.description = "naive N x N matrix multiplication C = A * B, rows split over M threads";
        w.unit = "ms";
        w.params = {{"N", "1000", "matrix size (N x N doubles)"}, {"M", "1", "threads (each computes separate rows)"}};
        const auto ms = detail::matrix_threads(machine.cores);
        w.plans["tiny"] = {{{"N", values({48})}, {"M", values({1, 3})}}};
        // quick: N = 300 (0.42x the work of 400): a sixth of run.sh on 2 cores went to 400.
        w.plans["quick"] = {{{"N", values({300})}, {"M", ms}}};
        // The paper does not give N; 1500 takes seconds at M = 1 like its 12.5-14.7 s.
        w.plans["paper"] = {{{"N", values({1500})}, {"M", ms}}};
        // Expected seconds, roughly (from results/reference/): balances --shard.
        w.cost = [](const Params& p) { return 1e-9 * param_number(p, "N") * param_number(p, "N") * param_number(p, "N"); };
        return w;
    }

    template <Backend B>
    static Outcome run(const Context& ctx) {
        const std::size_t n = ctx.size("N");
        const std::size_t m = ctx.size("M");
        std::vector<double> a(n * n), b(n * n), c(n * n, 0.0);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                const auto si = static_cast<std::int64_t>(i), sj = static_cast<std::int64_t>(j);
                a[i * n + j] = static_cast<double>(detail::matrix_a(si, sj));
                b[i * n + j] = static_cast<double>(detail::matrix_b(si, sj));
            }

        Group<B> group(m);
        if (!group.check_capacity(ctx, m)) return Outcome::failed(group.error());
        apps::StartGate<B> gate;
        Stopwatch clock;
        const bool spawned = apps::spawn_gated(group, gate, m, [&](std::size_t t) {
            // Rows [from, to) of C are this thread's alone; join publishes them.
            const std::size_t from = t * n / m, to = (t + 1) * n / m;
            for (std::size_t i = from; i < to; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    double sum = 0;
                    for (std::size_t k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];
                    c[i * n + j] = sum;
                }
        });
        if (!spawned) return Outcome::failed(group.error());
        group.join_all();
        const double secs = clock.seconds();

        if (ctx.inject_fault && n > 0) c[(n / 2) * n + n / 3] += 1.0;
        // Reference: bx = B x, then (A bx)_i, in exact integer arithmetic.
        std::vector<std::int64_t> bx(n, 0);
        for (std::size_t k = 0; k < n; ++k)
            for (std::size_t j = 0; j < n; ++j)
                bx[k] += detail::matrix_b(static_cast<std::int64_t>(k), static_cast<std::int64_t>(j)) *
                         detail::matrix_weight(static_cast<std::int64_t>(j));
        std::int64_t checksum = 0;
        for (std::size_t i = 0; i < n; ++i) {
            std::int64_t want = 0, got = 0;
            for (std::size_t k = 0; k < n; ++k)
                want += detail::matrix_a(static_cast<std::int64_t>(i), static_cast<std::int64_t>(k)) * bx[k];
            for (std::size_t j = 0; j < n; ++j)
                got += static_cast<std::int64_t>(c[i * n + j]) * detail::matrix_weight(static_cast<std::int64_t>(j));
            if (auto bad = expect("checksum of row " + std::to_string(i), got, want)) return Outcome::failed(*bad);
            checksum += got;
        }
        Outcome o = Outcome::measured(secs, secs * 1e3);
        o.counters["checksum"] = static_cast<double>(checksum);
        return o;
    }
};

}  // namespace coopbench
