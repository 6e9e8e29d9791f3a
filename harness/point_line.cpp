#include "harness/point_line.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace coopbench {

void PointLine::add(const ForkResult& fork) {
    const int warmup = fork.point->warmup;
    for (std::size_t i = 0; i < fork.m.runs.size(); ++i) {
        const Outcome& o = fork.m.runs[i];
        if (!o.ok) {
            if (reason_.empty()) reason_ = o.reason.empty() ? std::string("failed") : o.reason;
        } else if (static_cast<int>(i) >= warmup && std::isfinite(o.value)) {
            values_.push_back(o.value);
        }
    }
    noisy_ |= fork.noise.noisy;
}

std::string PointLine::text(const std::string& unit) const {
    std::string t;
    if (!values_.empty()) {
        auto v = values_;
        std::sort(v.begin(), v.end());
        const std::size_t n = v.size();
        const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
        char buf[160];
        std::snprintf(buf, sizeof buf, "%10s %s  [%s .. %s, %zu run%s]", number(median).c_str(), unit.c_str(),
                      number(v.front()).c_str(), number(v.back()).c_str(), n, n == 1 ? "" : "s");
        t = buf;
    }
    if (noisy_) t += "  noisy";
    if (!reason_.empty()) {
        std::string r = reason_.size() > 200 ? reason_.substr(0, 200) + "..." : reason_;
        t += std::string(t.empty() ? "" : "  ") + "FAILED: " + r;
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
