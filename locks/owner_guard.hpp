// owner_guard.hpp — the owner/non-owner guard (`owner-guard`, `owner-guard-asym`) as the
// lock library and its workloads name it: locks::OwnerGuard, locks::OwnerGuardAsym. The
// protocol lives in coop (coop/src/owner_guard.hpp: its design, citation and memory
// orders), because native-parasail's deques stand on it; this header only gives it its
// locks:: names, so the lock workloads and coop share one implementation.
#pragma once

#include "coop/src/owner_guard.hpp"

namespace locks {

using coop::OwnerGuard;      // the blog's protocol with sequentially consistent flags
using coop::OwnerGuardAsym;  // the same with an asymmetric fence (membarrier on the non-owners' side)
using coop::OwnerGuardT;

}  // namespace locks
