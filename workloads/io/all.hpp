// all.hpp — the I/O workloads: servers on each backend, loaded by the harness's load
// generator (harness/loadgen/).
#pragma once

#include "harness/typelist.hpp"
#include "workloads/io/echo.hpp"
#include "workloads/io/http.hpp"
#include "workloads/io/churn.hpp"
#include "workloads/io/rpc.hpp"
#include "workloads/io/idle.hpp"
#include "workloads/io/hogs.hpp"

namespace coopbench {

using IoWorkloads = TypeList<Echo, EchoOpen, HttpHello, HttpHelloOpen, Rpc, RpcOpen, Churn, EchoIdle, EchoHogs>;

}  // namespace coopbench
