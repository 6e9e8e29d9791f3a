#include "harness/plan.hpp"

#include <cmath>

#include "harness/external.hpp"

#include "harness/numbers.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace coopbench {

std::vector<std::string> split_list(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cur;
    std::istringstream in(s);
    while (std::getline(in, cur, sep))
        if (!cur.empty()) out.push_back(cur);
    return out;
}

namespace {
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
    std::string s;
    for (auto& x : v) s += (s.empty() ? "" : sep) + x;
    return s;
}

// normalise_value — validates one value of a parameter; accepts 1e6 / 10^6 style too.
std::string normalise_value(const std::string& workload, const ParamSpec& spec, const std::string& raw) {
    if (!spec.choices.empty()) {
        if (std::find(spec.choices.begin(), spec.choices.end(), raw) == spec.choices.end())
            throw UsageError("parameter " + spec.name + " of " + workload + ": '" + raw + "' is not one of " +
                             join(spec.choices) + closest(raw, spec.choices));
        return raw;
    }
    std::string why;
    const auto parsed = parse_integer(raw, why);
    if (!parsed) throw UsageError("parameter " + spec.name + " of " + workload + ": '" + raw + "' " + why);
    const std::int64_t x = *parsed;
    if (x < spec.min)
        throw UsageError("parameter " + spec.name + " of " + workload + " must be >= " + std::to_string(spec.min) +
                         ", got " + raw);
    return std::to_string(x);
}

const ParamSpec* find_param(const WorkloadInfo& w, const std::string& name) {
    for (auto& p : w.params)
        if (p.name == name) return &p;
    return nullptr;
}

std::vector<Params> expand_grid(const Grid& g) {
    std::vector<Params> out{Params{}};
    for (auto& [k, vs] : g) {
        std::vector<Params> next;
        for (auto& p : out)
            for (auto& v : vs) {
                Params q = p;
                q[k] = v;
                next.push_back(q);
            }
        out = std::move(next);
    }
    return out;
}
}  // namespace

std::string closest(const std::string& name, const std::vector<std::string>& candidates) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (auto& c : candidates) scored.emplace_back(edit_distance(name, c), c);
    std::sort(scored.begin(), scored.end());
    std::vector<std::string> best;
    for (auto& [d, c] : scored)
        if (d <= std::max<std::size_t>(1, name.size() / 3) && d < name.size() && best.size() < 3) best.push_back(c);
    if (best.empty()) return "";
    return " (did you mean " + join(best, " or ") + "?)";
}

std::string Point::id() const {
    std::string s = backend + "/" + workload;
    for (auto& [k, v] : params) s += "/" + k + "=" + v;
    return s + "/P=" + std::to_string(options.processors);
}

std::vector<std::string> plan_names(const Machine& machine) {
    std::set<std::string> names;
    for (auto& [n, w] : Registry::instance().workloads())
        for (auto& [plan, grids] : w.info(machine).plans) names.insert(plan);
    return {names.begin(), names.end()};
}

double run_cost(const WorkloadInfo& info, const Params& params, const CostOf& on) {
    const double c = info.cost_on ? info.cost_on(params, on) : info.cost ? info.cost(params) : 0;
    return std::isfinite(c) && c > 0 ? c : 0;
}

CostOf cost_of(const Point& point) {
    CostOf on;
    on.backend = point.backend;
    on.family = point.backend.substr(0, point.backend.find('/'));
    on.processors = point.options.processors;
    return on;
}

// default_iterations — W and I of a point: the workload's own, else W=1, I=5, cut down
// when cost x 6 runs would exceed the per-point budget.
WorkloadInfo::Iterations default_iterations(const WorkloadInfo& info, const Params& params, double budget_seconds,
                                            const CostOf& on) {
    if (info.iterations) return info.iterations(params);
    WorkloadInfo::Iterations it;  // W=1, I=5
    const double per_run = run_cost(info, params, on);
    if (!(per_run > 0)) return it;
    if (per_run * 6 <= budget_seconds) return it;
    // Fewer timed runs after the warm-up while a warm-up and one timed run fit; else one cold
    // run. Never {W=0, I>1}: its first timed run would be the cold one among warm ones.
    const int fit = static_cast<int>(budget_seconds / per_run);
    if (fit >= 2) return {1, fit - 1};
    return {0, 1};
}

namespace {


// The phases of expand(), in order: select backends, select workloads, check the --param
// names, check the backend options, then per workload and grid: the full grid, its
// processor counts, one point per (parameters, P, backend); finally drop duplicates.

// select_backends — the requested backends (exact names or families), or all of them.
std::vector<const BackendEntry*> select_backends(const Registry& reg, const SweepRequest& req) {
    std::vector<const BackendEntry*> backends;
    std::vector<std::string> all_backend_names;
    for (auto& b : reg.backends()) all_backend_names.push_back(b.name);
    for (auto& b : reg.backends())
        if (b.family != b.name &&
            std::find(all_backend_names.begin(), all_backend_names.end(), b.family) == all_backend_names.end())
            all_backend_names.push_back(b.family);
    if (req.backends.empty()) {
        for (auto& b : reg.backends()) backends.push_back(&b);
    } else {
        for (auto& name : req.backends) {
            // A name that is itself a backend selects that backend alone ("tokio" is not also
            // "tokio/current_thread"); any other name selects its family ("boostfiber").
            const bool exact = std::any_of(reg.backends().begin(), reg.backends().end(),
                                           [&](const BackendEntry& b) { return b.name == name; });
            bool found = false;
            for (auto& b : reg.backends())
                if (exact ? b.name == name : b.family == name) {
                    if (std::find(backends.begin(), backends.end(), &b) == backends.end()) backends.push_back(&b);
                    found = true;
                }
            if (!found) {
                if (const LeftOutBackend* l = left_out_backend(name))
                    throw UsageError("backend '" + name + "' is left out: " + l->reason + " (manifest " + l->manifest + ")");
                throw UsageError("unknown backend '" + name + "'" + closest(name, all_backend_names));
            }
        }
    }
    return backends;
}

// select_workloads — the requested workloads (or every workload of the plan), each checked
// against the plan; `infos` gets every registered workload's description.
std::vector<std::string> select_workloads(const Registry& reg, const SweepRequest& req, const Machine& machine,
                                          std::map<std::string, WorkloadInfo>& infos) {
    std::vector<std::string> all_workloads;
    for (auto& [n, w] : reg.workloads()) {
        infos.emplace(n, w.info(machine));
        all_workloads.push_back(n);
    }
    std::vector<std::string> workloads;
    if (!req.plan.empty()) {
        auto plans = plan_names(machine);
        if (std::find(plans.begin(), plans.end(), req.plan) == plans.end())
            throw UsageError("unknown plan '" + req.plan + "'" + closest(req.plan, plans) + "; plans: " + join(plans));
    }
    if (req.workloads.empty()) {
        for (auto& n : all_workloads)
            if (req.plan.empty() || infos.at(n).plans.count(req.plan)) workloads.push_back(n);
    } else {
        for (auto& n : req.workloads) {
            if (!infos.count(n)) throw UsageError("unknown workload '" + n + "'" + closest(n, all_workloads));
            if (!req.plan.empty() && !infos.at(n).plans.count(req.plan))
                throw UsageError("workload '" + n + "' has no plan '" + req.plan + "'");
            if (std::find(workloads.begin(), workloads.end(), n) == workloads.end()) workloads.push_back(n);
        }
    }
    return workloads;
}

// check_param_names — each --param must belong to at least one selected workload.
void check_param_names(const SweepRequest& req, const std::vector<std::string>& workloads,
                       const std::map<std::string, WorkloadInfo>& infos) {
    for (auto& [name, vals] : req.params) {
        bool any = false;
        std::vector<std::string> known;
        for (auto& w : workloads) {
            if (find_param(infos.at(w), name)) any = true;
            for (auto& p : infos.at(w).params) known.push_back(p.name);
        }
        if (!any) {
            std::sort(known.begin(), known.end());
            known.erase(std::unique(known.begin(), known.end()), known.end());
            throw UsageError("no selected workload has a parameter '" + name + "'" + closest(name, known) +
                             (known.empty() ? std::string() : "; parameters: " + join(known)));
        }
        if (vals.empty()) throw UsageError("--param " + name + " has no values");
    }
}

// check_backend_options — each --backend-opt must be declared by at least one selected
// backend, with one of its choices.
void check_backend_options(const SweepRequest& req, const std::vector<const BackendEntry*>& backends) {
    for (auto& [k, v] : req.backend_options) {
        bool any = false;
        for (auto* b : backends)
            for (auto& o : b->options)
                if (o.name == k) {
                    any = true;
                    if (!o.choices.empty() && std::find(o.choices.begin(), o.choices.end(), v) == o.choices.end())
                        throw UsageError("backend option " + k + " of " + b->name + ": '" + v + "' is not one of " +
                                         join(o.choices));
                }
        if (!any) throw UsageError("no selected backend has an option '" + k + "'");
    }
}

// full_grid — the workload's defaults, then the plan's grid, then the user's overrides, every
// value validated; the grid's "processors" entry goes to `procs`.
Grid full_grid(const std::string& wname, const WorkloadInfo& info, const Grid& g, const SweepRequest& req,
               std::vector<std::string>& procs) {
    Grid full;
    for (auto& p : info.params) full[p.name] = {p.default_value};
    for (auto& [k, vs] : g) {
        if (k == "processors") procs = vs;
        else full[k] = vs;
    }
    for (auto& [k, vs] : req.params)
        if (find_param(info, k)) full[k] = vs;
    for (auto& [k, vs] : full) {
        const ParamSpec* spec = find_param(info, k);
        if (!spec) throw UsageError("plan of workload " + wname + " names unknown parameter " + k);
        for (auto& v : vs) v = normalise_value(wname, *spec, v);
    }
    return full;
}

// processor_counts — --processors, else the grid's, else the cores this process may use;
// the quick plan adds P=1, so that each P panel of its figures compares every backend (a
// variant with max_processors 1 runs at P=1 only: at the cores alone, it would be the only
// backend of the P=1 panel).
std::vector<unsigned> processor_counts(const SweepRequest& req, const std::vector<std::string>& procs,
                                       const Machine& machine) {
    std::vector<unsigned> ps;
    if (!req.processors.empty()) ps = req.processors;
    else if (!procs.empty())
        for (auto& v : procs) ps.push_back(static_cast<unsigned>(std::stoul(v)));
    else if (req.plan == "quick" && machine.cores > 1) ps = {1, machine.cores};
    else ps = {machine.cores};
    return ps;
}

// make_point — one point of backend `b`, with its options: the variant's fixed ones, every
// declared option's default, then the user's.
Point make_point(const BackendEntry& b, const WorkloadInfo& info, const std::string& wname, const Params& params,
                 unsigned p, const SweepRequest& req) {
    // A variant may fix "max_processors" (e.g. a single-thread scheduler):
    // its points run on at most that many processors, recorded as such.
    unsigned procs_here = p;
    if (auto it = b.fixed.find("max_processors"); it != b.fixed.end())
        procs_here = std::min<unsigned>(p, static_cast<unsigned>(std::stoul(it->second)));
    Point pt;
    pt.backend = b.name;
    pt.workload = wname;
    pt.params = params;
    pt.options.processors = procs_here;
    pt.options.pin = req.pin;
    pt.options.stack_size = req.stack_size;
    pt.options.extra = b.fixed;
    const auto its = default_iterations(info, params, req.budget_seconds, CostOf{b.name, b.family, procs_here});
    pt.warmup = req.warmup >= 0 ? req.warmup : its.warmup;
    pt.iterations = req.iterations >= 1 ? req.iterations : its.measure;
    // A program that runs once per process (no "iterations" in its --list)
    // is one cold run: recorded as what it did, W=0, I=1.
    if (const ExternalBackend* x = external_backend(b.name); x && !x->iterates) {
        pt.warmup = 0;
        pt.iterations = 1;
    }
    // Record every option's value, defaults included, so a result says what ran.
    for (auto& o : b.options)
        if (!o.default_value.empty()) pt.options.extra.emplace(o.name, o.default_value);
    for (auto& [k, v] : req.backend_options)
        for (auto& o : b.options)
            if (o.name == k) pt.options.extra[k] = v;
    return pt;
}

// unique_points — duplicates (overlapping grids) dropped, the first kept.
std::vector<Point> unique_points(std::vector<Point> points) {
    std::set<std::string> seen;
    std::vector<Point> unique;
    for (auto& p : points)
        if (seen.insert(p.id()).second) unique.push_back(std::move(p));
    return unique;
}

}  // namespace

std::vector<Point> expand(const SweepRequest& req, const Machine& machine) {
    const auto& reg = Registry::instance();
    if (req.repetitions < 1) throw UsageError("--repetitions must be >= 1, got " + std::to_string(req.repetitions));
    if (req.warmup < -1 || req.warmup > 1000000) throw UsageError("--warmup must be from 0 to 1000000, got " + std::to_string(req.warmup));
    if (req.iterations != -1 && (req.iterations < 1 || req.iterations > 1000000))
        throw UsageError("--iterations must be from 1 to 1000000, got " + std::to_string(req.iterations));
    const std::vector<const BackendEntry*> backends = select_backends(reg, req);
    std::map<std::string, WorkloadInfo> infos;
    const std::vector<std::string> workloads = select_workloads(reg, req, machine, infos);
    check_param_names(req, workloads, infos);
    check_backend_options(req, backends);
    for (unsigned p : req.processors)
        if (p < 1) throw UsageError("--processors must be >= 1");

    // --stack-size below a selected backend's minimum: refused, with the minimum.
    if (req.stack_size != 0)
        for (auto* b : backends)
            if (req.stack_size < b->min_stack_size)
                throw UsageError("--stack-size " + std::to_string(req.stack_size) + " is below the minimum of " + b->name +
                                 ": " + std::to_string(b->min_stack_size) + " bytes");

    std::vector<Point> points;
    for (auto& wname : workloads) {
        const WorkloadInfo& info = infos.at(wname);
        std::vector<Grid> grids;
        if (req.plan.empty()) grids.push_back({});
        else grids = info.plans.at(req.plan);
        for (const Grid& g : grids) {
            std::vector<std::string> procs;
            const Grid full = full_grid(wname, info, g, req, procs);
            const std::vector<unsigned> ps = processor_counts(req, procs, machine);
            for (auto& params : expand_grid(full))
                for (unsigned p : ps)
                    for (auto* b : backends)
                        if (b->runners.count(wname))  // else the workload does not support it
                            points.push_back(make_point(*b, info, wname, params, p, req));
        }
    }
    std::vector<Point> unique = unique_points(std::move(points));
    if (unique.empty()) {
        // Why: per backend, the cause it has (first of them, the message is one line).
        std::string why;
        for (auto* b : backends) {
            std::vector<std::string> missing;
            for (auto& w : workloads)
                if (!b->runners.count(w)) missing.push_back(w);
            if (missing.empty()) continue;
            if (const ExternalBackend* x = external_backend(b->name)) {
                why = b->name + "'s program does not implement " + join(missing, ", ") + " (its --list names " +
                      (x->listed.empty() ? std::string("no workload") : join(x->listed, ", ")) + ")";
            } else {
                // Which backends do run it, rather than a guess at why this one does not (a
                // workload may need preemption, coop's units, or a channel of its own).
                std::vector<std::string> runs;
                for (auto& other : Registry::instance().backends())
                    if (other.runners.count(missing.front())) runs.push_back(other.name);
                why = b->name + " does not run " + join(missing, ", ") + " (" + missing.front() +
                      (runs.empty() ? std::string(" runs on no registered backend") : " runs on " + join(runs, ", ")) + ")";
            }
            break;
        }
        throw UsageError("the sweep has no points: no selected backend runs the selected workloads" +
                         (why.empty() ? std::string() : ": " + why));
    }
    return unique;
}

}  // namespace coopbench
