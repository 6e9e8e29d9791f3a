// cpus.hpp — which CPUs a pinned runtime's workers use, and pinning (hwloc; coop's own, so
// that libcoop does not need the harness's coopbench::os to link).
#pragma once

#include <vector>

namespace coop::internal {

// choose_cpus — logical CPUs for `processors` workers: one processing unit per physical
// core first (hwloc's topology), then the second PUs of each core, ...; restricted to the
// process's affinity mask; sorted, without duplicates (fewer than `processors` when the
// machine has fewer CPUs: the remaining workers are not pinned).
std::vector<int> choose_cpus(unsigned processors);

// cache_groups — for each CPU of `cpus`, the id of the group it shares its last-level cache
// with (hwloc: its nearest L3 ancestor, else its package, else one group for all): workers
// pinned to CPUs of one group exchange cache lines far more cheaply than across groups
// (sockets, NUMA nodes, chiplets). Ids are small integers, equal for CPUs of one group;
// without a topology every CPU is in group 0. The stealing policies try victims of their
// own group first (ws/local_policy.hpp, steal_passes).
std::vector<unsigned> cache_groups(const std::vector<int>& cpus);

// pin_current_thread — restricts the calling thread to `cpu`.
void pin_current_thread(int cpu) noexcept;

}  // namespace coop::internal
