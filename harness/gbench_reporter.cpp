#include "harness/gbench_reporter.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

void GbenchReporter::report(const ForkResult& fork) {
    const Point& p = *fork.point;
    std::vector<benchmark::BenchmarkReporter::Run> runs;
    auto base = [&] {
        benchmark::BenchmarkReporter::Run r;
        r.run_name.function_name = clean_text(p.id());
        r.run_name.time_type = "manual_time";
        r.family_index = family_of(p.id());
        r.per_family_instance_index = 0;
        r.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
        r.iterations = 1;
        r.threads = 1;
        r.repetitions = p.iterations * repetitions_;
        r.time_unit = benchmark::kMicrosecond;
        r.statistics = nullptr;
        return r;
    };
    for (std::size_t i = 0; i < fork.m.runs.size(); ++i) {
        const Outcome& o = fork.m.runs[i];
        const bool warm = static_cast<int>(i) < p.warmup;
        if (o.ok && warm) continue;
        auto r = base();
        r.repetition_index = static_cast<std::int64_t>(fork.repetition) * p.iterations +
                             (static_cast<std::int64_t>(i) - p.warmup);
        if (!o.ok) {
            r.error_occurred = true;
            // A program's text, cleaned (csv.hpp): Google's writer escapes no control character.
            r.error_message = clean_text(is_refusal(o) ? "refused: " + o.reason : o.reason);
            r.repetition_index = static_cast<std::int64_t>(fork.repetition) * p.iterations;
        } else {
            r.real_accumulated_time = std::max(o.seconds, 1e-12);
            r.cpu_accumulated_time = o.cpu_seconds >= 0 ? o.cpu_seconds : 0;
            r.counters["value"] = o.value;
            if (fork.m.peak_rss_kib >= 0) r.counters["peak_rss_kib"] = fork.m.peak_rss_kib;
            if (fork.m.cpu_seconds >= 0) r.counters["cpu_seconds"] = fork.m.cpu_seconds;
            r.counters["noisy"] = fork.noise.noisy ? 1 : 0;
            // The program's counters never replace the driver's own (the noise flag among them):
            // external programs' are refused by name (external.cpp); this guards the rest.
            for (auto& [k, v] : o.counters) r.counters.emplace(clean_text(k), v);
        }
        runs.push_back(std::move(r));
    }
    if (runs.empty()) return;
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
}

std::int64_t GbenchReporter::family_of(const std::string& id) {
    auto [it, fresh] = families_.emplace(id, static_cast<std::int64_t>(families_.size()));
    return it->second;
}

}  // namespace coopbench
