// all.hpp — the workloads of this area, in the order `coopbench list` shows them:
// the CAL paper's abortable-lock benchmark and ParaSail's owner/non-owner access.
#pragma once

#include "harness/typelist.hpp"
#include "workloads/locks/abortable_lock.hpp"
#include "workloads/locks/owner_access.hpp"

namespace coopbench {

using LockWorkloads = TypeList<AbortableLockWorkload, OwnerAccessWorkload>;

}  // namespace coopbench
