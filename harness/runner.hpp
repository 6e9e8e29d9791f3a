// runner.hpp — measure one point, isolated in a child process (as JMH forks) or inline.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "harness/plan.hpp"

namespace coopbench {

enum class Isolation { process, none };

// Measurement — one fork: the outcome of each run of the workload in it (warm-up
// iterations first; a failed run, if any, is the last), plus what the parent saw of the
// child process.
struct Measurement {
    std::vector<Outcome> runs;
    double peak_rss_kib = -1;  // from wait4's rusage (-1: not measured)
    double cpu_seconds = -1;   // user + system time of the child (-1: not measured)
};

struct RunnerOptions {
    Isolation isolation = Isolation::process;
    double timeout_seconds = 300;  // per point; 0 = none
    std::size_t memory_limit_bytes = 0;  // RLIMIT_AS of the child; 0 = none
    bool inject_fault = false;
};

// The longest line the driver reads from a point's stdout (an external program's reply, or a
// C++ child's line per run), and the tail of its stderr it keeps.
inline constexpr std::size_t kMaxReplyBytes = std::size_t{1} << 20;
inline constexpr std::size_t kStderrTailBytes = 64 * 1024;

// ReplyReader — a child's stdout taken in chunks with bounded memory: each complete
// non-blank line up to `limit` bytes goes to `each_line`, and the last one is kept; a longer
// line is counted, not kept.
class ReplyReader {
  public:
    explicit ReplyReader(std::size_t limit) : limit_(limit) {}
    void feed(const char* data, std::size_t n, const std::function<void(std::string&&)>& each_line);
    // too_long — the reply (the last non-blank line, complete or not) exceeded the limit.
    bool too_long() const;
    bool has_last() const;
    // last — the last non-blank line (an unfinished last line included).
    const std::string& last() const;
    std::size_t longest() const { return longest_; }  // bytes of the longest line seen
    bool any_too_long() const { return any_too_long_; }

  private:
    std::size_t limit_;
    std::string pending_, last_;
    std::size_t current_ = 0, longest_ = 0;
    bool overflow_ = false, too_long_last_ = false, any_too_long_ = false, has_last_ = false;
};

// measure — run one fork of `point`: point.runs() runs of the workload in one process. Never throws for a failing point: a crash, a timeout, a
// wrong answer or a refused thread is a failed Measurement with the reason.
Measurement measure(const Point& point, const RunnerOptions& opts);

// outcome_to_json / outcome_from_json — the child-to-parent wire format: one JSON line
// per run, written as each run ends (a child that crashes later keeps the runs before).
std::string outcome_to_json(const Outcome& o);
Outcome outcome_from_json(const std::string& s);

}  // namespace coopbench
