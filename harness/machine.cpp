#include "harness/machine.hpp"

#include <hwloc.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <map>

#include "runtimes/os/os_threads.hpp"

#include "build_facts.hpp"  // generated: harness/CMakeLists.txt

namespace coopbench {

Machine detect_machine() {
    Machine m;
    m.cores = static_cast<unsigned>(os::available_cpus().size());
    if (m.cores == 0) m.cores = 1;
    return m;
}

std::string hostname() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "host";
    std::string h(buf);
    return h.substr(0, h.find('.'));
}

namespace {
std::string command_output(const std::string& cmd) {
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        std::array<char, 256> buf{};
        while (fgets(buf.data(), static_cast<int>(buf.size()), p)) out += buf.data();
        pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

// first_cpuinfo — the first CPU's block of /proc/cpuinfo, as key -> value ("model name",
// "cpu family", "model", ...; keys and values trimmed).
std::map<std::string, std::string> first_cpuinfo() {
    std::map<std::string, std::string> info;
    std::ifstream in("/proc/cpuinfo");
    auto trim = [](std::string t) {
        const auto b = t.find_first_not_of(" \t"), e = t.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
    };
    for (std::string line; std::getline(in, line) && !line.empty();) {
        const auto c = line.find(':');
        if (c != std::string::npos) info[trim(line.substr(0, c))] = trim(line.substr(c + 1));
    }
    return info;
}

std::string cpu_model(const std::map<std::string, std::string>& info) {
    auto it = info.find("model name");
    return it == info.end() || it->second.empty() ? "unknown" : it->second;
}

// cpu_id — what tells two hosts with the same model name apart (a cloud's "AMD EPYC" covers
// several generations, and reference runs made on different days landed on different
// hosts, up to 4x apart for OS threads): family/model/stepping, clock and cache as
// /proc/cpuinfo gives them for the first CPU.
std::string cpu_id(const std::map<std::string, std::string>& info) {
    auto get = [&](const char* k) {
        auto it = info.find(k);
        return it == info.end() ? std::string() : it->second;
    };
    const std::string family = get("cpu family"), model = get("model"), stepping = get("stepping"),
                      mhz = get("cpu MHz"), cache = get("cache size");
    if (family.empty() && model.empty()) return "unknown";
    std::string id = "family " + family + " model " + model;
    if (!stepping.empty()) id += " stepping " + stepping;
    if (!mhz.empty()) id += ", " + mhz.substr(0, mhz.find('.')) + " MHz";
    if (!cache.empty()) id += ", cache " + cache;
    return id;
}

// cpu_mitigations — the kernel's report on the vulnerabilities whose mitigations change the
// cost of a system call or an OS context switch (page-table isolation doubles it), from
// /sys/devices/system/cpu/vulnerabilities: each one that is not "Not affected", mitigated
// ("Mitigation: PTI") or not ("Vulnerable").
std::string cpu_mitigations() {
    std::string out;
    for (const char* v : {"meltdown", "spectre_v2", "spec_store_bypass", "retbleed", "spec_rstack_overflow"}) {
        std::ifstream in(std::string("/sys/devices/system/cpu/vulnerabilities/") + v);
        std::string line;
        if (!std::getline(in, line) || line.rfind("Not affected", 0) == 0) continue;
        if (!out.empty()) out += "; ";
        out += std::string(v) + ": " + line;
    }
    return out.empty() ? "none reported" : out;
}
}  // namespace

nlohmann::json machine_context() {
    nlohmann::json c;
    c["host"] = hostname();
    const auto cpuinfo = first_cpuinfo();
    c["cpu_model"] = cpu_model(cpuinfo);
    c["cpu_id"] = cpu_id(cpuinfo);
    c["cpu_mitigations"] = cpu_mitigations();
    c["cores_available"] = detect_machine().cores;  // typed as schema.json's context says
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        c["physical_cores"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        c["logical_cpus"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        c["sockets"] = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        c["numa_nodes"] = std::max(1, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
        hwloc_topology_destroy(topo);
    }
    utsname u{};
    if (uname(&u) == 0) c["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
    c["compiler"] = COOPBENCH_COMPILER;
    c["build_type"] = COOPBENCH_BUILD_TYPE;
    c["build_flags"] = COOPBENCH_BUILD_FLAGS;
    std::string src = COOPBENCH_SOURCE_DIR;
    std::string commit = command_output("git -C '" + src + "' rev-parse --short=12 HEAD 2>/dev/null");
    // "-dirty": the sources differ from the commit. results/ is left out: a batch of sweeps
    // (scripts/reference.sh) replaces committed result folders as it goes, which says nothing
    // about the code that measured them (the reference runs of November 2026 were stamped
    // "-dirty" by their own earlier folders).
    if (!commit.empty() &&
        !command_output("git -C '" + src + "' status --porcelain --untracked-files=no -- . ':(exclude)results' 2>/dev/null")
             .empty())
        commit += "-dirty";
    c["git_commit"] = commit.empty() ? "unknown" : commit;
    return c;
}

}  // namespace coopbench
