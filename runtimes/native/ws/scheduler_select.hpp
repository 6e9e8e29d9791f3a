// scheduler_select.hpp — the runtime's scheduling policy chosen when a Runtime starts
// (coop::Options::scheduling): the paper's global queues (GlobalPriorityPolicy, backend
// `native`), Go-style work stealing (WorkStealingPolicy, `native-ws`) or ParaSail's
// owner-guarded deques (ParasailPolicy, `native-parasail`), in ONE compiled runtime.
//
// Why a run-time choice and not one compiled runtime per policy (the seam must be
// ODR-safe with three policies in one binary): the harness registers every
// backend in one binary; compiling the runtime's sources once per policy inside an inline
// namespace would need the namespace in every header with inline code or thread_locals,
// including hazard.hpp/queue.hpp/slab.hpp/park.hpp, and a
// dispatch for the extern "C" quantum symbols the clang plugin emits (one per process).
// Here there is one definition of everything, so there is nothing for the ODR to catch, and
// the three backends are one type (NativeBackend) with a fixed option. The price: the
// GlobalPriorityPolicy path pays one load of `kind_` and a predictable branch per call
// (callgrind: docs/native-runtime.md "Scheduling policies").
//
// Design summary
// - Scheduler has GlobalPriorityPolicy's interface (awakened / yielded / pick_next /
//   has_ready / suspend / notify / notify_all) plus find_work (an idle processor steals)
//   and start_spinning / stop_spinning. For kind Global every call forwards inline to GlobalPriorityPolicy,
//   exactly as before. For the local kinds the call goes out of line (ws/dispatch.cpp),
//   which reaches the calling processor's `Local` through this_processor() — a non-inlined
//   call made inside that function, after any switch (an activity may migrate between OS
//   threads; a thread_local address computed before a switch would be the old thread's).
// - Parking: the local kinds reuse GlobalPriorityPolicy's park/wake protocol unchanged
//   (park.hpp, models/park_notify.pml): their suspend passes the parker's re-check
//   "has_ready() of the local policy, or more_work" to it, and notify/notify_all are its.
//   awakened() on a local kind pushes onto the own ring/deque and then calls notify() when
//   there is more than one processor (the waker's half of park.hpp's Dekker pair: the work
//   is published before notify's fence), so a parked processor wakes and steals it.
// - Spinning (every kind; worker.cpp's idle loop): an idle processor that finds nothing
//   becomes a "spinner" only if start_spinning allows it, Go's rule 2*spinning < P - parked
//   with the running processors capped by the usable CPUs (when processors outnumber cores,
//   those not parked are not all running); otherwise it parks at once. A spinner polls (and
//   steals, find_work) for at most kIdleSpinNs, giving its core back every
//   kSpinPollsPerYield polls; it stops spinning when it finds work or parks.
// - Counters (per processor, written by their owner only, relaxed): the policies' steals,
//   failed steals, runnext hits, ...; here parks (suspend calls that slept or re-checked)
//   and wake-ups (parks ended by a wake_one that chose this processor).
//
// Ownership rules: as scheduler.hpp; a processor's Local and ProcessorStats are touched
// only by the OS thread bound as that processor (stats() reads them relaxed, racy by design).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtimes/native/scheduler.hpp"
#include "runtimes/native/ws/parasail_policy.hpp"
#include "runtimes/native/ws/ws_policy.hpp"

namespace coop::internal {

// kRuntimeRingCapacity — the ring of native-ws (ws_policy.hpp, kRingCapacity says why 4096).
inline constexpr std::uint32_t kRuntimeRingCapacity = ws::kRingCapacity;
using RuntimeWsPolicy = ws::WorkStealingPolicyT<kRuntimeRingCapacity>;

// SchedulerStats — what a runtime reports per run (sums over processors).
using SchedulerStats = std::map<std::string, std::uint64_t>;

class Scheduler {
  public:
    Scheduler(unsigned processors, Scheduling kind);
    ~Scheduler();
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;

    Scheduling kind() const noexcept { return kind_; }
    // set_groups — the cache group of each processor (cpus.hpp, cache_groups; a pinned
    // runtime, before its workers start): the local policies steal within a group first.
    void set_groups(const std::vector<unsigned>& group_of);

    void awakened(Activity* a) noexcept {
        if (kind_ == Scheduling::global) [[likely]] {
            global_.awakened(a);
            return;
        }
        awakened_local(a);
    }
    // joiner_awakened — `a` waited for an activity that just finished on this processor: for
    // the global policy the same as awakened(); the local policies queue it behind the ready
    // activities (the ring's tail / the deque's FIFO end), not into runnext: a join is no
    // hand-off between running peers, and runnext would run the joiner between every two
    // children of a spawn-all-then-join-all loop (twice the switches, measured with create).
    void joiner_awakened(Activity* a) noexcept {
        if (kind_ == Scheduling::global) [[likely]] {
            global_.awakened(a);
            return;
        }
        awakened_local(a, /*next=*/false);
    }
    void yielded(Activity* a) noexcept {
        if (kind_ == Scheduling::global) [[likely]] {
            global_.yielded(a);
            return;
        }
        yielded_local(a);
    }
    // pick_next — as GlobalPriorityPolicy's; on a local kind an activity taken from runnext
    // inherits the running quantum (Processor::keep_quantum, read by switch_to).
    Activity* pick_next(Priority min) noexcept {
        if (kind_ == Scheduling::global) [[likely]]
            return global_.pick_next(min);
        return pick_next_local(min);
    }
    bool has_ready() const noexcept;
    // find_work — an idle processor `self` looks for work elsewhere (steals); nullptr: none.
    // Global: nothing to steal. Called only by processor `self`, while it spins
    // (start_spinning).
    Activity* find_work(unsigned self) noexcept {
        if (kind_ == Scheduling::global) [[likely]]
            return nullptr;
        return find_work_local(self);
    }
    // start_spinning — processor `self`, idle, asks to spin (look for work before parking):
    // true if it may (it is then counted as spinning until stop_spinning), false if it
    // should park at once. The spinning rule (Go's 2*nmspinning < P - npidle, runtime/
    // proc.go wakep/findRunnable), for every kind, with the processors counted as running
    // capped by the CPUs this process may use: when processors outnumber cores, the ones not
    // parked are not all running, and a spinner then takes a core from one that has work.
    // Called only by processor `self` (its idle loop).
    bool start_spinning(unsigned self) noexcept;
    // stop_spinning — processor `self` found work or is about to park; `polls`: the polls
    // it made since it last gave its core back (statistics). Called only by processor
    // `self`.
    void stop_spinning(unsigned self, unsigned polls) noexcept;
    // spin_yielded — processor `self`, spinning, gave its core back (statistics); `polls`:
    // the polls it made since the last time it did. Called only by processor `self`.
    void spin_yielded(unsigned self, unsigned polls) noexcept {
        ProcessorStats& st = pstats_[self];
        ++st.spin_yields;
        if (polls > kSpinHogPolls) ++st.spin_hogs;
    }
    void suspend(unsigned self, std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept;
    void notify() noexcept { global_.notify(); }
    void notify_all() noexcept { global_.notify_all(); }

    // stats — the counters summed over processors (names: docs/native-runtime.md).
    SchedulerStats stats() const;
    // cpus — the CPUs this process may use (its affinity mask when the runtime started).
    // Any thread may call it.
    int cpus() const noexcept { return cpus_; }
    // spinning — processors counted as spinning now (tests).
    int spinning() const noexcept { return spinning_.load(std::memory_order_relaxed); }
    const GlobalPriorityPolicy& global() const noexcept { return global_; }
    // ws_policy — the native-ws policy (nullptr for the other kinds); for the directed
    // tests that place activities in its queues (tests/native_ws/test_defects_runtime.cpp).
    RuntimeWsPolicy* ws_policy() noexcept { return ws_.get(); }

  private:
    void awakened_local(Activity* a, bool next = true) noexcept;
    void yielded_local(Activity* a) noexcept;
    Activity* pick_next_local(Priority min) noexcept;
    Activity* find_work_local(unsigned self) noexcept;

    // ProcessorStats — a processor's spinning state and counters (owner-only writes,
    // ws::Counter: relaxed, read by stats()).
    struct alignas(kCacheLine) ProcessorStats {
        ws::Counter parks, wakeups;
        ws::Counter spin_yields;   // sched_yield calls while spinning
        ws::Counter spin_hogs;     // polls in a row without a yield > kSpinHogPolls
        ws::Counter spin_overcap;  // spin starts that made spinners > half the usable CPUs
        bool spinning = false;
    };

    const Scheduling kind_;
    const unsigned processors_;
    // cpus_ — the CPUs this process may run on (sched_getaffinity at construction): the
    // most processors that can be running at once.
    const int cpus_;
    GlobalPriorityPolicy global_;                 // kind global; parking for every kind
    std::unique_ptr<RuntimeWsPolicy> ws_;         // kind work_stealing
    std::unique_ptr<ws::ParasailPolicy> ps_;      // kind parasail
    std::unique_ptr<ProcessorStats[]> pstats_;
    // spinning_ — idle processors looking for work before they park (Go's nmspinning).
    // relaxed everywhere: it only bounds how many spin; no wake-up depends on it, the
    // parking protocol alone guarantees liveness.
    alignas(kCacheLine) std::atomic<int> spinning_{0};
};

}  // namespace coop::internal
