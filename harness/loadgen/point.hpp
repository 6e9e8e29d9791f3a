// point.hpp — one I/O point measured by the load generator: from a workload's name and
// parameters (workloads/io/echo.hpp declares them; `coopbench list` shows them) to the load
// (loadgen.hpp: Spec) and from the Result to one reply of the external-program protocol
// (docs/adding-a-backend.md: {"status", "seconds", "value", "check", "counters"}), the same
// for a C++ backend's in-process server and an external program's.
#pragma once

#include <sys/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/loadgen/cpus.hpp"

namespace coopbench::loadgen {

// measure_point — run `workload` (echo, http-hello, rpc, their -open; churn; echo-idle; echo-hogs) with `params` against 127.0.0.1:port,
// the server being process `server_pid` (its CPU time is sampled), the client on
// split.client; the reply names what failed, or is {"status": "refused"} for a limit of
// the system (too few file descriptors).
nlohmann::json measure_point(const std::string& workload, const std::map<std::string, std::string>& params, int port,
                             pid_t server_pid, const CpuSplit& split);

}  // namespace coopbench::loadgen
