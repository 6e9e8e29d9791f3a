// os_threads.hpp — what backends built on OS threads share: choosing P cores (an affinity
// mask; coop's hwloc choice, coop/include/coop/cpus.hpp, so that every backend of a comparison
// runs on the same CPUs) and checking in advance whether N more OS threads can fit.
#pragma once

#include <sched.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace coopbench::os {

// available_cpus — the logical CPUs this process may run on (its affinity mask), in order.
std::vector<int> available_cpus();

// choose_cpus — P logical CPUs for a run of P processors, sorted: one processing unit per
// physical core first (from hwloc's topology), then the cores' further hyperthreads
// (coop::internal::choose_cpus, with the topology read once per process). P larger than the
// machine: all its allowed CPUs.
std::vector<int> choose_cpus(unsigned processors);

// cpu_mask — the affinity mask of choose_cpus(processors).
cpu_set_t cpu_mask(unsigned processors);

// pin_current_thread — restrict the calling thread to `cpus` (empty: no change).
void pin_current_thread(const std::vector<int>& cpus);

// thread_capacity_problem — why `threads` more OS threads with `stack_bytes` stacks cannot
// be created now (pid_max, threads-max, RLIMIT_NPROC, vm.max_map_count, memory), or nothing.
std::optional<std::string> thread_capacity_problem(std::size_t threads, std::size_t stack_bytes);

// errno_name — "EAGAIN (Resource temporarily unavailable)" for an error number.
std::string errno_name(int err);

}  // namespace coopbench::os
