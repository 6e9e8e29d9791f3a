// local_algorithm.hpp — the pieces both processor-local algorithms share (each meets the one
// Algorithm concept, algorithm.hpp): the global queues and the pick order around the local
// queue, the steal passes over random victims. ws_ring.hpp and parasail_deque.hpp differ
// only in their local queue and in how they put to and take from it.
//
// Run by Scheduler<A> (scheduler.hpp; coop::Options::scheduling, backends native-ws,
// native-parasail): its caller passes each processor's `Local` by index, it applies the
// spinning rule (SchedulerCore::start_spinning, the only place it lives) before it lets a
// processor steal, and parks through park.hpp's protocol with has_ready() as the parker's
// re-check (no second park protocol).
//
// Citation: Go runtime/proc.go
// (schedule: the global run queue checked every 61 schedticks; findRunnable: steal from
// random victims, runnext only on the last pass; the spinning rule 2*nmspinning < P -
// npidle in wakep/findRunnable), learnt from, not copied.
#pragma once

#include <sched.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "coop/activity.hpp"
#include "coop/algorithm.hpp"
#include "coop/queue.hpp"

namespace coop::ws {

using coop::internal::Activity;
using coop::internal::Counter;
using coop::internal::Counters;
using coop::internal::Pick;

// kGlobalCheckInterval — every this many picks the global queue is looked at first, so
// that a processor whose local queue never empties cannot starve it (Go: 61, a prime so it
// does not beat against other periodic patterns).
inline constexpr std::uint32_t kGlobalCheckInterval = 61;

// XorShift — the victim chooser's state (per processor, owner-only).
struct XorShift {
    std::uint32_t s;
    explicit XorShift(std::uint32_t seed) : s(seed * 2654435761u + 1u) {}
    std::uint32_t next() noexcept {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        return s;
    }
};

// kRunnextGraceNs — how long a thief waits before taking a victim's runnext or lone item
// (Go: ~3 us), so that a busy owner keeps its hand-off and a stuck one cannot stall it.
inline constexpr std::int64_t kRunnextGraceNs = 3000;
// kStealPasses — passes over the victims per find_work (Go: 4; the last may take runnext).
inline constexpr int kStealPasses = 4;

// spin_for_ns — waits about `ns` nanoseconds (CLOCK_MONOTONIC; the default grace), giving
// the core back between looks at the clock (sched_yield; Go's runqgrab sleeps, usleep(3),
// for the same grace): the owner whose hand-off the thief waits for may be waiting for
// this very core when processors outnumber cores.
inline void spin_for_ns(std::int64_t ns) noexcept {
    timespec a{}, b{};
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (;;) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &b);
        if ((b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec) >= ns) return;
    }
}

// GlobalQueues — the paper's lock-free global queues, one per priority (queue.hpp), as both
// local policies keep them: every non-Default activity, overflow and external submissions.
//
// The summary word: bit p of `nonempty_` is set by every enqueue into queue p (after it) and
// cleared by a take that found queue p empty, which then looks at the queue once more and
// sets the bit again if it is not empty. So a pick tests one word instead of the queues of
// the priorities above Default (each empty() is two loads of two lines). The invariant: a
// bit is never left clear over a non-empty queue once every enqueue and take in flight has
// ended (models/local_park.pml, the monitor `summary`; the mutant BUG_SUMMARY_NO_RECHECK
// clears without looking again and Spin rejects it). The parker's re-check (any()) reads the
// queues themselves, not the word: park.hpp's protocol is unchanged.
class GlobalQueues {
  public:
    Queue<Activity>& operator[](Priority p) noexcept { return q_[static_cast<unsigned>(p)].q; }

    // push — enqueues `a` (or an overflow chain) at priority p's tail, then sets p's bit.
    // acq_rel on the bit: the release makes the enqueue visible to a taker whose clearing
    // RMW reads this value or a later one (an RMW continues the release sequence), so that
    // taker's re-check sees the item. Any bound processor.
    void push(Priority p, Activity* a) {
        (*this)[p].enqueue(a);
        nonempty_.fetch_or(bit(p), std::memory_order_acq_rel);
    }
    void push(Priority p, Queue<Activity>::Chain& chain) {
        (*this)[p].enqueue(chain);
        nonempty_.fetch_or(bit(p), std::memory_order_acq_rel);
    }

    // take — the head of priority p's queue, or nullptr. p's bit clear: nullptr without
    // looking at the queue. Otherwise empty() (two plain loads, no RMW: queue.hpp empty()
    // says why a lagging tail inside an overflow chain cannot hide items from it) and
    // dequeue(); finding nothing, the bit is cleared and the queue looked at again. Any
    // bound processor.
    Activity* take(Priority p) {
        // relaxed: a hint. A bit read stale-clear only delays this pick: the parker's re-check
        // reads the queues, so an idle processor comes back and reads the word again.
        if ((nonempty_.load(std::memory_order_relaxed) & bit(p)) == 0) return nullptr;
        auto& q = (*this)[p];
        if (!q.empty()) {
            COOP_HOOK(global_take_after_empty, static_cast<int>(p));
            if (Activity* a = q.dequeue()) return a;
        }
        COOP_HOOK(global_take_before_clear, static_cast<int>(p));
        // acq_rel: the acquire half takes an enqueuer's push (its release RMW, or a later RMW
        // of the word) so the re-check below sees its item; an enqueue whose bit-set comes
        // after this clear sets the bit anyway.
        nonempty_.fetch_and(~bit(p), std::memory_order_acq_rel);
        // The clear first, then the look: a push between the two is seen by the look. The
        // other order (look, then clear) clears the bit of a push made in between
        // (test_policies.cpp, SummaryBitSurvivesAPushBetweenTheClearAndTheLook; Spin: the
        // local_park.pml mutant BUG_SUMMARY_CHECK_THEN_CLEAR).
        COOP_HOOK(global_take_clear_window, static_cast<int>(p));
#ifndef COOP_SUMMARY_NO_RECHECK  // the mutant of the directed test (test_policies.cpp)
        if (!q.empty()) nonempty_.fetch_or(bit(p), std::memory_order_acq_rel);
#endif
        return nullptr;
    }

    // above_default — whether a queue above Default may be non-empty (the summary word).
    // Any thread (a hint).
    bool above_default() const noexcept {
        return (nonempty_.load(std::memory_order_relaxed) & kAboveDefault) != 0;
    }
    bool any() const noexcept {
        for (auto& g : q_)
            if (!g.q.empty()) return true;
        return false;
    }

    // pick_around — the pick order both policies share (Negele Sect. 4.4's priorities, Go's
    // schedule): Realtime/High from the global queues; then, for Default, every
    // kGlobalCheckInterval-th pick the global Default queue first (so work overflowed or
    // submitted from outside is not starved by a busy local queue), then `local()` (a Pick,
    // counted by the caller), then the global Default queue — after taking one from there,
    // `refill()` may move more of it into the (empty) local queue (native-ws: Go's
    // globrunqget batch; it returns how many, reported as Pick::refilled); then Low/Idle.
    // Nothing of priority below `min`.
    template <class Local, class LocalPick, class Refill>
    [[gnu::always_inline]] Pick pick_around(Local& self, Priority min, LocalPick&& local, Refill&& refill) {
        if (above_default()) [[unlikely]] {
            for (int p = static_cast<int>(kPriorities) - 1; p > static_cast<int>(Priority::Default); --p) {
                if (p < static_cast<int>(min)) return {};
                if (Activity* a = take(static_cast<Priority>(p))) return {a, false};
            }
        } else if (min > Priority::Default) {
            return {};
        }
        if (min <= Priority::Default) {
            // A countdown, not `++ticks % 61 == 0`: a decrement and a branch instead of a
            // multiply-shift division on every pick.
            if (--self.until_fairness == 0) [[unlikely]] {
                self.until_fairness = kGlobalCheckInterval;
                ++self.counters.fairness_checks;
                if (Activity* a = take(Priority::Default)) {
                    ++self.counters.global_picks;
                    return {a, false};
                }
            }
            if (Pick own = local(); own.activity != nullptr) return own;
            if (Activity* g = take(Priority::Default)) {
                ++self.counters.global_picks;
                const std::uint32_t moved = refill();
                return {g, false, moved};
            }
        }
        for (int p = static_cast<int>(Priority::Low); p >= static_cast<int>(min); --p)
            if (Activity* a = take(static_cast<Priority>(p))) return {a, false};
        return {};
    }

    template <class Local, class LocalPick>
    [[gnu::always_inline]] Pick pick_around(Local& self, Priority min, LocalPick&& local) {
        return pick_around(self, min, local, [] { return std::uint32_t{0}; });
    }

  private:
    static constexpr std::uint32_t bit(Priority p) noexcept { return 1u << static_cast<unsigned>(p); }
    static constexpr std::uint32_t kAboveDefault =
        (1u << static_cast<unsigned>(Priority::High)) | (1u << static_cast<unsigned>(Priority::Realtime));

    struct alignas(kCacheLine) Line {
        Queue<Activity> q;
    };
    Line q_[kPriorities];
    // nonempty_ — the summary word (see the class comment): bit p, queue p may be non-empty.
    alignas(kCacheLine) std::atomic<std::uint32_t> nonempty_{0};
};

// Proximity — a processor's victims of its own cache group (cpus.hpp, cache_groups), for
// a pinned runtime on a machine with several groups; empty otherwise (every victim is as
// near as any other, or the workers are not pinned and may be anywhere).
struct Proximity {
    std::vector<unsigned> near;  // processor indices, self excluded

    // set_groups — `group_of[i]`: the group of processor i. Near victims are kept only when
    // they are a proper subset of the others (else the first pass would equal the rest).
    template <class Local>
    static void set_groups(Local* locals, unsigned processors, const std::vector<unsigned>& group_of) {
        for (unsigned i = 0; i < processors; ++i) {
            auto& near = locals[i].proximity.near;
            near.clear();
            if (group_of.size() != processors) continue;
            for (unsigned j = 0; j < processors; ++j)
                if (j != i && group_of[j] == group_of[i]) near.push_back(j);
            if (near.size() + 1 >= processors) near.clear();
        }
    }
};

// PerProcessorLocals — the per-processor part both local algorithms share: one `Local` per
// processor (Local has `index`, `rng` and `proximity`), each seeded with its index and its
// own victim chooser, and the cache groups of set_groups. The algorithm derives from it.
template <class Local>
class PerProcessorLocals {
  public:
    explicit PerProcessorLocals(unsigned processors)
        : processors_(processors), locals_(std::make_unique<Local[]>(processors)) {
        for (unsigned i = 0; i < processors; ++i) {
            locals_[i].index = i;
            locals_[i].rng = XorShift(i + 1);
        }
    }

    // local — processor i's state. Any thread may take the reference; only processor i
    // passes it to the owner's calls (awakened, yielded, pick_next, find_work).
    Local& local(unsigned i) noexcept { return locals_[i]; }

    // set_groups — the cache group of each processor (cpus.hpp, cache_groups), before the
    // processors start: find_work then tries the own group's victims first. Executed before
    // the workers start (one thread).
    void set_groups(const std::vector<unsigned>& group_of) {
        Proximity::set_groups(locals_.get(), processors_, group_of);
    }
    // processors — the number of processors. Any thread.
    unsigned processors() const noexcept { return processors_; }

  protected:
    const unsigned processors_;
    std::unique_ptr<Local[]> locals_;
};

// steal_passes — find_work's search, shared by both policies (Go's stealWork): up to
// kStealPasses passes over the other processors, each starting at a random one;
// `steal(victim, lone_too)` moves a batch of the victim's Default activities into self's queue
// and returns one to run (or nullptr); `lone_too` (a victim's runnext or lone item, after
// kRunnextGraceNs) only on the last pass. `own_size(self)`: a size hint of self's queue, to
// count the activities a batch moved (approximate if a thief of ours took some meanwhile).
// Only Default activities live in local queues, so a processor that may run nothing below a
// higher priority does not steal. With proximity groups (pinned, several cache groups: the
// same cache or NUMA group first), the first pass visits only the victims of self's
// group, so a batch moves within a shared cache whenever that group has work; the later
// passes visit everyone. Whether a processor may look at all (Go's spinning rule) is the
// runtime's decision, taken before it calls this (SchedulerCore::start_spinning). Executed only
// by the owner of `self`.
template <class Local, class Steal, class OwnSize>
Pick steal_passes(Local& self, Local* locals, unsigned processors, Priority min, Steal&& steal, OwnSize&& own_size) {
    if (min > Priority::Default || processors < 2) return {};
    auto try_victim = [&](Local& victim, bool lone_too) -> Activity* {
        const std::size_t had = own_size(self);
        Activity* a = steal(victim, lone_too);
        if (a != nullptr) {
            const std::size_t now = own_size(self);
            self.counters.steals += 1 + (now > had ? now - had : 0);
            ++self.counters.steal_batches;
        }
        return a;
    };
    const auto& near = self.proximity.near;
    for (int pass = 0; pass < kStealPasses; ++pass) {
        const bool lone_too = pass == kStealPasses - 1;
        if (pass == 0 && !near.empty()) {
            const std::size_t start = self.rng.next() % near.size();
            for (std::size_t k = 0; k < near.size(); ++k)
                if (Activity* a = try_victim(locals[near[(start + k) % near.size()]], false)) {
                    ++self.counters.near_steals;
                    return {a, false};
                }
            continue;
        }
        const unsigned start = self.rng.next() % processors;
        for (unsigned k = 0; k < processors; ++k) {
            Local& victim = locals[(start + k) % processors];
            if (&victim == &self) continue;
            if (Activity* a = try_victim(victim, lone_too)) return {a, false};
        }
    }
    ++self.counters.failed_steals;
    return {};
}

}  // namespace coop::ws
