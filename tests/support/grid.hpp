// grid.hpp — the tests' one grid expander: a workload's plan as parameter maps (with defaults
// filled in, the way the driver expands a plan in harness/plan.cpp, minus validation), or a
// plan's grids as written (with each point's processor count).
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "harness/workload.hpp"
#include "tests/support/watchdog.hpp"  // processors()

namespace coopbench::test {

// product — the cartesian product of `axes` (name, values), in the order given.
inline std::vector<Params> product(const std::vector<std::pair<std::string, std::vector<std::string>>>& axes) {
    std::vector<Params> points{Params{}};
    for (const auto& [name, vals] : axes) {
        std::vector<Params> next;
        for (const auto& p : points)
            for (const auto& v : vals) {
                Params q = p;
                q[name] = v;
                next.push_back(std::move(q));
            }
        points = std::move(next);
    }
    return points;
}

// expand_plan — every parameter map of `plan`'s grids (the key "processors" is dropped);
// an unknown plan gives the defaults alone.
inline std::vector<Params> expand_plan(const WorkloadInfo& info, const std::string& plan) {
    std::vector<Params> out;
    std::vector<Grid> grids = info.plans.count(plan) ? info.plans.at(plan) : std::vector<Grid>{Grid{}};
    for (const Grid& g : grids) {
        std::vector<std::pair<std::string, std::vector<std::string>>> axes;
        for (const auto& spec : info.params) {
            auto it = g.find(spec.name);
            axes.emplace_back(spec.name, it == g.end() ? std::vector<std::string>{spec.default_value} : it->second);
        }
        const auto points = product(axes);
        out.insert(out.end(), points.begin(), points.end());
    }
    return out;
}

// GridPoint — one point of a grid as written: its parameters and its processor count.
struct GridPoint {
    Params params;
    unsigned processors;
};

// expand_grids — the points of `grids` as written (no defaults added); a grid's
// "processors" values become each point's processor count, else `default_processors`.
inline std::vector<GridPoint> expand_grids(const std::vector<Grid>& grids, unsigned default_processors = processors()) {
    std::vector<GridPoint> out;
    for (const Grid& g : grids) {
        std::vector<std::pair<std::string, std::vector<std::string>>> axes(g.begin(), g.end());
        for (auto& p : product(axes)) {
            GridPoint q{std::move(p), default_processors};
            if (auto it = q.params.find("processors"); it != q.params.end()) {
                q.processors = static_cast<unsigned>(std::stoul(it->second));
                q.params.erase(it);
            }
            out.push_back(std::move(q));
        }
    }
    return out;
}

// largest_of_plan — one parameter map: each parameter at the largest value `plan` gives it
// (integers compared as numbers; choices: the first), so every thread a tiny point has runs.
inline Params largest_of_plan(const WorkloadInfo& info, const std::string& plan) {
    Params best;
    for (const auto& p : expand_plan(info, plan))
        for (const auto& [k, v] : p) {
            auto it = best.find(k);
            if (it == best.end()) best[k] = v;
            else if (!v.empty() && std::all_of(v.begin(), v.end(), ::isdigit) && !it->second.empty() &&
                     std::all_of(it->second.begin(), it->second.end(), ::isdigit) && std::stoll(v) > std::stoll(it->second))
                it->second = v;
        }
    return best;
}

// describe — "K=v,K=v" for failure messages.
inline std::string describe(const Params& p) {
    std::string s;
    for (const auto& [k, v] : p) s += (s.empty() ? "" : ",") + k + "=" + v;
    return s;
}

}  // namespace coopbench::test
