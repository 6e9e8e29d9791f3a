#include "harness/results.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness/resume.hpp"
#include "harness/schema.hpp"

namespace coopbench {

namespace {
off_t size_of(int fd) {
    struct stat st {};
    return fstat(fd, &st) == 0 ? st.st_size : 0;
}
}  // namespace

void check_resumable_header(const std::filesystem::path& dir, const std::vector<std::string>& param_names) {
    const auto csv_path = dir / "results.csv";
    std::error_code ec;
    if (!std::filesystem::exists(csv_path, ec) || std::filesystem::file_size(csv_path, ec) == 0) return;
    std::ifstream in(csv_path);
    std::string header;
    std::getline(in, header);
    const auto columns = parse_csv_line(header);
    for (auto& p : param_names)
        if (std::find(columns.begin(), columns.end(), "param." + p) == columns.end())
            throw UsageError("cannot resume into " + csv_path.string() + ": it has no column param." + p);
    for (auto& c : schema_columns())
        if (c != "param.<NAME>" && std::find(columns.begin(), columns.end(), c) == columns.end())
            throw UsageError("cannot resume into " + csv_path.string() + ": it has no column " + c +
                             " (written by an older coopbench; start a new folder)");
}

ResultWriter::ResultWriter(const std::filesystem::path& dir, std::vector<std::string> param_names) : dir_(dir) {
    const auto csv_path = dir / "results.csv";
    check_resumable_header(dir, param_names);
    // A driver killed mid-write leaves a partial last line: cut it before appending.
    repair_torn_tail(csv_path);
    repair_torn_tail(dir / "points.jsonl");
    bool fresh = !std::filesystem::exists(csv_path) || std::filesystem::file_size(csv_path) == 0;
    if (!fresh) {
        std::ifstream in(csv_path);
        std::string header;
        std::getline(in, header);
        columns_ = parse_csv_line(header);
    } else {
        // The header: schema.json's columns in order, param.<NAME> expanded.
        for (auto& c : schema_columns()) {
            if (c == "param.<NAME>")
                for (auto& p : param_names) columns_.push_back("param." + p);
            else
                columns_.push_back(c);
        }
    }
    csv_ = ::open(csv_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    jsonl_ = ::open((dir / "points.jsonl").c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (csv_ < 0 || jsonl_ < 0) {
        const int err = errno;
        if (csv_ >= 0) ::close(csv_);
        if (jsonl_ >= 0) ::close(jsonl_);
        throw UsageError("cannot write results into " + dir.string() + ": " + std::strerror(err));
    }
    csv_size_ = size_of(csv_);
    jsonl_size_ = size_of(jsonl_);
    if (fresh) {
        std::string h;
        for (std::size_t i = 0; i < columns_.size(); ++i) h += csv_field(columns_[i]) + (i + 1 < columns_.size() ? "," : "\n");
        append(csv_, h, "results.csv", csv_size_);
        csv_size_ += static_cast<off_t>(h.size());
    }
}

void ResultWriter::append(int fd, const std::string& text, const std::string& name, off_t size) {
    // One write of the whole text with its length (a NUL inside would end fputs's; clean_text
    // removes them too), then fsync: a fork on disk is a fork --resume need not measure again.
    const char* p = text.data();
    std::size_t left = text.size();
    int err = 0;
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            err = n < 0 ? errno : EIO;
            break;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (err == 0 && fsync(fd) != 0) err = errno;
    if (err == 0) return;
    // Cut back the part of the text that reached the file (freeing space needs none): the
    // file holds whole forks only.
    if (ftruncate(fd, size) == 0) fsync(fd);
    throw WriteError("cannot write " + (dir_ / name).string() + ": " + std::strerror(err));
}

void ResultWriter::retract_last() {
    if (last_csv_size_ < 0) return;
    if (ftruncate(jsonl_, last_jsonl_size_) == 0) jsonl_size_ = last_jsonl_size_;
    if (ftruncate(csv_, last_csv_size_) == 0) csv_size_ = last_csv_size_;
    fsync(jsonl_);
    fsync(csv_);
    last_csv_size_ = last_jsonl_size_ = -1;
}

ResultWriter::~ResultWriter() {
    ::close(csv_);
    ::close(jsonl_);
}

void ResultWriter::report(const ForkResult& fork) {
    const Point& p = *fork.point;
    const Measurement& m = fork.m;
    std::string csv_text, jsonl_text;
    for (std::size_t i = 0; i < m.runs.size(); ++i) {
        const Outcome& o = m.runs[i];
        const int iteration = static_cast<int>(i);
        // Every column by name, typed for points.jsonl; the CSV takes them in its header's order.
        nlohmann::json row;
        row["point"] = p.id();
        row["backend"] = p.backend;
        row["family"] = fork.family;
        row["workload"] = p.workload;
        row["processors"] = p.options.processors;
        row["repetition"] = fork.repetition;
        row["iteration"] = iteration;
        row["phase"] = iteration < p.warmup ? "warmup" : "measure";
        row["status"] = o.ok ? "ok" : is_refusal(o) ? "refused" : "failed";
        row["value"] = o.ok && std::isfinite(o.value) ? nlohmann::json(o.value) : nlohmann::json();
        row["unit"] = fork.unit;
        row["seconds"] = o.ok && std::isfinite(o.seconds) ? nlohmann::json(o.seconds) : nlohmann::json();
        row["peak_rss_kib"] = m.peak_rss_kib >= 0 ? nlohmann::json(static_cast<long long>(m.peak_rss_kib)) : nlohmann::json();
        row["cpu_seconds"] = m.cpu_seconds >= 0 ? nlohmann::json(m.cpu_seconds) : nlohmann::json();
        row["load_before"] = fork.noise.load_before >= 0 ? nlohmann::json(fork.noise.load_before) : nlohmann::json();
        row["load_after"] = fork.noise.load_after >= 0 ? nlohmann::json(fork.noise.load_after) : nlohmann::json();
        row["runnable_before"] = fork.noise.runnable_before >= 0 ? nlohmann::json(fork.noise.runnable_before) : nlohmann::json();
        row["runnable_after"] = fork.noise.runnable_after >= 0 ? nlohmann::json(fork.noise.runnable_after) : nlohmann::json();
        row["other_cpus"] = fork.noise.other_cpus >= 0 ? nlohmann::json(fork.noise.other_cpus) : nlohmann::json();
        row["steal_cpus"] = fork.noise.steal_cpus >= 0 ? nlohmann::json(fork.noise.steal_cpus) : nlohmann::json();
        row["noisy"] = fork.noise.noisy;
        // A program's text, cleaned (csv.hpp) for every file: valid UTF-8, no control character.
        row["reason"] = clean_text(o.reason);
        nlohmann::json counters = nlohmann::json::object();
        for (auto& [k, v] : o.counters) counters[clean_text(k)] = v;
        row["counters"] = counters;
        std::string line;
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            const std::string& name = columns_[c];
            std::string field;
            if (name.rfind("param.", 0) == 0) {
                auto it = p.params.find(name.substr(6));
                if (it != p.params.end()) field = it->second;
            } else if (name == "counters") {
                field = o.counters.empty() ? "" : row[name].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            } else if (!row.contains(name)) {
                throw std::logic_error("results.cpp writes no value for the column " + name + " of schema.json");
            } else if (row[name].is_string()) {
                field = row[name].get<std::string>();
            } else if (row[name].is_boolean()) {
                field = row[name].get<bool>() ? "true" : "false";
            } else if (row[name].is_number_float()) {
                field = csv_number(row[name].get<double>());
            } else if (!row[name].is_null()) {
                field = row[name].dump();
            }
            line += csv_field(field) + (c + 1 < columns_.size() ? "," : "\n");
        }
        csv_text += line;
        row["params"] = p.params;
        row["backend_options"] = p.options.extra;
        row["warmup"] = p.warmup;
        row["iterations"] = p.iterations;
        for (auto it = row.begin(); it != row.end();)
            it = it->is_null() ? row.erase(it) : std::next(it);
        jsonl_text += row.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    }
    // All rows of the fork in one write each: --resume counts forks (repair_incomplete_fork).
    // results.csv first, then points.jsonl; a kill between the two leaves a fork in one file
    // only, which --resume takes out of both and measures again (resume.hpp, repair_unpaired_forks).
    append(csv_, csv_text, "results.csv", csv_size_);
    try {
        append(jsonl_, jsonl_text, "points.jsonl", jsonl_size_);
    } catch (const WriteError&) {
        if (ftruncate(csv_, csv_size_) == 0) fsync(csv_);  // in both files or in neither
        throw;
    }
    last_csv_size_ = csv_size_;
    last_jsonl_size_ = jsonl_size_;
    csv_size_ += static_cast<off_t>(csv_text.size());
    jsonl_size_ += static_cast<off_t>(jsonl_text.size());
}

}  // namespace coopbench
