// resume.hpp — what --resume reads and repairs in a result folder: which forks results.csv
// holds completely, the damaged rows that stop a resume, and the traces an interrupted
// driver leaves (a torn last line, an unfinished fork's rows), cut so the fork is measured
// again. Only whole forks count: the writer (results.cpp) writes each fork's rows at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace coopbench {

// completed — the (point id, repetition) forks that dir/results.csv holds completely: a
// failed row, or runs(point id) rows (for --resume). `runs` < 0: any row counts.
using RunsOf = std::function<int(const std::string& point_id)>;
std::set<std::pair<std::string, int>> completed(const std::filesystem::path& dir, const RunsOf& runs = {});

// failed_forks — the (point id, repetition) forks of dir/results.csv that failed.
std::set<std::pair<std::string, int>> failed_forks(const std::filesystem::path& dir);

// damaged_rows — the lines of a results.csv that are not rows of its header ("line 7: 3
// fields where the header has 30"), in file order. A torn last line (no newline) is not
// among them: it is an interruption's trace, which --resume cuts (repair_torn_tail) once
// every check has passed.
std::vector<std::string> damaged_rows(const std::filesystem::path& file);

// duplicated_rows — the rows of a results.csv whose point, repetition and iteration an
// earlier row has too ("line 9: P repetition 0 iteration 2 is measured twice (line 4 too)"),
// in file order: a folder that holds them would count a measurement twice (merge refuses
// them as well).
std::vector<std::string> duplicated_rows(const std::filesystem::path& file);

// repair_incomplete_fork — when the last fork of dir/results.csv (and of points.jsonl) is
// incomplete (a driver killed while writing a fork's rows), cut those rows and say so; the
// fork is then measured again by --resume. Returns the rows removed from results.csv.
std::size_t repair_incomplete_fork(const std::filesystem::path& dir, const RunsOf& runs);

// repair_unpaired_forks — results.csv and points.jsonl hold the same rows, fork by fork: the
// writer writes a fork to results.csv and then to points.jsonl (results.cpp), so a driver
// killed between the two writes, or an older driver that went on past a full disk, leaves a
// fork in one file only (or a different number of its rows in each). Every such fork is
// taken out of both files (each rewritten to a temporary file and renamed over it, so a
// crash here leaves either file whole), with a note on stderr; --resume then measures it
// again. A points.jsonl line that is no JSON row is dropped with it. Returns the forks removed.
std::size_t repair_unpaired_forks(const std::filesystem::path& dir);

// repair_torn_tail — when `file` does not end with a newline (a writer killed mid-line),
// truncate it to its last complete line and say so on stderr; returns the bytes removed.
std::size_t repair_torn_tail(const std::filesystem::path& file);

}  // namespace coopbench
