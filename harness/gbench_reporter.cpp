#include "harness/gbench_reporter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <vector>

#include "harness/csv.hpp"  // clean_text

namespace coopbench {

namespace fs = std::filesystem;

GbenchReporter::GbenchReporter(const fs::path& file, const nlohmann::json& context, bool display, bool quiet,
                               std::size_t name_width)
    : file_(file), display_(display) {
    fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw UsageError("cannot write " + file.string() + ": " + std::strerror(errno));
    // Google Benchmark 1.7.1 keeps the custom context in a global map (AddCustomContext
    // only adds a key once): set it afresh for this sweep.
    auto*& global = benchmark::internal::GetGlobalContext();
    if (global) global->clear();
    for (auto& [k, v] : context.items()) benchmark::AddCustomContext(k, v.is_string() ? v.get<std::string>() : v.dump());
    benchmark::BenchmarkReporter::Context::executable_name = "coopbench";
    json_.SetOutputStream(&buf_);
    json_.SetErrorStream(&std::cerr);
    benchmark::BenchmarkReporter::Context ctx;
    // Google Benchmark's runner sets this (its ConsoleReporter pads names to it); the
    // constructor leaves it unset.
    ctx.name_field_width = name_width;
    json_.ReportContext(ctx);
    try {
        append_closed();
    } catch (const WriteError&) {
        // No empty or torn benchmark-N.json left behind (a resume on a full disk).
        ::close(fd_);
        fd_ = -1;
        ::unlink(file.c_str());
        throw;
    }
    if (display_) {
        console_.SetOutputStream(&std::cout);
        // ConsoleReporter prints the machine's context block on its error stream: not with -q.
        console_.SetErrorStream(quiet ? &discard_ : &std::cerr);
        console_.ReportContext(ctx);
    }
}

GbenchReporter::~GbenchReporter() {
    if (fd_ >= 0) ::close(fd_);
}

namespace {

// median — of a non-empty sample (the mean of the middle two for an even count, as Google
// Benchmark's StatisticsMedian).
double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double mean(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
}

// stddev — the sample standard deviation (n - 1), as Google Benchmark's StatisticsStdDev; 0
// from one value.
double stddev(const std::vector<double>& v) {
    if (v.size() < 2) return 0;
    const double m = mean(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return std::sqrt(s / static_cast<double>(v.size() - 1));
}

}  // namespace

void GbenchReporter::report(const ForkResult& fork) {
    const Point& p = *fork.point;
    const std::string id = clean_text(p.id());
    std::vector<benchmark::BenchmarkReporter::Run> runs;
    auto base = [&](const std::string& name) {
        benchmark::BenchmarkReporter::Run r;
        r.run_name.function_name = name;
        r.run_name.time_type = "manual_time";
        r.family_index = family_of(id);
        r.per_family_instance_index = 0;
        r.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
        r.iterations = 1;
        r.threads = 1;
        r.repetitions = repetitions_;
        r.repetition_index = fork.repetition;
        r.time_unit = benchmark::kMicrosecond;
        r.statistics = nullptr;
        return r;
    };
    // A run without its own CPU time: the fork's process time over its runs (start-up in).
    const double process_share = fork.m.cpu_seconds >= 0 && !fork.m.runs.empty()
                                     ? fork.m.cpu_seconds / static_cast<double>(fork.m.runs.size())
                                     : 0;
    auto cpu_of = [&](const Outcome& o) { return o.cpu_seconds >= 0 ? o.cpu_seconds : process_share; };
    auto driver_counters = [&](benchmark::BenchmarkReporter::Run& r) {
        if (fork.m.peak_rss_kib >= 0) r.counters["peak_rss_kib"] = fork.m.peak_rss_kib;
        if (fork.m.cpu_seconds >= 0) r.counters["cpu_seconds"] = fork.m.cpu_seconds;
        r.counters["noisy"] = fork.noise.noisy ? 1 : 0;
    };

    // The fork: the medians of its timed iterations (a failed fork: its error).
    std::vector<double> real, cpu, value;
    const Outcome* failed = nullptr;
    for (std::size_t i = 0; i < fork.m.runs.size(); ++i) {
        const Outcome& o = fork.m.runs[i];
        if (!o.ok) {
            failed = &o;
            break;
        }
        if (static_cast<int>(i) < p.warmup) continue;
        real.push_back(o.seconds);
        cpu.push_back(cpu_of(o));
        value.push_back(o.value);
    }
    {
        auto r = base(id);
        if (failed || real.empty()) {
            r.error_occurred = true;
            // A program's text, cleaned (csv.hpp): Google's writer escapes no control character.
            const std::string why = failed ? (is_refusal(*failed) ? "refused: " + failed->reason : failed->reason)
                                           : std::string("no timed iteration");
            r.error_message = clean_text(why);
        } else {
            r.iterations = static_cast<benchmark::IterationCount>(real.size());
            // JSONReporter writes real_accumulated_time / iterations: the median per iteration.
            r.real_accumulated_time = std::max(median(real), 1e-12) * static_cast<double>(real.size());
            r.cpu_accumulated_time = median(cpu) * static_cast<double>(real.size());
            r.counters["value"] = median(value);
            driver_counters(r);
        }
        runs.push_back(std::move(r));
    }
    // Each run of the workload, under a name of its own.
    for (std::size_t i = 0; i < fork.m.runs.size(); ++i) {
        const Outcome& o = fork.m.runs[i];
        if (!o.ok) break;  // the fork's error says it
        auto r = base(id + "/iteration:" + std::to_string(i));
        r.real_accumulated_time = std::max(o.seconds, 1e-12);
        r.cpu_accumulated_time = cpu_of(o);
        r.counters["value"] = o.value;
        driver_counters(r);
        // The program's counters never replace the driver's own (the noise flag among them):
        // external programs' are refused by name (external.cpp); this guards the rest.
        for (auto& [k, v] : o.counters) r.counters.emplace(clean_text(k), v);
        runs.push_back(std::move(r));
    }
    // The point's aggregates over the forks of this file, after its last fork.
    last_point_ = id;
    last_added_ = !failed && !real.empty();
    if (last_added_) forks_[id].push_back({median(real), median(cpu), median(value)});
    const auto& done = forks_[id];
    if (fork.repetition == repetitions_ - 1 && !done.empty()) {
        std::vector<double> dr, dc, dv;
        for (auto& f : done) {
            dr.push_back(f.real);
            dc.push_back(f.cpu);
            dv.push_back(f.value);
        }
        using Stat = double (*)(const std::vector<double>&);
        const std::pair<const char*, Stat> stats[] = {
            {"mean", [](const std::vector<double>& v) { return mean(v); }},
            {"median", [](const std::vector<double>& v) { return median(v); }},
            {"stddev", [](const std::vector<double>& v) { return stddev(v); }},
            {"cv", [](const std::vector<double>& v) { return mean(v) != 0 ? stddev(v) / mean(v) : 0.0; }},
        };
        for (auto& [name, f] : stats) {
            auto r = base(id);
            r.run_type = benchmark::BenchmarkReporter::Run::RT_Aggregate;
            r.aggregate_name = name;
            const bool cv = std::string_view(name) == "cv";
            r.aggregate_unit = cv ? benchmark::kPercentage : benchmark::kTime;
            // As Google Benchmark's aggregates: iterations = how many repetitions (forks) went in.
            r.iterations = static_cast<benchmark::IterationCount>(done.size());
            r.repetition_index = -1;
            // JSONReporter divides a time aggregate by its iterations (Google Benchmark's
            // ComputeStats scales it up by as much); a percentage it writes as it is.
            const double scale = cv ? 1.0 : static_cast<double>(done.size());
            r.real_accumulated_time = f(dr) * scale;
            r.cpu_accumulated_time = f(dc) * scale;
            r.counters["value"] = f(dv);
            runs.push_back(std::move(r));
        }
    }
    json_.ReportRuns(runs);
    const off_t before = offset_;
    append_closed();
    last_offset_ = before;
    if (display_) console_.ReportRuns(runs);
}

void GbenchReporter::finish() {
    // Finalize writes exactly the closing text the file already ends with.
    json_.Finalize();
    buf_.str("");
    if (fd_ >= 0) fsync(fd_);
    if (display_) console_.Finalize();
}

bool GbenchReporter::close_at(off_t at) {
    const ssize_t n = ::pwrite(fd_, kClosing.data(), kClosing.size(), at);
    return n == static_cast<ssize_t>(kClosing.size()) && ftruncate(fd_, at + static_cast<off_t>(kClosing.size())) == 0 &&
           fsync(fd_) == 0;
}

void GbenchReporter::append_closed() {
    std::string text = buf_.str();
    buf_.str("");
    const std::size_t fresh = text.size();
    text += kClosing;
    const char* p = text.data();
    std::size_t left = text.size();
    off_t at = offset_;
    while (left > 0) {
        const ssize_t n = ::pwrite(fd_, p, left, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            if (offset_ > 0) close_at(offset_);  // the file as it was before this call
            throw WriteError("cannot write " + file_.string() + ": " + std::strerror(err));
        }
        p += n;
        at += n;
        left -= static_cast<std::size_t>(n);
    }
    offset_ += static_cast<off_t>(fresh);
}

void GbenchReporter::retract_last() {
    if (last_offset_ < 0 || !close_at(last_offset_)) return;
    offset_ = last_offset_;
    last_offset_ = -1;
    if (last_added_ && !forks_[last_point_].empty()) forks_[last_point_].pop_back();
    last_added_ = false;
}

std::int64_t GbenchReporter::family_of(const std::string& id) {
    auto [it, fresh] = families_.emplace(id, static_cast<std::int64_t>(families_.size()));
    return it->second;
}

}  // namespace coopbench
