// results.hpp — the result folder: results.csv and points.jsonl, one row per measured
// point and repetition, flushed to disk as each ends so a crash loses nothing measured.
#pragma once

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/plan.hpp"
#include "harness/runner.hpp"

namespace coopbench {

class ResultWriter {
  public:
    // ResultWriter — open (append to) dir/results.csv and dir/points.jsonl. A new CSV gets a
    // header with one `param.X` column per name in `param_names`; an existing one keeps its
    // header (resume), and parameters missing from it are rejected.
    ResultWriter(const std::filesystem::path& dir, std::vector<std::string> param_names);
    ~ResultWriter();
    ResultWriter(const ResultWriter&) = delete;
    ResultWriter& operator=(const ResultWriter&) = delete;

    void write(const Point& p, const std::string& family, const std::string& unit, int repetition,
               const Measurement& m);

  private:
    std::FILE* csv_ = nullptr;
    std::FILE* jsonl_ = nullptr;
    std::vector<std::string> param_names_;
};

// completed — the (point id, repetition) pairs already in dir/results.csv (for --resume).
std::set<std::pair<std::string, int>> completed(const std::filesystem::path& dir);

// repair_torn_tail — when `file` does not end with a newline (a writer killed mid-line),
// truncate it to its last complete line and say so on stderr; returns the bytes removed.
std::size_t repair_torn_tail(const std::filesystem::path& file);

// csv_field — quote a CSV field when needed (RFC 4180).
std::string csv_field(const std::string& s);

// parse_csv_line — split one CSV line (no embedded newlines) into fields.
std::vector<std::string> parse_csv_line(const std::string& line);

}  // namespace coopbench
