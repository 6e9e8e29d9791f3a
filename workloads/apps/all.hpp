// all.hpp — the workloads of this area, in the order `coopbench list` shows them.
#pragma once

#include "harness/typelist.hpp"

namespace coopbench {

using AppWorkloads = TypeList<>;

}  // namespace coopbench
