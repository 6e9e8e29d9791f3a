// cpus.hpp — which CPUs a pinned runtime's workers use, and pinning (hwloc). The project's
// one implementation of the CPU choice: coop's pinned workers use it, and so do the
// OS-thread backends (runtimes/os/os_threads.hpp forwards to it), so that every backend of a
// comparison runs P processors on the same CPUs. coop's own, so that libcoop needs nothing
// of the harness to link.
#pragma once

#include <vector>

namespace coop::internal {

// allowed_cpus — the logical CPUs this process may run on (its affinity mask), in order;
// without a mask, 0 .. (online CPUs - 1).
std::vector<int> allowed_cpus();

// cpus_by_core — allowed_cpus() in the order workers take them: one processing unit per
// physical core first (hwloc's topology), then the second PUs of each core, ...; CPUs hwloc
// did not place (or every CPU, without a topology) follow in order. Loads the topology on
// every call (a few milliseconds): callers that choose often keep the result.
std::vector<int> cpus_by_core();

// first_cpus — the first `processors` CPUs of `by_core` (an order from cpus_by_core()),
// sorted; fewer when `by_core` has fewer (the remaining workers are not pinned, or share).
std::vector<int> first_cpus(const std::vector<int>& by_core, unsigned processors);

// choose_cpus — logical CPUs for `processors` workers: first_cpus(cpus_by_core(), processors).
std::vector<int> choose_cpus(unsigned processors);

// cache_groups — for each CPU of `cpus`, the id of the group it shares its last-level cache
// with (hwloc: its nearest L3 ancestor, else its package, else one group for all): workers
// pinned to CPUs of one group exchange cache lines far more cheaply than across groups
// (sockets, NUMA nodes, chiplets). Ids are small integers, equal for CPUs of one group;
// without a topology every CPU is in group 0. The stealing policies try victims of their
// own group first (ws/local_algorithm.hpp, steal_passes).
std::vector<unsigned> cache_groups(const std::vector<int>& cpus);

// pin_current_thread — restricts the calling thread to `cpu`.
void pin_current_thread(int cpu) noexcept;

// pin_current_thread — restricts the calling thread to the CPUs of `cpus` (empty: no change).
void pin_current_thread(const std::vector<int>& cpus) noexcept;

}  // namespace coop::internal
