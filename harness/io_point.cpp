// io_point.cpp — io_point.hpp (loadgen_program is in harness/loadgen/path.cpp).
#include "harness/io_point.hpp"

#include "harness/registry.hpp"

namespace coopbench {

bool serves_io(const std::string& workload) {
    const auto& ws = Registry::instance().workloads();
    auto it = ws.find(workload);
    return it != ws.end() && it->second.info(Machine{}).io;
}

std::vector<std::string> io_host_command(const std::vector<std::string>& command) {
    std::vector<std::string> out{loadgen_program(), "host"};
    out.insert(out.end(), command.begin(), command.end());
    return out;
}

}  // namespace coopbench
