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

// pin_current_thread — restricts the calling thread to `cpu`.
void pin_current_thread(int cpu) noexcept;

}  // namespace coop::internal
