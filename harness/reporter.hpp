// reporter.hpp — the interface between the sweep's loop and its outputs, as Google
// Benchmark's BenchmarkReporter: each finished fork goes to every reporter. One reporter per
// file: ResultWriter (results.hpp: results.csv and points.jsonl) and GbenchReporter
// (gbench_reporter.hpp: benchmark.json and Google Benchmark's console tables).
#pragma once

#include <string>

#include "harness/noise_guard.hpp"
#include "harness/plan.hpp"
#include "harness/runner.hpp"

namespace coopbench {

// ForkResult — what one fork of a point measured, handed to every reporter when it ends.
struct ForkResult {
    const Point* point = nullptr;
    std::string family;
    std::string unit;
    int repetition = 0;
    Measurement m;
    Noise noise;
};

// Reporter — where finished forks go (as Google Benchmark's BenchmarkReporter): the result
// files (ResultWriter) and Google Benchmark's JSON (GbenchReporter, gbench_reporter.hpp).
class Reporter {
  public:
    virtual ~Reporter() = default;
    virtual void report(const ForkResult& fork) = 0;
    virtual void finish() {}
};

}  // namespace coopbench
