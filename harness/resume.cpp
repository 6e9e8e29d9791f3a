#include "harness/resume.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <fstream>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>

#include "harness/csv.hpp"
#include "harness/plan.hpp"  // UsageError

namespace coopbench {

std::size_t repair_torn_tail(const std::filesystem::path& file) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec || size == 0) return 0;
    std::ifstream in(file, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    if (text.empty() || text.back() == '\n') return 0;
    const auto last_nl = text.rfind('\n');
    const std::size_t keep = last_nl == std::string::npos ? 0 : last_nl + 1;
    std::filesystem::resize_file(file, keep, ec);
    if (ec) throw UsageError("cannot repair the torn last line of " + file.string() + ": " + ec.message());
    const std::size_t removed = text.size() - keep;
    std::fprintf(stderr, "coopbench: %s: removed a torn last line (%zu bytes) left by an interrupted run\n",
                 file.c_str(), removed);
    return removed;
}

namespace {
struct ForkRows {
    int rows = 0;
    bool failed = false;  // ended early: a failed or refused row
};

// csv_forks — results.csv's data rows as (point, repetition) in file order, with where each
// row starts (byte offset) and whether it failed.
// A torn last line (no newline: a writer killed mid-line) is no row; repair_torn_tail cuts it.
struct CsvRow {
    std::pair<std::string, int> fork;
    std::size_t offset;
    bool failed;   // status failed
    bool refused;  // status refused (a fork that ended before it ran, not failed)
    std::string iteration;  // "" in a folder written before iterations
    std::size_t number;     // its line number
};
std::vector<CsvRow> csv_rows(const std::filesystem::path& file, std::vector<std::string>* damaged = nullptr) {
    std::vector<CsvRow> out;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    if (!std::getline(in, line)) return out;
    if (in.eof()) {  // not even the header is whole: nothing here can be read as rows
        if (damaged) damaged->push_back("line 1: the header has no end (no newline)");
        return out;
    }
    auto header = parse_csv_line(line);
    auto col = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const std::size_t ip = col("point"), ir = col("repetition"), is = col("status"), ii = col("iteration");
    std::size_t offset = line.size() + 1, number = 1;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // the torn last line
        const std::size_t here = offset;
        offset += line.size() + 1;
        ++number;
        auto f = parse_csv_line(line);
        std::string why;
        if (f.size() != header.size() || ip >= f.size() || ir >= f.size()) {
            why = std::to_string(f.size()) + " fields where the header has " + std::to_string(header.size());
        } else {
            try {
                std::size_t used = 0;
                const int rep = std::stoi(f[ir], &used);
                if (used != f[ir].size() || rep < 0) throw std::invalid_argument("repetition");
                out.push_back({{f[ip], rep}, here, is < f.size() && f[is] == "failed", is < f.size() && f[is] == "refused",
                               ii < f.size() ? f[ii] : "", number});
            } catch (...) {
                why = "repetition '" + f[ir].substr(0, 40) + "' is not a number";
            }
        }
        if (!why.empty() && damaged) damaged->push_back("line " + std::to_string(number) + ": " + why);
    }
    return out;
}

bool complete(const ForkRows& r, const std::string& point, const RunsOf& runs) {
    if (r.failed || !runs) return true;
    const int want = runs(point);
    return want < 0 || r.rows >= want;
}
}  // namespace

std::vector<std::string> damaged_rows(const std::filesystem::path& file) {
    std::vector<std::string> damaged;
    csv_rows(file, &damaged);
    return damaged;
}

std::vector<std::string> duplicated_rows(const std::filesystem::path& file) {
    std::vector<std::string> twice;
    std::map<std::tuple<std::string, int, std::string>, std::size_t> first_line;
    for (auto& r : csv_rows(file)) {
        auto [it, fresh] = first_line.emplace(std::make_tuple(r.fork.first, r.fork.second, r.iteration), r.number);
        if (!fresh)
            twice.push_back("line " + std::to_string(r.number) + ": " + r.fork.first + " repetition " +
                            std::to_string(r.fork.second) + (r.iteration.empty() ? "" : " iteration " + r.iteration) +
                            " is measured twice (line " + std::to_string(it->second) + " too); it would count double");
    }
    return twice;
}

std::set<std::pair<std::string, int>> completed(const std::filesystem::path& dir, const RunsOf& runs) {
    std::map<std::pair<std::string, int>, ForkRows> forks;
    for (auto& r : csv_rows(dir / "results.csv")) {
        auto& f = forks[r.fork];
        ++f.rows;
        f.failed |= r.failed || r.refused;  // its last row: the fork ended
    }
    std::set<std::pair<std::string, int>> done;
    for (auto& [k, f] : forks)
        if (complete(f, k.first, runs)) done.insert(k);
    return done;
}

std::set<std::pair<std::string, int>> failed_forks(const std::filesystem::path& dir) {
    std::set<std::pair<std::string, int>> failed;
    for (auto& r : csv_rows(dir / "results.csv"))
        if (r.failed) failed.insert(r.fork);
    return failed;
}

std::size_t repair_incomplete_fork(const std::filesystem::path& dir, const RunsOf& runs) {
    const auto csv_path = dir / "results.csv";
    auto rows = csv_rows(csv_path);
    if (rows.empty()) return 0;
    const auto last = rows.back().fork;
    ForkRows f;
    std::size_t first = rows.size();
    while (first > 0 && rows[first - 1].fork == last) {
        --first;
        ++f.rows;
        f.failed |= rows[first].failed || rows[first].refused;
    }
    if (complete(f, last.first, runs)) return 0;
    std::error_code ec;
    std::filesystem::resize_file(csv_path, rows[first].offset, ec);
    if (ec) throw UsageError("cannot repair " + csv_path.string() + ": " + ec.message());
    // points.jsonl: the same fork's lines at its end.
    const auto jl_path = dir / "points.jsonl";
    std::ifstream in(jl_path, std::ios::binary);
    std::vector<std::pair<std::size_t, bool>> lines;  // offset, belongs to the fork
    std::size_t offset = 0;
    for (std::string line; std::getline(in, line);) {
        bool mine = false;
        try {
            auto j = nlohmann::json::parse(line);
            mine = j.value("point", "") == last.first && j.value("repetition", -1) == last.second;
        } catch (...) {
        }
        lines.emplace_back(offset, mine);
        offset += line.size() + 1;
    }
    in.close();
    std::size_t keep = lines.size();
    while (keep > 0 && lines[keep - 1].second) --keep;
    if (keep < lines.size()) std::filesystem::resize_file(jl_path, lines[keep].first, ec);
    std::fprintf(stderr, "coopbench: %s: removed %d rows of an unfinished fork (%s repetition %d); it is measured again\n",
                 csv_path.c_str(), f.rows, last.first.c_str(), last.second);
    return static_cast<std::size_t>(f.rows);
}

namespace {
std::vector<std::string> lines_of(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(std::move(line));
    return lines;
}

// replace_file — `lines` as the whole of `file`: a temporary file beside it, fsync'ed, renamed
// over it.
void replace_file(const std::filesystem::path& file, const std::vector<std::string>& lines) {
    const std::filesystem::path tmp = file.string() + ".tmp";
    std::string text;
    for (auto& l : lines) text += l + "\n";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int err = fd < 0 ? errno : 0;
    for (std::size_t done = 0; err == 0 && done < text.size();) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) err = n < 0 ? errno : EIO;
        else done += static_cast<std::size_t>(n);
    }
    if (err == 0 && fsync(fd) != 0) err = errno;
    if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
    if (err == 0 && std::rename(tmp.c_str(), file.c_str()) != 0) err = errno;
    if (err == 0) return;
    ::unlink(tmp.c_str());
    throw UsageError("cannot repair " + file.string() + ": " + std::strerror(err) + " (it is unchanged)");
}
}  // namespace

std::size_t repair_unpaired_forks(const std::filesystem::path& dir) {
    const auto csv_path = dir / "results.csv", jl_path = dir / "points.jsonl";
    using Fork = std::pair<std::string, int>;
    std::map<Fork, int> in_csv, in_jsonl;
    const auto rows = csv_rows(csv_path);
    for (auto& r : rows) ++in_csv[r.fork];
    const auto jl = lines_of(jl_path);
    std::vector<std::optional<Fork>> jl_fork(jl.size());
    bool unreadable = false;
    for (std::size_t i = 0; i < jl.size(); ++i) {
        try {
            const auto j = nlohmann::json::parse(jl[i]);
            jl_fork[i] = Fork{j.at("point").get<std::string>(), j.at("repetition").get<int>()};
            ++in_jsonl[*jl_fork[i]];
        } catch (...) {
            unreadable = true;
        }
    }
    std::set<Fork> unpaired;
    for (auto& [f, n] : in_csv)
        if (in_jsonl[f] != n) unpaired.insert(f);
    for (auto& [f, n] : in_jsonl)
        if (n > 0 && in_csv[f] != n) unpaired.insert(f);
    if (unpaired.empty() && !unreadable) return 0;
    // points.jsonl first: were the driver killed between the two renames, results.csv still
    // holds the forks, and the next resume finds them unpaired again.
    std::vector<std::string> keep_jl;
    for (std::size_t i = 0; i < jl.size(); ++i)
        if (jl_fork[i] && !unpaired.count(*jl_fork[i])) keep_jl.push_back(jl[i]);
    replace_file(jl_path, keep_jl);
    if (!unpaired.empty()) {
        std::set<std::size_t> drop;  // line numbers (1: the header)
        for (auto& r : rows)
            if (unpaired.count(r.fork)) drop.insert(r.number);
        const auto csv = lines_of(csv_path);
        std::vector<std::string> keep_csv;
        for (std::size_t i = 0; i < csv.size(); ++i)
            if (!drop.count(i + 1)) keep_csv.push_back(csv[i]);
        replace_file(csv_path, keep_csv);
    }
    if (unpaired.empty())
        std::fprintf(stderr, "coopbench: %s: removed lines that are no JSON row\n", jl_path.c_str());
    else
        std::fprintf(stderr,
                     "coopbench: %s: removed %zu forks that results.csv and points.jsonl did not both hold whole (e.g. %s "
                     "repetition %d: a driver stopped between its two writes); they are measured again\n",
                     dir.c_str(), unpaired.size(), unpaired.begin()->first.c_str(), unpaired.begin()->second);
    return unpaired.size();
}

}  // namespace coopbench
