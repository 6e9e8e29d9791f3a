// io_point.hpp — where the driver meets the I/O workloads (workloads/io/): the load
// generator's program, and how an external backend's program serves such a point.
//
// A workload whose WorkloadInfo says `io` is measured with a server and a client in two
// processes: the client is always the harness's coopbench-loadgen (harness/loadgen/). A C++
// backend's server runs in the point's process and starts the load generator as its child
// (workloads/io/echo.hpp); an external backend's program is the server, and the point's
// process runs `coopbench-loadgen host PROGRAM ARGS...` instead of the program, which starts
// the program with the request, loads it and replies for it (docs/adding-a-backend.md,
// "Serving an I/O workload").
#pragma once

#include <string>
#include <vector>

namespace coopbench {

// loadgen_program — $COOPBENCH_LOADGEN when set, else the build's coopbench-loadgen.
std::string loadgen_program();

// serves_io — whether the registered workload `name` is an I/O workload (WorkloadInfo::io).
bool serves_io(const std::string& workload);

// io_host_command — `command` (an external backend's program and its arguments) wrapped so
// that the load generator hosts it: {loadgen, "host", command...}.
std::vector<std::string> io_host_command(const std::vector<std::string>& command);

}  // namespace coopbench
