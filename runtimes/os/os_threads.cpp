#include "runtimes/os/os_threads.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "coop/cpus.hpp"

namespace coopbench::os {

std::vector<int> available_cpus() { return coop::internal::allowed_cpus(); }

namespace {
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
    // The order once per process: hwloc's topology load costs milliseconds, and the
    // backends choose at every run (a run of a sweep point starts its own runtime).
    static const std::vector<int> by_core = coop::internal::cpus_by_core();
    return coop::internal::first_cpus(by_core, processors);
}

cpu_set_t cpu_mask(unsigned processors) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : choose_cpus(processors)) CPU_SET(c, &set);
    return set;
}

void pin_current_thread(const std::vector<int>& cpus) { coop::internal::pin_current_thread(cpus); }

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
