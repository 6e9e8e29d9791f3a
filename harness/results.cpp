#include "harness/results.hpp"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace coopbench {

namespace {
const std::vector<std::string> kLeading = {"point", "backend", "family", "workload"};
const std::vector<std::string> kTrailing = {"processors", "repetition", "status",       "value",  "unit",
                                            "seconds",    "peak_rss_kib", "cpu_seconds", "reason", "counters"};

std::string number(double x) {
    if (!std::isfinite(x)) return "";
    std::ostringstream s;
    s.precision(10);
    s << x;
    return s.str();
}

void flush(std::FILE* f) {
    std::fflush(f);
    fsync(fileno(f));
}
}  // namespace

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

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += (c == '\n' || c == '\r') ? ' ' : c;
    }
    return q + "\"";
}

std::vector<std::string> parse_csv_line(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else if (c != '\r') {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}

ResultWriter::ResultWriter(const std::filesystem::path& dir, std::vector<std::string> param_names)
    : param_names_(std::move(param_names)) {
    const auto csv_path = dir / "results.csv";
    // A driver killed mid-write leaves a partial last line: cut it before appending.
    repair_torn_tail(csv_path);
    repair_torn_tail(dir / "points.jsonl");
    bool fresh = !std::filesystem::exists(csv_path) || std::filesystem::file_size(csv_path) == 0;
    if (!fresh) {
        std::ifstream in(csv_path);
        std::string header;
        std::getline(in, header);
        std::vector<std::string> existing;
        for (auto& h : parse_csv_line(header))
            if (h.rfind("param.", 0) == 0) existing.push_back(h.substr(6));
        for (auto& p : param_names_)
            if (std::find(existing.begin(), existing.end(), p) == existing.end())
                throw UsageError("cannot resume into " + csv_path.string() + ": it has no column param." + p);
        param_names_ = existing;
    }
    csv_ = std::fopen(csv_path.c_str(), "a");
    jsonl_ = std::fopen((dir / "points.jsonl").c_str(), "a");
    if (!csv_ || !jsonl_) throw UsageError("cannot write results into " + dir.string());
    if (fresh) {
        std::string h;
        for (auto& c : kLeading) h += c + ",";
        for (auto& p : param_names_) h += "param." + p + ",";
        for (std::size_t i = 0; i < kTrailing.size(); ++i) h += kTrailing[i] + (i + 1 < kTrailing.size() ? "," : "\n");
        std::fputs(h.c_str(), csv_);
        flush(csv_);
    }
}

ResultWriter::~ResultWriter() {
    if (csv_) std::fclose(csv_);
    if (jsonl_) std::fclose(jsonl_);
}

void ResultWriter::write(const Point& p, const std::string& family, const std::string& unit, int repetition,
                         const Measurement& m) {
    const Outcome& o = m.outcome;
    nlohmann::json counters = o.counters;
    std::vector<std::string> row = {p.id(), p.backend, family, p.workload};
    for (auto& name : param_names_) {
        auto it = p.params.find(name);
        row.push_back(it == p.params.end() ? "" : it->second);
    }
    row.push_back(std::to_string(p.options.processors));
    row.push_back(std::to_string(repetition));
    row.push_back(o.ok ? "ok" : "failed");
    row.push_back(o.ok ? number(o.value) : "");
    row.push_back(unit);
    row.push_back(o.ok ? number(o.seconds) : "");
    row.push_back(m.peak_rss_kib >= 0 ? number(m.peak_rss_kib) : "");
    row.push_back(m.cpu_seconds >= 0 ? number(m.cpu_seconds) : "");
    row.push_back(o.reason);
    row.push_back(o.counters.empty() ? "" : counters.dump());
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) line += csv_field(row[i]) + (i + 1 < row.size() ? "," : "\n");
    std::fputs(line.c_str(), csv_);
    flush(csv_);

    nlohmann::json j;
    j["point"] = p.id();
    j["backend"] = p.backend;
    j["family"] = family;
    j["workload"] = p.workload;
    j["params"] = p.params;
    j["processors"] = p.options.processors;
    j["backend_options"] = p.options.extra;
    j["repetition"] = repetition;
    j["status"] = o.ok ? "ok" : "failed";
    if (o.ok) j["value"] = o.value;
    j["unit"] = unit;
    j["seconds"] = o.seconds;
    if (m.peak_rss_kib >= 0) j["peak_rss_kib"] = m.peak_rss_kib;
    if (m.cpu_seconds >= 0) j["cpu_seconds"] = m.cpu_seconds;
    j["reason"] = o.reason;
    j["counters"] = counters;
    std::fputs((j.dump() + "\n").c_str(), jsonl_);
    flush(jsonl_);
}

std::set<std::pair<std::string, int>> completed(const std::filesystem::path& dir) {
    std::set<std::pair<std::string, int>> done;
    std::ifstream in(dir / "results.csv");
    std::string line;
    if (!std::getline(in, line)) return done;
    auto header = parse_csv_line(line);
    auto col = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const std::size_t ip = col("point"), ir = col("repetition");
    while (std::getline(in, line)) {
        auto f = parse_csv_line(line);
        if (f.size() != header.size()) continue;  // a torn last line from a crash
        done.emplace(f[ip], std::stoi(f[ir]));
    }
    return done;
}

}  // namespace coopbench
