#include "harness/point_line.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "harness/runner.hpp"  // is_refusal

namespace coopbench {

void PointLine::add(const ForkResult& fork) {
    const int warmup = fork.point->warmup;
    for (std::size_t i = 0; i < fork.m.runs.size(); ++i) {
        const Outcome& o = fork.m.runs[i];
        if (!o.ok) {
            if (reason_.empty()) {
                reason_ = o.reason.empty() ? std::string("failed") : o.reason;
                refused_ = is_refusal(o);
            }
        } else if (static_cast<int>(i) >= warmup && std::isfinite(o.value)) {
            values_.push_back(o.value);
        }
    }
    noisy_ |= fork.noise.noisy;
}

void PointLine::add_row(const std::string& status, const std::string& phase, double value, const std::string& reason,
                        bool noisy) {
    if (status != "ok") {
        if (reason_.empty()) {
            reason_ = reason.empty() ? std::string("failed") : reason;
            refused_ = status == "refused";
        }
    } else if (phase == "measure" && std::isfinite(value)) {
        values_.push_back(value);
    }
    noisy_ |= noisy;
}

std::string PointLine::text(const std::string& unit) const {
    std::string t;
    if (!values_.empty()) {
        auto v = values_;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        char buf[160];
        // The extremes named as such: a bracketed range would read as a confidence interval.
        std::snprintf(buf, sizeof buf, "%10s %s  median of %zu run%s; min %s, max %s", number(median).c_str(), unit.c_str(),
                      n, n == 1 ? "" : "s", number(v.front()).c_str(), number(v.back()).c_str());
        t = buf;
    }
    if (noisy_) t += "  noisy";
    if (!reason_.empty()) {
        std::string r = reason_.size() > 200 ? reason_.substr(0, 200) + "..." : reason_;
        t += std::string(t.empty() ? "" : "  ") + (refused_ ? "REFUSED: " : "FAILED: ") + r;
    }
    return t;
}

std::string PointLine::number(double x) {
    char buf[32];
    if (std::fabs(x) >= 1e4 && std::fabs(x) < 1e9) std::snprintf(buf, sizeof buf, "%.0f", x);
    else std::snprintf(buf, sizeof buf, "%.4g", x);
    return buf;
}

}  // namespace coopbench
