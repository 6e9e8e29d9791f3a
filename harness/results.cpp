#include "harness/results.hpp"

#include "results_schema.hpp"  // generated from harness/schema.json (CMake)

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace coopbench {

namespace {

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

const nlohmann::json& schema() {
    static const nlohmann::json j = nlohmann::json::parse(kResultsSchemaJson);
    return j;
}

std::vector<std::string> schema_columns() {
    std::vector<std::string> names;
    for (auto& c : schema().at("columns")) names.push_back(c.at("name").get<std::string>());
    return names;
}

namespace {
// "backend.<NAME>.<KEY>" matches "backend.go.go_version": <NAME> is one dotted part, <KEY>
// the rest.
bool key_matches(const std::string& pattern, const std::string& key) {
    if (pattern.find('<') == std::string::npos) return pattern == key;
    std::size_t p = 0, k = 0;
    while (p < pattern.size()) {
        if (pattern[p] == '<') {
            const auto close = pattern.find('>', p);
            const bool rest = pattern.compare(p, close - p + 1, "<KEY>") == 0;
            p = close + 1;
            const auto end = rest ? key.size() : key.find('.', k);
            if (end == std::string::npos || end == k) return false;
            k = end;
        } else {
            if (k >= key.size() || key[k] != pattern[p]) return false;
            ++p, ++k;
        }
    }
    return k == key.size();
}

bool has_type(const nlohmann::json& v, const std::string& type) {
    if (type == "string") return v.is_string();
    if (type == "int") return v.is_number_integer();
    if (type == "float") return v.is_number();
    if (type == "bool") return v.is_boolean();
    if (type == "json") return v.is_object();
    return false;
}
}  // namespace

std::vector<std::string> context_problems(const nlohmann::json& context) {
    std::vector<std::string> out;
    if (!context.is_object()) return {"context is not a JSON object"};
    const auto& keys = schema().at("context");
    for (auto& [k, v] : context.items()) {
        const nlohmann::json* entry = nullptr;
        for (auto& e : keys)
            if (key_matches(e.at("name").get<std::string>(), k)) { entry = &e; break; }
        if (!entry) {
            out.push_back("key '" + k + "' is not in schema.json's context");
            continue;
        }
        const std::string type = entry->at("type").get<std::string>();
        if (v.is_null()) {
            const bool differs = context.contains("differing") && context["differing"].is_object() &&
                                 context["differing"].contains(k);
            if (!entry->contains("null") && !differs)
                out.push_back("key '" + k + "' is null, which schema.json gives no meaning");
        } else if (!has_type(v, type)) {
            out.push_back("key '" + k + "' is " + v.type_name() + ", schema.json says " + type);
        }
    }
    for (auto& e : keys)
        if (e.at("when") == "run" && !context.contains(e.at("name").get<std::string>()))
            out.push_back("key '" + e.at("name").get<std::string>() + "' (written by every run) is missing");
    return out;
}

double ProcReader::load1() const {
    std::ifstream in(root / "loadavg");
    double l = -1;
    if (!(in >> l)) return -1;
    return l;
}

int ProcReader::runnable() const {
    std::ifstream in(root / "stat");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("procs_running ", 0) == 0) {
            try {
                // procs_running counts the reader itself, which is running as it reads.
                return std::max(0, std::stoi(line.substr(14)) - 1);
            } catch (...) {
                return -1;
            }
        }
    return -1;
}

int settled_runnable(const std::function<int()>& read, int samples, const std::function<void()>& wait) {
    int fewest = -1;
    for (int i = 0; i < samples; ++i) {
        if (i > 0) wait();
        const int r = read();
        if (r < 0) return -1;
        if (fewest < 0 || r < fewest) fewest = r;
        if (fewest == 0) break;  // cannot go lower
    }
    return fewest;
}

int ProcReader::runnable_settled() const {
    return settled_runnable([this] { return runnable(); }, 5,
                            [] { std::this_thread::sleep_for(std::chrono::microseconds(500)); });
}

double ProcReader::busy_seconds() const {
    std::ifstream in(root / "stat");
    std::string label;
    if (!(in >> label) || label != "cpu") return -1;
    // user nice system idle iowait irq softirq steal (guest time is already in user/nice)
    double f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int got = 0;
    while (got < 8 && in >> f[got]) ++got;
    if (got < 4) return -1;
    return (f[0] + f[1] + f[2] + f[5] + f[6] + f[7]) * tick_seconds();
}

unsigned ProcReader::cpus() const {
    std::ifstream in(root / "stat");
    unsigned n = 0;
    for (std::string line; std::getline(in, line);)
        if (line.size() > 3 && line.rfind("cpu", 0) == 0 && std::isdigit(static_cast<unsigned char>(line[3]))) ++n;
    return n;
}

double ProcReader::tick_seconds() {
    static const double t = [] {
        const long hz = sysconf(_SC_CLK_TCK);
        return hz > 0 ? 1.0 / static_cast<double>(hz) : 0.01;
    }();
    return t;
}

double other_cpus(double busy_before, double busy_after, double own, double wall, unsigned cpus, double tick) {
    if (busy_before < 0 || busy_after < 0 || wall <= 0) return -1;
    const double rounding = static_cast<double>(cpus == 0 ? 1 : cpus) * tick;
    const double other = busy_after - busy_before - std::max(own, 0.0) - rounding;
    return std::max(other, 0.0) / wall;
}

bool is_noisy(const Noise& n, unsigned cores, unsigned processors) {
    const int free_cores = processors >= cores ? 0 : static_cast<int>(cores - processors);
    return std::max(n.runnable_before, n.runnable_after) > free_cores ||
           // half a core of slack: the driver itself, interrupts, the kernel's own threads
           n.other_cpus > static_cast<double>(free_cores) + 0.5;
}

ResultWriter::ResultWriter(const std::filesystem::path& dir, std::vector<std::string> param_names) {
    const auto csv_path = dir / "results.csv";
    // A driver killed mid-write leaves a partial last line: cut it before appending.
    repair_torn_tail(csv_path);
    repair_torn_tail(dir / "points.jsonl");
    bool fresh = !std::filesystem::exists(csv_path) || std::filesystem::file_size(csv_path) == 0;
    if (!fresh) {
        std::ifstream in(csv_path);
        std::string header;
        std::getline(in, header);
        columns_ = parse_csv_line(header);
        for (auto& p : param_names)
            if (std::find(columns_.begin(), columns_.end(), "param." + p) == columns_.end())
                throw UsageError("cannot resume into " + csv_path.string() + ": it has no column param." + p);
        for (auto& c : schema_columns())
            if (c != "param.<NAME>" && std::find(columns_.begin(), columns_.end(), c) == columns_.end())
                throw UsageError("cannot resume into " + csv_path.string() + ": it has no column " + c +
                                 " (written by an older coopbench; start a new folder)");
    } else {
        // The header: schema.json's columns in order, param.<NAME> expanded.
        for (auto& c : schema_columns()) {
            if (c == "param.<NAME>")
                for (auto& p : param_names) columns_.push_back("param." + p);
            else
                columns_.push_back(c);
        }
    }
    csv_ = std::fopen(csv_path.c_str(), "a");
    jsonl_ = std::fopen((dir / "points.jsonl").c_str(), "a");
    if (!csv_ || !jsonl_) throw UsageError("cannot write results into " + dir.string());
    if (fresh) {
        std::string h;
        for (std::size_t i = 0; i < columns_.size(); ++i) h += columns_[i] + (i + 1 < columns_.size() ? "," : "\n");
        std::fputs(h.c_str(), csv_);
        flush(csv_);
    }
}

ResultWriter::~ResultWriter() {
    if (csv_) std::fclose(csv_);
    if (jsonl_) std::fclose(jsonl_);
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
        row["status"] = o.ok ? "ok" : "failed";
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
        row["noisy"] = fork.noise.noisy;
        row["reason"] = o.reason;
        row["counters"] = nlohmann::json(o.counters);
        std::string line;
        for (std::size_t c = 0; c < columns_.size(); ++c) {
            const std::string& name = columns_[c];
            std::string field;
            if (name.rfind("param.", 0) == 0) {
                auto it = p.params.find(name.substr(6));
                if (it != p.params.end()) field = it->second;
            } else if (name == "counters") {
                field = o.counters.empty() ? "" : row[name].dump();
            } else if (!row.contains(name)) {
                throw std::logic_error("results.cpp writes no value for the column " + name + " of schema.json");
            } else if (row[name].is_string()) {
                field = row[name].get<std::string>();
            } else if (row[name].is_boolean()) {
                field = row[name].get<bool>() ? "true" : "false";
            } else if (row[name].is_number_float()) {
                field = number(row[name].get<double>());
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
        jsonl_text += row.dump() + "\n";
    }
    // All rows of the fork in one write each: --resume counts forks (repair_incomplete_fork).
    std::fputs(csv_text.c_str(), csv_);
    flush(csv_);
    std::fputs(jsonl_text.c_str(), jsonl_);
    flush(jsonl_);
}

namespace {
struct ForkRows {
    int rows = 0;
    bool failed = false;
};

// csv_forks — results.csv's data rows as (point, repetition) in file order, with where each
// row starts (byte offset) and whether it failed.
struct CsvRow {
    std::pair<std::string, int> fork;
    std::size_t offset;
    bool failed;
};
std::vector<CsvRow> csv_rows(const std::filesystem::path& file, std::vector<std::string>* damaged = nullptr) {
    std::vector<CsvRow> out;
    std::ifstream in(file, std::ios::binary);
    std::string line;
    if (!std::getline(in, line)) return out;
    auto header = parse_csv_line(line);
    auto col = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
    };
    const std::size_t ip = col("point"), ir = col("repetition"), is = col("status");
    std::size_t offset = line.size() + 1, number = 1;
    while (std::getline(in, line)) {
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
                out.push_back({{f[ip], rep}, here, is < f.size() && f[is] == "failed"});
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

std::set<std::pair<std::string, int>> completed(const std::filesystem::path& dir, const RunsOf& runs) {
    std::map<std::pair<std::string, int>, ForkRows> forks;
    for (auto& r : csv_rows(dir / "results.csv")) {
        auto& f = forks[r.fork];
        ++f.rows;
        f.failed |= r.failed;
    }
    std::set<std::pair<std::string, int>> done;
    for (auto& [k, f] : forks)
        if (complete(f, k.first, runs)) done.insert(k);
    return done;
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
        f.failed |= rows[first].failed;
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

}  // namespace coopbench
