// cpus.hpp — which CPUs an I/O point's server and its load generator run on.
//
// Of the CPUs this process may use (sched_getaffinity), the client takes the last
// `client_threads` (at most all but one) and the server the first `processors` of the rest.
// When the rest is fewer than `processors` (P=2 on a 2-CPU machine, or one CPU in all) they
// cannot be kept apart: then both get every allowed CPU and the point says so (`shared`, the
// counter cpus_shared = 1). No CPU number is hard-coded: a 64-CPU machine gives the server
// its P and the client its own.
#pragma once

#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

#include <map>
#include <string>
#include <vector>

namespace coopbench::loadgen {

struct CpuSplit {
    std::vector<int> server, client;
    bool shared = false;
};

// allowed_cpus — the CPUs of the process's first thread (tid = pid): what the process was
// given. Not the calling thread's: an OS-thread backend runs its threads on its P CPUs
// (runtimes/pthreads: an affinity mask per spawned thread), and the workload runs on one.
inline std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(getpid(), sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

// process_cpus — the CPUs allowed when the process first asked: a server that pinned itself
// for its first run (pin_tasks_of_self) splits the same CPUs again for the next.
inline const std::vector<int>& process_cpus() {
    static const std::vector<int> cpus = allowed_cpus();
    return cpus;
}

inline CpuSplit split_cpus(unsigned processors, unsigned client_threads) {
    CpuSplit s;
    const std::vector<int>& all = process_cpus();
    if (all.empty()) return s;
    const std::size_t n = all.size();
    const std::size_t want_client = client_threads == 0 ? 1 : client_threads;
    const std::size_t want_server = processors == 0 ? 1 : processors;
    if (n >= want_client + want_server) {
        s.client.assign(all.end() - static_cast<long>(want_client), all.end());
        s.server.assign(all.begin(), all.begin() + static_cast<long>(want_server));
        return s;
    }
    s.server = all;
    s.client = all;
    s.shared = true;
    return s;
}

// client_threads — the `client_threads` parameter of a point (1 when absent).
inline unsigned client_threads(const std::map<std::string, std::string>& params) {
    auto it = params.find("client_threads");
    return it == params.end() ? 1u : static_cast<unsigned>(std::stoul(it->second));
}

inline std::string cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (int c : cpus) {
        if (!out.empty()) out += ',';
        out += std::to_string(c);
    }
    return out;
}

// pin_tasks_of_self — every thread of this process onto `cpus` (threads made later inherit
// the mask of the thread that makes them). Best effort: a refusal leaves it as it was.
inline void pin_tasks_of_self(const std::vector<int>& cpus) {
    if (cpus.empty()) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) CPU_SET(c, &set);
    if (DIR* d = opendir("/proc/self/task")) {
        while (dirent* e = readdir(d))
            if (e->d_name[0] != '.') sched_setaffinity(static_cast<pid_t>(std::atoi(e->d_name)), sizeof set, &set);
        closedir(d);
    }
}

}  // namespace coopbench::loadgen
