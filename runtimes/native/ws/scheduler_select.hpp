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
// - Scheduler: awakened / yielded / pick_next / has_ready / suspend / notify / notify_all,
//   find_work (an idle processor steals) and start_spinning / stop_spinning. For kind
//   Global every call forwards inline to GlobalPriorityPolicy (scheduler.hpp). For the
//   local kinds the call goes out of line (ws/dispatch.cpp), which reaches the calling
//   processor's `Local` through this_processor() — a non-inlined call made inside that
//   function, after any switch (an activity may migrate between OS threads; a thread_local
//   address computed before a switch would be the old thread's).
// - Parking: the Scheduler's, the same for every kind (park.hpp, models/park_notify.pml):
//   suspend passes the parker's re-check "has_ready() of the algorithm, or more_work" to
//   it; the algorithms (algorithm.hpp) never wake anyone themselves. awakened() queues (the
//   global queue, or the own ring/deque) and then calls notify() when there is more than
//   one processor and the activity is not Idle-priority (the waker's half of park.hpp's
//   Dekker pair: the work is published before notify's fence), so a parked processor wakes
//   and runs or steals it.
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

#include "runtimes/native/park.hpp"
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

    // awakened — `a` (owned by the caller) became ready on the calling processor: the
    // algorithm queues it, then a parked processor is woken unless `a` is Idle-priority
    // (Fig. 2 ENQUEUESWITCH). Any bound processor.
    void awakened(Activity* a) noexcept {
        if (kind_ == Scheduling::global) [[likely]] {
            awakened_global(a);
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
            awakened_global(a);
            return;
        }
        awakened_local(a, /*next=*/false);
    }
    // yielded — `a` yielded on the calling processor, which stays busy: queued behind the
    // ready ones, no wake-up for the global algorithm (Fig. 2: this processor will run the
    // queue itself). Any bound processor.
    void yielded(Activity* a) noexcept {
        if (kind_ == Scheduling::global) [[likely]] {
            global_.yielded(global_.local(0), a);
            return;
        }
        yielded_local(a);
    }
    // pick_next — as GlobalPriorityPolicy's; on a local kind an activity taken from runnext
    // inherits the running quantum (Processor::keep_quantum, read by switch_to).
    Activity* pick_next(Priority min) noexcept {
        if (kind_ == Scheduling::global) [[likely]]
            return global_.pick_next(global_.local(0), min).activity;
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
    // suspend — parks processor `self` (idle) until notify, the timeout (ns, < 0: none) or a
    // spurious wake-up; returns at once if the algorithm's has_ready() or more_work(arg)
    // finds work (the parker's re-check, park.hpp (a)). Called only by processor `self`.
    void suspend(unsigned self, std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept;
    // notify — ResumeAnyProcessor: wakes one parked processor if some processor is parked
    // and no wake-up is already in flight (park.hpp). Call after publishing work. Any bound
    // processor.
    void notify() noexcept { parking_.wake_one(); }
    // notify_all — wakes every parked processor (stop, external submissions, timers). Any
    // thread.
    void notify_all() noexcept { parking_.wake_all(); }

    // stats — the counters summed over processors (names: docs/native-runtime.md).
    SchedulerStats stats() const;
    // cpus — the CPUs this process may use (its affinity mask when the runtime started).
    // Any thread may call it.
    int cpus() const noexcept { return cpus_; }
    // spinning — processors counted as spinning now (tests).
    int spinning() const noexcept { return spinning_.load(std::memory_order_relaxed); }
    // parking — the park/wake protocol (tests and statistics).
    const Parking& parking() const noexcept { return parking_; }
    // ws_policy — the native-ws policy (nullptr for the other kinds); for the directed
    // tests that place activities in its queues (tests/native_ws/test_defects_runtime.cpp).
    RuntimeWsPolicy* ws_policy() noexcept { return ws_.get(); }

  private:
    void awakened_global(Activity* a) noexcept {
        // Read before the enqueue: once queued, `a` may run, finish and be freed elsewhere.
        const Priority priority = a->priority;
        global_.awakened(global_.local(0), a);
        // One processor: the caller is it, and it is not parked (saves notify()'s fence).
        if (priority != Priority::Idle && processors_ > 1) notify();
    }
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
    GlobalPriorityPolicy global_;                 // kind global
    Parking parking_;                             // every kind
    std::unique_ptr<RuntimeWsPolicy> ws_;         // kind work_stealing
    std::unique_ptr<ws::ParasailPolicy> ps_;      // kind parasail
    std::unique_ptr<ProcessorStats[]> pstats_;
    // spinning_ — idle processors looking for work before they park (Go's nmspinning).
    // relaxed everywhere: it only bounds how many spin; no wake-up depends on it, the
    // parking protocol alone guarantees liveness.
    alignas(kCacheLine) std::atomic<int> spinning_{0};
};

}  // namespace coop::internal
