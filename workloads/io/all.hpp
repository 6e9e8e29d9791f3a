// all.hpp — the I/O workloads: servers on each backend, loaded by the harness's load
// generator (harness/loadgen/).
#pragma once

#include "harness/typelist.hpp"
#include "workloads/io/echo.hpp"

namespace coopbench {

using IoWorkloads = TypeList<Echo, EchoOpen>;

}  // namespace coopbench
