// histogram.hpp — a log-linear latency histogram (HdrHistogram's layout, G. Tene,
// https://github.com/HdrHistogram/HdrHistogram: buckets by powers of two, each split into
// 2^kSubBits linear sub-buckets), for the load generator's latencies in nanoseconds.
//
// Error bound: a value v >= 2^kSubBits falls in a sub-bucket of width 2^(e - kSubBits) where
// 2^e <= v, so the bucket spans less than v / 2^kSubBits. A percentile is reported as the
// upper edge of its bucket (capped at the exact maximum): it is never below the true order
// statistic and at most 1/128 (0.78 %) above it. Values below 128 ns are exact. min, max and
// the mean are kept exactly.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>

namespace coopbench::loadgen {

class Histogram {
  public:
    static constexpr int kSubBits = 7;
    static constexpr std::uint64_t kSub = std::uint64_t{1} << kSubBits;  // 128
    static constexpr double kRelativeError = 1.0 / static_cast<double>(kSub);
    static constexpr std::size_t kBuckets = kSub + (64 - kSubBits) * kSub;

    void record(std::uint64_t v) {
        ++counts_[index(v)];
        ++count_;
        sum_ += static_cast<double>(v);
        min_ = std::min(min_, v);
        max_ = std::max(max_, v);
    }
    void merge(const Histogram& o) {
        for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
        count_ += o.count_;
        sum_ += o.sum_;
        min_ = std::min(min_, o.min_);
        max_ = std::max(max_, o.max_);
    }
    void clear() { *this = Histogram(); }

    std::uint64_t count() const { return count_; }
    std::uint64_t max() const { return count_ ? max_ : 0; }
    std::uint64_t min() const { return count_ ? min_ : 0; }
    double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0; }

    // percentile — the value at or below which q (0..1] of the recorded values lie: the upper
    // edge of the bucket holding the ceil(q * count)-th smallest value, capped at max().
    std::uint64_t percentile(double q) const {
        if (count_ == 0) return 0;
        auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_));
        if (static_cast<double>(rank) < q * static_cast<double>(count_)) ++rank;
        rank = std::clamp<std::uint64_t>(rank, 1, count_);
        std::uint64_t seen = 0;
        for (std::size_t i = 0; i < kBuckets; ++i) {
            seen += counts_[i];
            if (seen >= rank) return std::min(upper_edge(i), max_);
        }
        return max_;
    }

    static std::size_t index(std::uint64_t v) {
        if (v < kSub) return static_cast<std::size_t>(v);
        const int e = 63 - std::countl_zero(v);  // 2^e <= v < 2^(e+1), e >= kSubBits
        const int shift = e - kSubBits;
        const std::uint64_t sub = (v >> shift) & (kSub - 1);
        return static_cast<std::size_t>(kSub + static_cast<std::uint64_t>(shift) * kSub + sub);
    }
    static std::uint64_t upper_edge(std::size_t i) {
        if (i < kSub) return i;
        const std::uint64_t shift = (i - kSub) / kSub;
        const std::uint64_t sub = (i - kSub) % kSub;
        const std::uint64_t low = (kSub + sub) << shift;
        return low + ((std::uint64_t{1} << shift) - 1);
    }

  private:
    std::array<std::uint64_t, kBuckets> counts_{};
    std::uint64_t count_ = 0;
    double sum_ = 0;
    std::uint64_t min_ = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t max_ = 0;
};

}  // namespace coopbench::loadgen
