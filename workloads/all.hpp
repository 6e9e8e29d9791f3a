// all.hpp — every workload the harness knows: one list per area, concatenated.
// Adding a workload: write its header in its area and add it to that area's list.
#pragma once

#include "harness/typelist.hpp"
#include "workloads/apps/all.hpp"
#include "workloads/io/all.hpp"
#include "workloads/locks/all.hpp"
#include "workloads/micro/all.hpp"
#include "workloads/units/all.hpp"

namespace coopbench {

using AllWorkloads = Concat<MicroWorkloads, AppWorkloads, LockWorkloads, UnitsWorkloads, IoWorkloads>::type;

}  // namespace coopbench
