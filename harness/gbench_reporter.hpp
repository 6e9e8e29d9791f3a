// gbench_reporter.hpp — the reporter of Google Benchmark's formats: benchmark.json (what
// Google's compare.py reads) and, with --benchmark_format=console, Google Benchmark's
// console tables on stdout.
#pragma once

#include <benchmark/benchmark.h>
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "harness/reporter.hpp"

namespace coopbench {

// GbenchReporter — Google Benchmark's own reporters fed by our loop: JSONReporter writes
// benchmark.json, ConsoleReporter the table on stdout (--benchmark_format=console only).
// Each measured iteration is one run (manual time: its interval; cpu_time: the child
// process's CPU time during that iteration, all threads), named by the point id, with
// repetition_index counting the point's measured iterations over its forks; a failed fork is
// one run with error_occurred. Warm-up iterations are not reported here (results.csv has
// them).
//
// The file is valid JSON after every fork, so an interrupted sweep (SIGINT, SIGTERM, kill -9)
// leaves one that compare.py reads: JSONReporter writes into a buffer; the file holds what it
// wrote so far followed by the closing text JSONReporter::Finalize would write ("\n  ]\n}\n").
// Each fork's runs are written over that closing text together with a new one, in one
// pwrite: the file is only invalid while that call runs.
class GbenchReporter : public Reporter {
  public:
    // The file is created (or emptied) and checked writable; throws UsageError. `context`
    // becomes Google Benchmark's custom context; `display`: the console tables on stdout
    // (their context block on stderr unless `quiet`); `name_width`: the longest run name.
    GbenchReporter(const std::filesystem::path& file, const nlohmann::json& context, bool display, bool quiet,
                   std::size_t name_width);
    ~GbenchReporter() override;
    GbenchReporter(const GbenchReporter&) = delete;
    GbenchReporter& operator=(const GbenchReporter&) = delete;

    void report(const ForkResult& fork) override;
    void retract_last() override;
    void finish() override;
    // set_repetitions — the sweep's forks per point (each run's `repetitions` counts the
    // point's measured iterations over all its forks).
    void set_repetitions(int r) { repetitions_ = r; }
    const std::filesystem::path& file() const { return file_; }

  private:
    static constexpr std::string_view kClosing = "\n  ]\n}\n";  // JSONReporter::Finalize's text

    // append_closed — what JSONReporter wrote since the last call, then the closing text,
    // written over the previous closing text in one call. A write that fails (a full disk)
    // puts the closing text back at offset_ (over bytes the file already holds: no new space)
    // and throws WriteError: the file stays valid JSON with the forks before.
    void append_closed();
    // close_at — the closing text at `at`, the file cut after it.
    bool close_at(off_t at);
    std::int64_t family_of(const std::string& id);

    std::filesystem::path file_;
    int fd_ = -1;
    off_t offset_ = 0;        // where the closing text begins
    off_t last_offset_ = -1;  // where it began before the last fork (retract_last)
    bool display_;
    int repetitions_ = 1;
    std::ostringstream buf_;
    std::ostream discard_{nullptr};  // no buffer: writes are dropped
    benchmark::JSONReporter json_;
    benchmark::ConsoleReporter console_{benchmark::ConsoleReporter::OO_Tabular};
    std::map<std::string, std::int64_t> families_;
};

}  // namespace coopbench
