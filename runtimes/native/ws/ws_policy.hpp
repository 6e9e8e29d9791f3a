// ws_policy.hpp — WorkStealingPolicy, the policy of `native-ws`: per-processor bounded
// rings with a runnext slot (local_queue.hpp), steal-half from random victims, overflow into
// and fairness checks of the existing global lock-free queue (queue.hpp).
//
// Wired into the runtime by ws/scheduler_select.hpp (see local_policy.hpp); parking and
// notify are the runtime's (park.hpp), so this file has no suspend/notify of its own.
//
// Citation: Negele et al. 2017 Sect. 7 (processor-local ready queues, balancing "only now
// and then") and Sect. 4.4 (round robin within a priority); Go runtime/proc.go (runqput
// with next=true for a woken/spawned goroutine, runqget's inheritTime, schedule's
// `schedtick%61 == 0` global check, findRunnable's stealWork: 4 passes over random
// victims, runnext only on the last pass, the spinning rule). Learnt from, not copied.
//
// Design summary
// - Default-priority activities live in the processor's LocalQueue<Activity, 256>: a woken
//   or spawned activity goes to runnext (it runs next and inherits the time slice: the
//   cache-hot hand-off of a producer/consumer pair), a yielded one to the ring's tail
//   (behind every other ready activity of this processor: round robin). A full ring moves
//   half of itself to the global Default queue (Go's runqputslow).
// - Realtime/High/Low/Idle stay in the global per-priority queues of the paper (the issue
//   allows it): they are rare, and their cross-processor order matters more than locality.
// - pick_next: higher priorities (global) first; every kGlobalCheckInterval-th pick the
//   global Default queue before the ring (so overflowed or externally submitted work is not
//   starved by a busy ring); then the ring (runnext bounded by kMaxRunnextStreak); then the
//   global Default queue; then Low/Idle.
// - find_work (an idle processor): if may_spin(): up to kStealPasses passes over the other
//   processors starting at a random one, stealing half a victim's ring; runnext only on the
//   last pass and only after kRunnextGraceNs (so a busy owner keeps its hand-off, a stuck
//   one cannot stall it: tokio #4941). TODO: same cache/NUMA group first (hwloc), once the
//   runtime hands the topology to the policy.
//
// Ownership rules: local(i) belongs to processor i: only the thread bound as processor i
// passes it to awakened/yielded/pick_next/find_work. The global queues need a bound
// processor (hazard pointers, queue.hpp). Activities are owned as in scheduler.hpp.
#pragma once

#include <time.h>

#include <cstdint>
#include <memory>

#include "runtimes/native/activity.hpp"
#include "runtimes/native/queue.hpp"
#include "runtimes/native/ws/local_policy.hpp"
#include "runtimes/native/ws/local_queue.hpp"

namespace coop::ws {

// kRunnextGraceNs — how long a thief waits before taking a victim's runnext (Go: ~3 us).
inline constexpr std::int64_t kRunnextGraceNs = 3000;
// kStealPasses — passes over the victims per find_work (Go: 4; the last may take runnext).
inline constexpr int kStealPasses = 4;

// spin_for_ns — busy-waits about `ns` nanoseconds (CLOCK_MONOTONIC; the default grace).
inline void spin_for_ns(std::int64_t ns) noexcept {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) >= ns) return;
    }
}

template <std::uint32_t RingCapacity = 256, class Hooks = NoRingHooks>
class WorkStealingPolicyT {
  public:
    using Ring = LocalQueue<Activity, RingCapacity, Hooks>;

    struct alignas(kRingLine) Local {
        Ring ring;
        unsigned index = 0;
        std::uint32_t ticks = 0;  // picks, for the fairness check
        XorShift rng{1};
        Counters counters;
    };

    explicit WorkStealingPolicyT(unsigned processors)
        : processors_(processors), locals_(std::make_unique<Local[]>(processors)) {
        for (unsigned i = 0; i < processors; ++i) {
            locals_[i].index = i;
            locals_[i].rng = XorShift(i + 1);
        }
    }

    Local& local(unsigned i) noexcept { return locals_[i]; }
    unsigned processors() const noexcept { return processors_; }

    // awakened — `a` became ready on (or was spawned by) the processor owning `self`: it
    // runs next there. The runtime then calls the park protocol's notify (ws/dispatch.cpp),
    // not this policy.
    void awakened(Local& self, Activity* a) {
        if (a->priority != Priority::Default) {
            global(a->priority).enqueue(a);
            return;
        }
        self.counters.overflowed += self.ring.push_next(a, overflow_to_global());
    }

    // yielded — `a` yielded: behind the other ready activities of this processor.
    void yielded(Local& self, Activity* a) {
        if (a->priority != Priority::Default) {
            global(a->priority).enqueue(a);
            return;
        }
        self.counters.overflowed += self.ring.push(a, overflow_to_global());
    }

    // pick_next — the next activity of priority >= min for the processor owning `self`.
    Pick pick_next(Local& self, Priority min) {
        for (int p = static_cast<int>(kPriorities) - 1; p > static_cast<int>(Priority::Default); --p) {
            if (p < static_cast<int>(min)) return {};
            if (Activity* a = try_global(static_cast<Priority>(p))) return {a, false};
        }
        if (min <= Priority::Default) {
            if (++self.ticks % kGlobalCheckInterval == 0) {
                ++self.counters.fairness_checks;
                if (Activity* a = try_global(Priority::Default)) {
                    ++self.counters.global_picks;
                    return {a, false};
                }
            }
            auto [a, inherits] = self.ring.pick();
            if (a != nullptr) {
                ++(inherits ? self.counters.runnext_hits : self.counters.local_picks);
                return {a, inherits};
            }
            if (Activity* g = try_global(Priority::Default)) {
                ++self.counters.global_picks;
                return {g, false};
            }
        }
        for (int p = static_cast<int>(Priority::Low); p >= static_cast<int>(min); --p)
            if (Activity* a = try_global(static_cast<Priority>(p))) return {a, false};
        return {};
    }

    // find_work — an idle processor steals (only Default activities live in rings).
    // `spinning`/`parked`: the counts the runtime keeps (ws/dispatch.cpp passes 0, 0 after
    // applying the rule itself); a processor
    // that may not spin returns at once and should park.
    Pick find_work(Local& self, Priority min, int spinning, int parked) {
        if (min > Priority::Default || processors_ < 2) return {};
        if (!may_spin(spinning, static_cast<int>(processors_), parked)) return {};
        const std::uint32_t had = self.ring.size_hint();  // own (thieves may shrink it)
        for (int pass = 0; pass < kStealPasses; ++pass) {
            const bool runnext_too = pass == kStealPasses - 1;
            const unsigned start = self.rng.next() % processors_;
            for (unsigned k = 0; k < processors_; ++k) {
                Local& victim = locals_[(start + k) % processors_];
                if (&victim == &self) continue;
                Activity* a = victim.ring.steal_into(self.ring, runnext_too,
                                                     [] { spin_for_ns(kRunnextGraceNs); });
                if (a != nullptr) {
                    // activities moved: the one returned plus those added to our ring
                    // (approximate if a thief of ours took some meanwhile)
                    const std::uint32_t now = self.ring.size_hint();
                    self.counters.steals += 1 + (now > had ? now - had : 0);
                    ++self.counters.steal_batches;
                    return {a, false};
                }
            }
        }
        ++self.counters.failed_steals;
        return {};
    }

    // has_ready — any ready activity anywhere (a hint: what a parker re-checks, O(P)).
    bool has_ready() const noexcept {
        for (auto& g : global_)
            if (!g.q.empty()) return true;
        for (unsigned i = 0; i < processors_; ++i)
            if (!locals_[i].ring.empty_hint()) return true;
        return false;
    }

    // global — the global queue of a priority (external submissions and overflow go here).
    Queue<Activity>& global(Priority p) noexcept { return global_[static_cast<unsigned>(p)].q; }

  private:
    auto overflow_to_global() {
        return [this](Activity* a) { global(Priority::Default).enqueue(a); };
    }
    Activity* try_global(Priority p) {
        auto& q = global(p);
        return q.empty() ? nullptr : q.dequeue();  // empty(): two plain loads, no RMW
    }

    struct alignas(kCacheLine) Global {
        Queue<Activity> q;
    };
    const unsigned processors_;
    Global global_[kPriorities];
    std::unique_ptr<Local[]> locals_;
};

using WorkStealingPolicy = WorkStealingPolicyT<>;
static_assert(LocalSchedulingPolicy<WorkStealingPolicy>);

}  // namespace coop::ws
