#include "runtimes/os/os_threads.hpp"

#include <hwloc.h>
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

namespace coopbench::os {

std::vector<int> available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    }
    if (cpus.empty()) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < std::max(1L, n); ++c) cpus.push_back(static_cast<int>(c));
    }
    return cpus;
}

namespace {
// cpus_by_core — available CPUs ordered: first PU of every core, then second PUs, ...
const std::vector<int>& cpus_by_core() {
    static std::vector<int> order = [] {
        const std::vector<int> allowed = available_cpus();
        std::vector<std::vector<int>> cores;
        hwloc_topology_t topo;
        if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
            const int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
            for (int i = 0; i < n; ++i) {
                hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
                std::vector<int> pus;
                unsigned pu;
                hwloc_bitmap_foreach_begin(pu, core->cpuset) {
                    if (std::find(allowed.begin(), allowed.end(), static_cast<int>(pu)) != allowed.end())
                        pus.push_back(static_cast<int>(pu));
                }
                hwloc_bitmap_foreach_end();
                if (!pus.empty()) cores.push_back(pus);
            }
            hwloc_topology_destroy(topo);
        }
        std::vector<int> out;
        for (std::size_t level = 0;; ++level) {
            bool any = false;
            for (auto& c : cores)
                if (level < c.size()) {
                    out.push_back(c[level]);
                    any = true;
                }
            if (!any) break;
        }
        // CPUs hwloc did not place (or no hwloc topology): keep them, in order.
        for (int c : allowed)
            if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        return out;
    }();
    return order;
}

long read_long(const char* path, long fallback) {
    std::ifstream in(path);
    long v;
    if (in >> v) return v;
    return fallback;
}

long system_tasks() {
    // /proc/loadavg: "0.00 0.01 0.05 1/345 6789" — the 4th field is running/total tasks.
    std::ifstream in("/proc/loadavg");
    std::string a, b, c, rt;
    if (in >> a >> b >> c >> rt) {
        auto slash = rt.find('/');
        if (slash != std::string::npos) return std::stol(rt.substr(slash + 1));
    }
    return 0;
}

long own_mappings() {
    std::ifstream in("/proc/self/maps");
    long n = 0;
    std::string line;
    while (std::getline(in, line)) ++n;
    return n;
}
}  // namespace

std::vector<int> choose_cpus(unsigned processors) {
    const auto& order = cpus_by_core();
    std::vector<int> out;
    for (unsigned i = 0; i < processors; ++i) out.push_back(order[i % order.size()]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

cpu_set_t cpu_mask(unsigned processors) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : choose_cpus(processors)) CPU_SET(c, &set);
    return set;
}

void pin_current_thread(const std::vector<int>& cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

std::optional<std::string> thread_capacity_problem(std::size_t threads, std::size_t stack_bytes) {
    const long tasks = system_tasks();
    const long pid_max = read_long("/proc/sys/kernel/pid_max", 1L << 22);
    const long threads_max = read_long("/proc/sys/kernel/threads-max", 1L << 22);
    const long map_max = read_long("/proc/sys/vm/max_map_count", 65530);
    struct rlimit nproc {};
    getrlimit(RLIMIT_NPROC, &nproc);
    const long margin = 64;  // leave room for the rest of the system
    struct Limit {
        long allowed;
        std::string what;
    };
    std::vector<Limit> limits = {
        {pid_max - tasks - margin, "kernel.pid_max " + std::to_string(pid_max) + " with " + std::to_string(tasks) +
                                       " tasks running"},
        {threads_max - tasks - margin, "kernel.threads-max " + std::to_string(threads_max)},
        // every thread stack is two mappings: the stack and its guard page
        {(map_max - own_mappings() - margin) / 2, "vm.max_map_count " + std::to_string(map_max) +
                                                      " (two mappings per thread stack)"},
    };
    if (nproc.rlim_cur != RLIM_INFINITY)
        limits.push_back({static_cast<long>(nproc.rlim_cur) - tasks, "RLIMIT_NPROC " + std::to_string(nproc.rlim_cur)});
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) {
        // each thread touches at least a few pages of stack plus kernel structures (~16 KiB)
        const long per_thread = 16 * 1024 + static_cast<long>(std::min<std::size_t>(stack_bytes, 4096));
        limits.push_back({pages * page / 2 / per_thread, "half of physical memory at 16 KiB per thread"});
    }
    for (auto& l : limits) {
        if (static_cast<long>(threads) > l.allowed) {
            std::ostringstream s;
            s << "system limit: " << threads << " OS threads requested, about " << std::max(0L, l.allowed)
              << " fit (" << l.what << ")";
            return s.str();
        }
    }
    return std::nullopt;
}

std::string errno_name(int err) {
    const char* name = strerrorname_np(err);
    std::string s = name ? name : ("errno " + std::to_string(err));
    return s + " (" + std::strerror(err) + ")";
}

}  // namespace coopbench::os
