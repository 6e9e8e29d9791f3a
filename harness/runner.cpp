#include "harness/runner.hpp"

#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <sstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "harness/child_process.hpp"
#include "harness/csv.hpp"  // clean_text
#include "harness/external.hpp"

namespace coopbench {

std::string outcome_to_json(const Outcome& o) {
    nlohmann::json j;
    j["ok"] = o.ok;
    j["reason"] = o.reason;
    j["seconds"] = o.seconds;
    j["value"] = o.value;
    j["counters"] = o.counters;
    j["cpu_seconds"] = o.cpu_seconds;
    return j.dump();
}

Outcome outcome_from_json(const std::string& s) {
    auto j = nlohmann::json::parse(s);
    Outcome o;
    o.ok = j.at("ok").get<bool>();
    o.reason = j.at("reason").get<std::string>();
    o.seconds = j.at("seconds").get<double>();
    o.value = j.at("value").get<double>();
    o.counters = j.at("counters").get<std::map<std::string, double>>();
    o.cpu_seconds = j.value("cpu_seconds", -1.0);
    return o;
}

namespace {

// run_inline — the fork's runs in this process; each outcome goes to `each` as it ends.
Outcome run_inline(const Point& point, bool inject_fault, const std::function<void(int, const Outcome&)>& each) {
    const BackendEntry* b = Registry::instance().backend(point.backend);
    if (!b || !b->runners.count(point.workload)) {
        Outcome o = Outcome::failed("backend " + point.backend + " does not run workload " + point.workload);
        each(0, o);
        return o;
    }
    Context ctx;
    ctx.params = point.params;
    ctx.options = point.options;
    ctx.inject_fault = inject_fault;
    ctx.runs = point.runs();
    ctx.on_run = each;
    return b->runners.at(point.workload)(ctx);
}

double tv_seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

// InlineRunner — a C++ backend's fork in this process (--isolation none): no timeout, no
// memory limit, and a crash takes the driver down; CPU time is this process's.
class InlineRunner : public PointRunner {
  public:
    Measurement measure(const Point& point, const RunnerOptions& opts) const override {
        Measurement m;
        rusage before{}, after{};
        getrusage(RUSAGE_SELF, &before);
        try {
            run_inline(point, opts.inject_fault, [&](int, const Outcome& o) { m.runs.push_back(o); });
        } catch (const std::exception& e) {
            m.runs.push_back(Outcome::failed(e.what()));
        }
        if (m.runs.empty()) m.runs.push_back(Outcome::failed("the workload did not run"));
        getrusage(RUSAGE_SELF, &after);
        m.cpu_seconds = tv_seconds(after.ru_utime) + tv_seconds(after.ru_stime) - tv_seconds(before.ru_utime) -
                        tv_seconds(before.ru_stime);
        return m;
    }
};

// ForkRunner — a C++ backend's fork in a child process (child_process.hpp): the child runs
// the point and writes one JSON line per run as the run ends (outcome_to_json), so the
// parent keeps every run before a crash or a timeout.
class ForkRunner : public PointRunner {
  public:
    Measurement measure(const Point& point, const RunnerOptions& opts) const override {
        Measurement m;
        std::string failure;
        ReplyReader reply(kMaxReplyBytes);
        auto child = [&](int out) {
            auto send = [&](int, const Outcome& o) {
                std::string s = outcome_to_json(o) + "\n";
                const char* p = s.data();
                std::size_t left = s.size();
                while (left > 0) {
                    ssize_t n = write(out, p, left);
                    if (n < 0 && errno == EINTR) continue;
                    if (n <= 0) break;
                    p += n;
                    left -= static_cast<std::size_t>(n);
                }
            };
            try {
                run_inline(point, opts.inject_fault, send);
            } catch (const std::bad_alloc&) {
                send(0, Outcome::failed("out of memory (std::bad_alloc)"));
            } catch (const std::exception& e) {
                send(0, Outcome::failed(e.what()));
            }
        };
        // Each line is parsed as it comes; the first unreadable one fails the fork.
        auto take_line = [&](std::string&& line) {
            if (!failure.empty()) return;
            try {
                m.runs.push_back(outcome_from_json(line));
            } catch (const std::exception& e) {
                failure = std::string("unreadable result from the point's process: ") + e.what();
            }
        };
        const ChildRun c = run_child(opts, child, reply, take_line);
        if (!c.error.empty()) {
            m.runs.push_back(Outcome::failed(c.error));
            return m;
        }
        // Every line of a C++ child is a run: a line too long anywhere fails the fork.
        if (reply.too_long() || reply.any_too_long()) failure = reply_too_long(reply, "point's process's");
        end_fork(m, c, point.runs(), std::move(failure), opts);
        return m;
    }
};

}  // namespace

const PointRunner& runner_for(const Point& point, const RunnerOptions& opts) {
    // An external backend (harness/external.hpp) is a program: always its own process.
    if (const PointRunner* program = program_runner(point.backend)) return *program;
    static const ForkRunner forked;
    static const InlineRunner in_process;
    if (opts.isolation == Isolation::none) return in_process;
    return forked;
}

Measurement measure(const Point& point, const RunnerOptions& opts) {
    Measurement m = runner_for(point, opts).measure(point, opts);
    // Every text a program gave (a reason, a counter's name) cleaned once, here, for every
    // writer and the log: valid UTF-8, no NUL or control character (csv.hpp, clean_text).
    for (Outcome& o : m.runs) {
        o.reason = clean_text(o.reason);
        std::map<std::string, double> counters;
        for (auto& [k, v] : o.counters) counters.emplace(clean_text(k), v);
        o.counters = std::move(counters);
    }
    return m;
}

void refuse_implausible(Measurement& m, const std::string& unit) {
    const bool rate = unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0;
    auto number = [](double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    };
    for (std::size_t i = 0; i < m.runs.size(); ++i) {
        const Outcome& o = m.runs[i];
        if (!o.ok) return;
        std::string why;
        if (!std::isfinite(o.seconds) || o.seconds <= 0)
            why = "seconds = " + number(o.seconds) + " (a run's time must be finite and above 0)";
        else if (!std::isfinite(o.value) || o.value < 0 || (o.value == 0 && !rate))
            why = "value = " + number(o.value) + " " + unit + " (must be finite and " + (rate ? "0 or above)" : "above 0)");
        if (why.empty()) continue;
        m.runs.resize(i);
        m.runs.push_back(Outcome::failed("implausible result: " + why));
        return;
    }
}

}  // namespace coopbench
