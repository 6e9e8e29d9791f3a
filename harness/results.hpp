// results.hpp — the reporter of the result files: results.csv and points.jsonl, one row per
// run (iteration) of each fork of each point, in harness/schema.json's columns, flushed to
// disk as each fork ends so a crash loses nothing measured. What --resume reads back and
// repairs: resume.hpp.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/csv.hpp"
#include "harness/reporter.hpp"

namespace coopbench {

// check_resumable_header — throw UsageError (one line) when dir/results.csv exists with a
// header that lacks a schema column or a `param.X` column of `param_names` (written by an
// older coopbench, or for another sweep). It reads only: --resume calls it before repairing.
void check_resumable_header(const std::filesystem::path& dir, const std::vector<std::string>& param_names);

class ResultWriter : public Reporter {
  public:
    // ResultWriter — open (append to) dir/results.csv and dir/points.jsonl. A new CSV gets a
    // header with the schema's columns, one `param.X` column per name in `param_names`; an
    // existing one keeps its header (resume), and parameters missing from it are rejected.
    ResultWriter(const std::filesystem::path& dir, std::vector<std::string> param_names);
    ~ResultWriter() override;
    ResultWriter(const ResultWriter&) = delete;
    ResultWriter& operator=(const ResultWriter&) = delete;

    // report — one row per run of the fork (iteration 0, 1, ...), all of them written and
    // flushed together when the fork ends.
    void report(const ForkResult& fork) override;
    void retract_last() override;

  private:
    // append — `text` at the end of `f` (named `name`), flushed and fsync'ed; on a failure the
    // file is cut back to `size` (what it held before) and WriteError is thrown.
    void append(int fd, const std::string& text, const std::string& name, off_t size);

    int csv_ = -1;  // O_APPEND descriptors (not inherited by a point's program: O_CLOEXEC)
    int jsonl_ = -1;
    std::vector<std::string> columns_;  // the CSV header, in order
    std::filesystem::path dir_;
    off_t csv_size_ = 0, jsonl_size_ = 0;            // the files' sizes: where the next fork goes
    off_t last_csv_size_ = -1, last_jsonl_size_ = -1;  // before the last fork (retract_last)
};

}  // namespace coopbench
