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
// the three backends are one type (NativeBackend) with a fixed option. The price: one load
// of `kind_` and a predictable branch where each hot entry point begins (COOP_ON_KIND,
// runtime_internal.hpp), then a call to that kind's instantiation (callgrind:
// docs/native-runtime.md "Scheduling policies"). docs/scheduler-refactor-status.md: the
// step that removes the branch.
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

    // The scheduling calls come in two forms. `..._as<K>`: for the kind K known at compile
    // time, only K's code (the hot path: runtime_internal.hpp's per-kind entry points, one
    // branch on the kind where yield, suspend, make_ready, start and finish begin, then a
    // call to the instantiation for that kind). awakened without `_as`: one switch on the
    // kind, for the callers off the hot path (timers, inbox, join's finalizer); the idle
    // loop's pick is runtime_internal.hpp's pick_next. All take the calling
    // processor's index `self` from a caller that reached its Processor once, so no call
    // re-reads it through this_processor(); for kind Global `self` is unused.

    // awakened_as — `a` (owned by the caller) became ready on processor `self` (woken or
    // spawned there: it runs next, from runnext / the deque's LIFO end on a local kind): the
    // algorithm queues it, then a parked processor is woken unless `a` is Idle-priority
    // (Fig. 2 ENQUEUESWITCH). `next` false (joiner_awakened): behind the ready activities
    // instead (the ring's tail / the deque's FIFO end), not into runnext: a join is no
    // hand-off between running peers, and runnext would run the joiner between every two
    // children of a spawn-all-then-join-all loop (twice the switches, measured with create).
    // Executed only by processor `self`.
    template <Scheduling K>
    void awakened_as(unsigned self, Activity* a, bool next = true) noexcept {
        // Read before the enqueue: once queued, `a` may run (or be stolen), finish and be
        // freed elsewhere.
        const Priority priority = a->priority;
        if constexpr (K == Scheduling::global) {
            global_.awakened(global_.local(0), a);
        } else if constexpr (K == Scheduling::work_stealing) {
            if (next) ws_->awakened(ws_->local(self), a);
            else ws_->yielded(ws_->local(self), a);
        } else {
            if (next) ps_->awakened(ps_->local(self), a);
            else ps_->yielded(ps_->local(self), a);
        }
        // Published above (the global queue's enqueue, the ring's release store of
        // tail_/runnext, or the deque's guarded store); notify()'s seq_cst fence orders it
        // before its load of the parked count, the waker's half of park.hpp's Dekker pair
        // (a). One processor: the caller is it, and it is not parked (saves the fence).
        if (priority != Priority::Idle && processors_ > 1) notify();
    }
    // awakened — awakened_as for the runtime's kind. Executed only by processor `self`.
    void awakened(unsigned self, Activity* a, bool next = true) noexcept {
        switch (kind_) {
            case Scheduling::global: awakened_as<Scheduling::global>(self, a, next); return;
            case Scheduling::work_stealing: awakened_as<Scheduling::work_stealing>(self, a, next); return;
            case Scheduling::parasail: awakened_as<Scheduling::parasail>(self, a, next); return;
        }
    }
    // awakened — the same for a caller that does not know its index (timers, inbox): it is
    // reached through this_processor(), out of line (ws/dispatch.cpp). Any bound processor.
    void awakened(Activity* a) noexcept;

    // yielded_as — `a` yielded on processor `self`, which stays busy: queued behind the
    // ready ones. Executed only by processor `self` (fin_yield, on the resumed side of the
    // yield's switch: the same OS thread).
    template <Scheduling K>
    void yielded_as(unsigned self, Activity* a) noexcept {
        if constexpr (K == Scheduling::global) {
            // No wake-up (Fig. 2: this processor will run the queue itself).
            global_.yielded(global_.local(0), a);
        } else {
            // Read before the push: once queued, `a` may be stolen, run, finish and be freed.
            const Priority priority = a->priority;
            if constexpr (K == Scheduling::work_stealing) ws_->yielded(ws_->local(self), a);
            else ps_->yielded(ps_->local(self), a);
            // A yield asks for no help (Negele Fig. 2: "this processor stays busy"), but with
            // local queues the yielder now waits on this processor's queue while another
            // processor may have parked in the window between yield()'s pick and this push,
            // when nothing was queued here (models/local_park.pml -DSTRICT_YIELD;
            // test_yield_wake.cpp): if the activity that runs now never yields, the yielder
            // waits for good although a processor is idle. So: if a processor is parked,
            // notify. A relaxed load and no fence, to keep a yield cheap (one read of a line
            // that changes only when a processor parks or wakes): it can miss a processor that
            // parks at this very moment (its store not yet visible), and then the next yield
            // on this processor sees it — a yielding program yields again, so the work waits
            // for one more quantum at most, not for good. No lost wake-up of the protocol
            // depends on this (park.hpp's pairs are awakened's notify and the parker's
            // re-check); it restores parallelism.
            if (priority != Priority::Idle && processors_ > 1 && parking_.parked() != 0) notify();
        }
    }

    // pick_next_as — the next activity for processor `self`, of priority >= `min`, or none;
    // Pick::inherits: taken from runnext (the caller lets it keep the running quantum,
    // runtime_internal.hpp pick_next). Executed only by processor `self`.
    template <Scheduling K>
    Pick pick_next_as(unsigned self, Priority min) noexcept {
        if constexpr (K == Scheduling::global) {
            return global_.pick_next(global_.local(0), min);
        } else {
            Pick pick;
            if constexpr (K == Scheduling::work_stealing) pick = ws_->pick_next(ws_->local(self), min);
            else pick = ps_->pick_next(ps_->local(self), min);
            // A refill moved activities from the global queue into this processor's ring;
            // while each was in neither, a parker's has_ready() could miss it (ws_policy.hpp
            // refill) and sleep, and our caller (finish, yield, a block) goes on to run
            // pick.activity, maybe for good. notify() is the waker's half of park.hpp's
            // Dekker pair (a): its seq_cst fence orders the ring's tail stores (the pushes)
            // before its load of the parked count; the parker's fence orders its count before
            // its scan of the rings. So either the parker's scan sees them or we see it parked
            // and wake it. A relaxed look at the parked count without the fence (as yielded
            // does) could miss a parker whose increment is not yet visible, and nothing would
            // repair that here (the refiller may run a non-yielding activity): the fence costs
            // one mfence per refill, against the refill's up to 3 locked instructions per
            // activity moved (kGlobalBatch of them).
            if (pick.refilled != 0 && processors_ > 1) [[unlikely]]
                notify();
            return pick;
        }
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
    // spinning — processors counted as spinning now (tests).
    int spinning() const noexcept { return spinning_.load(std::memory_order_relaxed); }
    // parking — the park/wake protocol (tests and statistics).
    const Parking& parking() const noexcept { return parking_; }
    // ws_policy — the native-ws policy (nullptr for the other kinds); for the directed
    // tests that place activities in its queues (tests/native_ws/test_defects_runtime.cpp).
    RuntimeWsPolicy* ws_policy() noexcept { return ws_.get(); }

  private:
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
