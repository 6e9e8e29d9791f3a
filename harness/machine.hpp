// machine.hpp — what the run was measured on: recorded in every result file.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/workload.hpp"

namespace coopbench {

// detect_machine — the processing units this process may use (its affinity mask).
Machine detect_machine();

// machine_context — CPU model, logical/physical cores, sockets, NUMA nodes, kernel,
// hostname, compiler, flags, build type, git commit (string values only).
nlohmann::json machine_context();

// hostname — the machine's short host name ("host" when unknown).
std::string hostname();

}  // namespace coopbench
