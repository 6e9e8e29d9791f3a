// all.hpp — Quirk's units benchmarks (2008, section 9): fib and ddb on lock-free units
// (backend native), fib-mutex and ddb-mutex on the mutex-per-unit baseline (every backend).
#pragma once

#include "harness/typelist.hpp"
#include "workloads/units/units_workloads.hpp"

namespace coopbench {

using UnitsWorkloads = TypeList<FibUnits, FibMutex, DdbUnits, DdbMutex>;

}  // namespace coopbench
