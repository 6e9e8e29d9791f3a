// cpus.cpp — see cpus.hpp.
#include "coop/cpus.hpp"

#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace coop::internal {

std::vector<int> allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    if (cpus.empty())
        for (long c = 0; c < std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)); ++c) cpus.push_back(static_cast<int>(c));
    return cpus;
}

std::vector<int> cpus_by_core() {
    const std::vector<int> allowed = allowed_cpus();
    auto is_allowed = [&](int c) { return std::find(allowed.begin(), allowed.end(), c) != allowed.end(); };
    std::vector<std::vector<int>> cores;  // allowed PUs per core
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0) {
            const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
            for (int i = 0; i < n; ++i) {
                hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
                std::vector<int> pus;
                unsigned pu;
                hwloc_bitmap_foreach_begin(pu, core->cpuset) {
                    if (is_allowed(static_cast<int>(pu))) pus.push_back(static_cast<int>(pu));
                }
                hwloc_bitmap_foreach_end();
                if (!pus.empty()) cores.push_back(std::move(pus));
            }
        }
        hwloc_topology_destroy(topo);
    }
    std::vector<int> order;  // first PU of every core, then second PUs, ...
    for (std::size_t level = 0;; ++level) {
        bool any = false;
        for (auto& c : cores)
            if (level < c.size()) order.push_back(c[level]), any = true;
        if (!any) break;
    }
    for (int c : allowed)  // CPUs hwloc did not place: in order
        if (std::find(order.begin(), order.end(), c) == order.end()) order.push_back(c);
    return order;
}

std::vector<int> first_cpus(const std::vector<int>& by_core, unsigned processors) {
    std::vector<int> out(by_core.begin(), by_core.begin() + std::min<std::size_t>(processors, by_core.size()));
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<int> choose_cpus(unsigned processors) { return first_cpus(cpus_by_core(), processors); }

std::vector<unsigned> cache_groups(const std::vector<int>& cpus) {
    std::vector<unsigned> groups(cpus.size(), 0);
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return groups;
    if (hwloc_topology_load(topo) == 0) {
        std::vector<hwloc_obj_t> seen;  // the group objects, in order of first appearance
        for (std::size_t i = 0; i < cpus.size(); ++i) {
            hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topo, static_cast<unsigned>(cpus[i]));
            hwloc_obj_t group = nullptr;
            for (hwloc_obj_t o = pu; o != nullptr && group == nullptr; o = o->parent)
                if (o->type == HWLOC_OBJ_L3CACHE) group = o;
            for (hwloc_obj_t o = pu; o != nullptr && group == nullptr; o = o->parent)
                if (o->type == HWLOC_OBJ_PACKAGE) group = o;
            if (group == nullptr) continue;  // group 0
            auto it = std::find(seen.begin(), seen.end(), group);
            if (it == seen.end()) it = seen.insert(seen.end(), group);
            groups[i] = static_cast<unsigned>(it - seen.begin());
        }
    }
    hwloc_topology_destroy(topo);
    return groups;
}

void pin_current_thread(int cpu) noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

void pin_current_thread(const std::vector<int>& cpus) noexcept {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

}  // namespace coop::internal
