// grid.hpp — the tests' one grid expander: a workload's plan as parameter maps, defaults
// filled in, the way the driver expands a plan (harness/plan.cpp) minus validation.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "harness/workload.hpp"

namespace coopbench::test {

// expand_plan — every parameter map of `plan`'s grids (the key "processors" is dropped);
// an unknown plan gives the defaults alone.
inline std::vector<Params> expand_plan(const WorkloadInfo& info, const std::string& plan) {
    std::vector<Params> out;
    std::vector<Grid> grids = info.plans.count(plan) ? info.plans.at(plan) : std::vector<Grid>{Grid{}};
    for (const Grid& g : grids) {
        std::vector<Params> points{Params{}};
        for (const auto& spec : info.params) {
            auto it = g.find(spec.name);
            const std::vector<std::string> vals = it == g.end() ? std::vector<std::string>{spec.default_value} : it->second;
            std::vector<Params> next;
            for (const auto& p : points)
                for (const auto& v : vals) {
                    Params q = p;
                    q[spec.name] = v;
                    next.push_back(std::move(q));
                }
            points = std::move(next);
        }
        out.insert(out.end(), points.begin(), points.end());
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

}  // namespace coopbench::test
