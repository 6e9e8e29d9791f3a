// reporter.hpp — the interface between the sweep's loop and its outputs, as Google
// Benchmark's BenchmarkReporter: each finished fork goes to every reporter. One reporter per
// file: ResultWriter (results.hpp: results.csv and points.jsonl) and GbenchReporter
// (gbench_reporter.hpp: benchmark.json and Google Benchmark's console tables).
#pragma once

#include <stdexcept>
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
    // report — write the fork; a write that fails (a full disk) throws WriteError after
    // leaving the reporter's files as they were before the call.
    virtual void report(const ForkResult& fork) = 0;
    // retract_last — take the last reported fork out of the files again: another reporter
    // could not write it, and a fork is in every file or in none (--resume measures it again).
    virtual void retract_last() {}
    virtual void finish() {}
};

// WriteError — a result file could not be written (ENOSPC, EIO, a file too large): the
// driver stops with one line and kExitWriteError (sweep.hpp); what was written before is whole.
struct WriteError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace coopbench
