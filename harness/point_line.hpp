// point_line.hpp — the one line a point gets in the default log (hyperfine and pyperf
// print one per benchmark): its median, run count, min and max in the workload's unit, and
// whether it ran on a busy machine or failed. Google Benchmark's console tables stay behind
// --benchmark_format=console (gbench_reporter.hpp).
#pragma once

#include <string>
#include <vector>

#include "harness/reporter.hpp"

namespace coopbench {

// PointLine — the one line a point gets in a log: the median of its measured iterations
// over its forks, their count, and their smallest and largest value (the extremes, not an
// interval), in the workload's unit, and whether a fork failed or was refused (with the
// first reason) or ran while the machine was busy. add() each fork of the point,
// then text().
class PointLine {
  public:
    void add(const ForkResult& fork);
    // add_row — one row a folder already holds (--resume: the forks measured before it, so
    // the line summarises every fork of the point, not only the ones run since).
    void add_row(const std::string& status, const std::string& phase, double value, const std::string& reason, bool noisy);
    std::string text(const std::string& unit) const;

  private:
    // number — 4 significant digits, without an exponent below 10^9 (150800, 12.35, 0.01234).
    static std::string number(double x);
    std::vector<double> values_;
    std::string reason_;
    bool refused_ = false;  // the first failed run was refused before it ran (is_refusal)
    bool noisy_ = false;
};

}  // namespace coopbench
