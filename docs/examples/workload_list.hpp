// workload_list.hpp — docs/adding-a-workload.md, step 2: the area's list with the new
// workload at its end (in a namespace of its own here, so the real list stays as it is;
// in the tree the line replaces the one in workloads/micro/all.hpp).
#pragma once

#include "docs/examples/counter.hpp"
#include "harness/typelist.hpp"
#include "workloads/micro/all.hpp"

namespace coopbench::example {

using MicroWorkloads = TypeList<Create, Switch, LockLocal, LockGlobal, Share, Counter>;

}  // namespace coopbench::example
