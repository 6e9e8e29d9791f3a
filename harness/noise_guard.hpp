// noise_guard.hpp — the noise guard: whether a fork ran while other work competed for the
// machine, from /proc/loadavg and /proc/stat read just before and after it. A noisy fork is
// recorded and marked (results.csv's `noisy`), never dropped.
#pragma once

#include <filesystem>
#include <functional>

namespace coopbench {

// Noise — the noise guard of one fork: the 1-minute load average and the other
// runnable processes just before and just after it, the CPUs other work kept busy during
// it, and whether the machine was busy.
struct Noise {
    double load_before = -1, load_after = -1;  // -1: unknown (recorded, not in the rule)
    int runnable_before = -1, runnable_after = -1;
    double other_cpus = -1;  // mean CPUs busy with other work during the fork, -1: unknown
    double steal_cpus = -1;  // mean CPUs' worth of steal (the hypervisor ran other guests), -1: unknown
    bool noisy = false;
};

// ProcReader — reads /proc/loadavg and /proc/stat under `root` (tests give a fake folder).
struct ProcReader {
    std::filesystem::path root = "/proc";
    double load1() const;         // the 1-minute load average, -1 when unreadable
    int runnable() const;         // procs_running minus the reader itself, -1 when unreadable
    int runnable_settled() const;  // the fewest of settled_runnable's readings (below)
    double busy_seconds() const;  // all CPUs' non-idle time since boot (user, nice, system,
                                  // irq, softirq, steal), -1 when unreadable
    double steal_seconds() const;  // all CPUs' steal time since boot, -1 when unreadable or
                                   // not counted (a kernel whose cpu line has no steal field)
    unsigned cpus() const;        // CPUs the "cpu" line sums over (cpuN lines), 0: unknown
    static double tick_seconds();  // the clock tick of /proc/stat's counters
};

// settled_runnable — the fewest runnable processes over `samples` readings of `read`, with
// `wait` between them (-1 when a reading is -1). One reading of procs_running is an instant:
// on a quiet machine it catches a kernel worker or the just-reaped child's exiting threads
// (in the reference folders re-made on a quiet machine in November 2026, 111 of 1,607
// points were marked noisy, every one by a single such reading, with other_cpus below its
// threshold), while work that competes with a point is runnable at every reading.
// ProcReader::runnable_settled takes 5 readings 0.5 ms apart.
int settled_runnable(const std::function<int()>& read, int samples, const std::function<void()>& wait);

// other_cpus — the mean number of CPUs busy with work other than the fork's own during a
// fork of `wall` seconds, from /proc/stat's busy time before and after and the fork's own
// CPU time (`own`, the child's rusage). The counters tick in units of `tick`, so up to one
// tick per CPU may be over-counted: that is subtracted (a short fork cannot look busy from
// rounding alone). Never below 0; -1 when a reading is missing.
double other_cpus(double busy_before, double busy_after, double own, double wall, unsigned cpus, double tick);

// steal_cpus — the mean number of CPUs' worth of steal time during a fork of `wall`
// seconds: time a virtual CPU was ready to run but the hypervisor ran something else (other
// guests, the host). It is in busy_seconds, hence in other_cpus and the noisy rule already;
// recorded apart because it slows a fork without any process here being runnable: a point
// whose forks differ while no reading shows other work may show it here. Less one tick per
// CPU for the counters' rounding, never below 0; -1 when a reading is missing.
double steal_cpus(double steal_before, double steal_after, double wall, unsigned cpus, double tick);

// is_noisy — other runnable processes above the cores the point leaves free (`cores` -
// `processors`) just before or after the fork, or other work that kept more than that plus
// half a core busy during it. The load average is not in the rule: it counts the sweep's own
// threads too (pthreads create at N=10^4 put it at 537 with nothing else running, and it
// decays over minutes, so every later point looked busy).
bool is_noisy(const Noise& n, unsigned cores, unsigned processors);

}  // namespace coopbench
