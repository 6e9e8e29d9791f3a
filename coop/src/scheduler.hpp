// scheduler.hpp — coop's Scheduler<A>: one scheduler type, its algorithm A a template
// parameter (the Algorithm concept, algorithm.hpp): the paper's global queues
// (GlobalQueueAlgorithm, global_queue.hpp, backend `native`), Go-style rings with runnext
// (ws::WsRingAlgorithm, ws/ws_ring.hpp, `native-ws`) or ParaSail's owner-guarded deques
// (ws::ParasailDequeAlgorithm, ws/parasail_deque.hpp, `native-parasail`).
//
// Design summary
// - SchedulerCore: what every algorithm shares, compiled once: parking (park.hpp), the
//   spinning rule (start_spinning, the only place it lives), the park/wake-up/spin counters,
//   notify / notify_all. Scheduler<A> derives from it and adds the algorithm (held by
//   value): awakened / yielded / pick_next / has_ready / find_work / suspend / stats, each
//   with only A's code.
// - The runtime holds its Scheduler through a SchedulerCore (RuntimeState::scheduler); the
//   algorithm is chosen when a Runtime starts (coop::Options::scheduling). with_scheduler()
//   below is the one place that turns the kind into the type: the hot entry points (yield,
//   suspend, make_ready, start, finish: api.cpp, worker.cpp) call it once where they begin,
//   then run a function template instantiated for Scheduler<A> (no further branch on the
//   kind, no out-of-line call into the scheduler on the switch path); the idle loop
//   (worker.cpp) is instantiated per algorithm as a whole. Off the hot path (timers, the
//   inbox, join's finalizer, stats) SchedulerCore's awakened / has_ready / stats do the same
//   branch. docs/scheduler-roadmap.md: compiling the runtime once per algorithm
//   removes this last branch.
// - Parking: the same for every algorithm (park.hpp, models/park_notify.pml): suspend passes
//   the parker's re-check "A::has_ready(), or more_work" to it; the algorithms never wake
//   anyone themselves. awakened() queues (the global queue, or the own ring/deque) and then
//   calls notify() when there is more than one processor and the activity is not
//   Idle-priority (Negele et al. 2017, Sect. 3.2, Fig. 2 ENQUEUESWITCH; the waker's half of
//   park.hpp's Dekker pair: the work is published before notify's fence), so a parked
//   processor wakes and runs or steals it.
// - Spinning (every algorithm; worker.cpp's idle loop): an idle processor that finds nothing
//   becomes a "spinner" only if start_spinning allows it, Go's rule 2*spinning < P - parked
//   (runtime/proc.go wakep/findRunnable) with the running processors capped by the usable
//   CPUs (when processors outnumber cores, those not parked are not all running); otherwise
//   it parks at once. A spinner polls (and steals, find_work) for at most kIdleSpinNs,
//   giving its core back every kSpinPollsPerYield polls.
// - Counters (per processor, written by their owner only, relaxed): the algorithms' steals,
//   failed steals, runnext hits, ...; here parks (suspend calls that slept or re-checked)
//   and wake-ups (parks ended by a wake_one that chose this processor).
//
// Ownership rules: a processor's algorithm `Local` and its ProcessorStats are touched only
// by the OS thread bound as that processor (stats() reads them relaxed, racy by design);
// the global queues by any bound processor (hazard pointers, queue.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "coop/algorithm.hpp"
#include "coop/global_queue.hpp"
#include "coop/park.hpp"
#include "coop/src/ws/parasail_deque.hpp"
#include "coop/src/ws/ws_ring.hpp"

namespace coop::internal {

// The three algorithms as the runtime instantiates them (native-ws: the ring of
// ws::kRingCapacity, which says why 4096).
using GlobalAlgorithm = GlobalQueueAlgorithm;
using WsAlgorithm = ws::WsRingAlgorithm;
using ParasailAlgorithm = ws::ParasailDequeAlgorithm;

// kind_of — the Options::scheduling value that selects algorithm A.
template <class A>
inline constexpr Scheduling kind_of = Scheduling::global;
template <>
inline constexpr Scheduling kind_of<WsAlgorithm> = Scheduling::work_stealing;
template <>
inline constexpr Scheduling kind_of<ParasailAlgorithm> = Scheduling::parasail;

// algorithm_t<K> — the algorithm that Options::scheduling value K selects (the inverse of
// kind_of): the typed entry points (coop::Algo<K>, coop.hpp) reach Scheduler<algorithm_t<K>>.
template <Scheduling K>
struct AlgorithmOf {
    using type = GlobalAlgorithm;
};
template <>
struct AlgorithmOf<Scheduling::work_stealing> {
    using type = WsAlgorithm;
};
template <>
struct AlgorithmOf<Scheduling::parasail> {
    using type = ParasailAlgorithm;
};
template <Scheduling K>
using algorithm_t = typename AlgorithmOf<K>::type;
static_assert(kind_of<algorithm_t<Scheduling::global>> == Scheduling::global &&
                  kind_of<algorithm_t<Scheduling::work_stealing>> == Scheduling::work_stealing &&
                  kind_of<algorithm_t<Scheduling::parasail>> == Scheduling::parasail,
              "kind_of and algorithm_t are inverses");

// SchedulerStats — what a runtime reports per run (sums over processors).
using SchedulerStats = std::map<std::string, std::uint64_t>;

// SchedulerCore — what every algorithm shares (see the file comment).
class SchedulerCore {
  public:
    SchedulerCore(unsigned processors, Scheduling kind);
    virtual ~SchedulerCore();  // the runtime destroys its Scheduler<A> through this base
    SchedulerCore(const SchedulerCore&) = delete;
    SchedulerCore& operator=(const SchedulerCore&) = delete;

    // kind — which Scheduler<A> this is (with_scheduler). Any thread.
    Scheduling kind() const noexcept { return kind_; }
    unsigned processors() const noexcept { return processors_; }
    // cpus — the CPUs this process may run on (its affinity mask when the scheduler was
    // made): the most processors that can be running at once. Any thread.
    unsigned cpus() const noexcept { return static_cast<unsigned>(cpus_); }

    // Off the hot path, for callers that do not know A (each one branch on the kind,
    // with_scheduler, then Scheduler<A>'s call of the same name):
    // awakened — Scheduler<A>::awakened. Executed only by processor `self`.
    void awakened(unsigned self, Activity* a, bool next = true) noexcept;
    // awakened — the same for a caller that does not know its index (timers, inbox): it is
    // reached through this_processor(), out of line (scheduler.cpp), after any switch the
    // caller made (an activity may have migrated between OS threads, and a thread_local
    // address computed before the switch would be the old thread's). Any bound processor.
    void awakened(Activity* a) noexcept;
    // has_ready — Scheduler<A>::has_ready (a hint). Any thread.
    bool has_ready() const noexcept;
    // stats — the counters summed over processors (names: docs/native-runtime.md). Any
    // thread.
    SchedulerStats stats() const;
    // set_groups — the cache group of each processor (cpus.hpp, cache_groups; a pinned
    // runtime, before its workers start): the local algorithms steal within a group first.
    void set_groups(const std::vector<unsigned>& group_of);

    // start_spinning — processor `self`, idle, asks to spin (look for work before parking):
    // true if it may (it is then counted as spinning until stop_spinning), false if it
    // should park at once. The spinning rule (Go's 2*nmspinning < P - npidle, runtime/
    // proc.go wakep/findRunnable), for every algorithm, with the processors counted as
    // running capped by the CPUs this process may use: when processors outnumber cores, the
    // ones not parked are not all running, and a spinner then takes a core from one that has
    // work. Executed only by processor `self` (its idle loop).
    bool start_spinning(unsigned self) noexcept;
    // stop_spinning — processor `self` found work or is about to park; `polls`: the polls
    // it made since it last gave its core back (statistics). Executed only by processor
    // `self`.
    void stop_spinning(unsigned self, unsigned polls) noexcept;
    // spin_yielded — processor `self`, spinning, gave its core back (statistics); `polls`:
    // the polls it made since the last time it did. Executed only by processor `self`.
    void spin_yielded(unsigned self, unsigned polls) noexcept {
        ProcessorStats& st = pstats_[self];
        ++st.spin_yields;
        if (polls > kSpinHogPolls) ++st.spin_hogs;
    }
    // notify — ResumeAnyProcessor: wakes one parked processor if some processor is parked
    // and no wake-up is already in flight (park.hpp). Call after publishing work. Any bound
    // processor.
    void notify() noexcept { parking_.wake_one(); }
    // notify_all — wakes every parked processor (stop, external submissions, timers). Any
    // thread.
    void notify_all() noexcept { parking_.wake_all(); }

    // spinning — processors counted as spinning now (tests). Any thread.
    int spinning() const noexcept { return spinning_.load(std::memory_order_relaxed); }
    // parking — the park/wake protocol (tests and statistics). Any thread.
    const Parking& parking() const noexcept { return parking_; }

  protected:
    // park — processor `self` parks (park.hpp) with the re-check `ready(arg)`; counts the
    // park and, if a wake_one ended it, the wake-up. Executed only by processor `self`.
    void park(unsigned self, std::int64_t timeout_ns, bool (*ready)(void*), void* arg) noexcept;
    // core_stats — the shared counters into `s`. Any thread.
    void core_stats(SchedulerStats& s) const;

    // ProcessorStats — a processor's spinning state and counters (owner-only writes,
    // Counter: relaxed, read by stats()).
    struct alignas(kCacheLine) ProcessorStats {
        Counter parks, wakeups;
        Counter spin_yields;   // sched_yield calls while spinning
        Counter spin_hogs;     // polls in a row without a yield > kSpinHogPolls
        Counter spin_overcap;  // spin starts that made spinners > half the usable CPUs
        bool spinning = false;
    };

    const Scheduling kind_;
    const unsigned processors_;
    // cpus_ — the CPUs this process may run on (sched_getaffinity at construction): the
    // most processors that can be running at once.
    const int cpus_;
    Parking parking_;
    std::unique_ptr<ProcessorStats[]> pstats_;
    // spinning_ — idle processors looking for work before they park (Go's nmspinning).
    // relaxed everywhere: it only bounds how many spin; no wake-up depends on it, the
    // parking protocol alone guarantees liveness.
    alignas(kCacheLine) std::atomic<int> spinning_{0};
};

// Scheduler — SchedulerCore plus algorithm A. Every call takes the calling processor's
// index `self` from a caller that reached its Processor once, so none re-reads it through
// this_processor(); the global algorithm ignores it.
template <Algorithm A>
class Scheduler final : public SchedulerCore {
  public:
    explicit Scheduler(unsigned processors) : SchedulerCore(processors, kind_of<A>), alg_(processors) {}

    // algorithm — the algorithm object (the directed tests place activities in its
    // queues). Any thread; its per-processor state belongs to its processor.
    A& algorithm() noexcept { return alg_; }

    // awakened — `a` (owned by the caller) became ready on processor `self` (woken or
    // spawned there: it runs next, from runnext / the deque's LIFO end on a local
    // algorithm): the algorithm queues it, then a parked processor is woken unless `a` is
    // Idle-priority (Fig. 2 ENQUEUESWITCH). `next` false (join): behind the ready activities
    // instead (the ring's tail / the deque's FIFO end), not into runnext: a join is no
    // hand-off between running peers, and runnext would run the joiner between every two
    // children of a spawn-all-then-join-all loop (twice the switches, measured with create).
    // Executed only by processor `self`.
    [[gnu::always_inline]] void awakened(unsigned self, Activity* a, bool next = true) noexcept {
        // Read before the enqueue: once queued, `a` may run (or be stolen), finish and be
        // freed elsewhere.
        const Priority priority = a->priority;
        if (next) alg_.awakened(alg_.local(self), a);
        else alg_.yielded(alg_.local(self), a);
        // Published above (the global queue's enqueue, the ring's release store of
        // tail_/runnext, or the deque's guarded store); notify()'s seq_cst fence orders it
        // before its load of the parked count, the waker's half of park.hpp's Dekker pair
        // (a). One processor: the caller is it, and it is not parked (saves the fence).
        if (priority != Priority::Idle && processors_ > 1) notify();
    }

    // yielded — `a` yielded on processor `self`, which stays busy: queued behind the ready
    // ones. Executed only by processor `self` (fin_yield, on the resumed side of the yield's
    // switch: the same OS thread).
    [[gnu::always_inline]] void yielded(unsigned self, Activity* a) noexcept {
        if constexpr (!A::kProcessorLocal) {
            // No wake-up (Fig. 2: this processor will run the queue itself).
            alg_.yielded(alg_.local(self), a);
        } else {
            // Read before the push: once queued, `a` may be stolen, run, finish and be freed.
            const Priority priority = a->priority;
            alg_.yielded(alg_.local(self), a);
            // A yield asks for no help (Negele Fig. 2: "this processor stays busy"), but with
            // local queues the yielder now waits on this processor's queue while another
            // processor may have parked in the window between yield()'s pick and this push,
            // when nothing was queued here (models/local_park.pml -DSTRICT_YIELD;
            // test_yield_wake.cpp): if the activity that runs now never yields, the yielder
            // waits for good although a processor is idle. So: if a processor is parked,
            // notify.
            if (priority != Priority::Idle && processors_ > 1) {
                // seq_cst fence: the waker's half of park.hpp's Dekker pair (a), as in
                // notify(). The push above ends in a (release) store and the look at parked_
                // below is a load of another line: x86-TSO lets the load complete while the
                // store still sits in this core's store buffer (Sewell et al., "x86-TSO",
                // CACM 2010, Sect. 3, litmus SB). The parker meanwhile announces itself
                // (Parked; parked_++; fence) and scans the queues without seeing the push:
                // both miss, the parker sleeps with no timeout and the yielder waits behind
                // an activity that may never yield (test_park_tso.cpp shows it within
                // seconds without this fence; models/local_park.pml -DTSO -DBUG_YIELD_NO_FENCE).
                // With the fence, in the one total order of seq_cst operations either our load
                // follows the parker's increment (we notify) or its scan follows our push (it
                // sees it). Cost: one mfence per yield on the local algorithms (the docs give
                // the callgrind count); a relaxed look without it is what lost the work.
                std::atomic_thread_fence(std::memory_order_seq_cst);
                if (parking_.parked() != 0) notify();
            }
        }
    }

    // pick_next — the next activity for processor `self`, of priority >= `min`, or none;
    // Pick::inherits: taken from runnext (the caller lets it keep the running quantum,
    // runtime_internal.hpp pick_next). Executed only by processor `self`.
    [[gnu::always_inline]] Pick pick_next(unsigned self, Priority min) noexcept {
        const Pick pick = alg_.pick_next(alg_.local(self), min);
        if constexpr (A::kProcessorLocal) {
            // A refill moved activities from the global queue into this processor's ring;
            // while each was in neither, a parker's has_ready() could miss it (ws_ring.hpp
            // refill) and sleep, and our caller (finish, yield, a block) goes on to run
            // pick.activity, maybe for good. notify() is the waker's half of park.hpp's
            // Dekker pair (a): its seq_cst fence orders the ring's tail stores (the pushes)
            // before its load of the parked count; the parker's fence orders its count before
            // its scan of the rings. So either the parker's scan sees them or we see it parked
            // and wake it. A look at the parked count without the fence could miss a parker
            // whose increment is not yet visible, and nothing would repair that here (the
            // refiller may run a non-yielding activity; yielded() needs its fence for the same
            // reason): the fence costs one mfence per refill, against the refill's up to 3
            // locked instructions per activity moved (kGlobalBatch of them).
            if (pick.refilled != 0 && processors_ > 1) [[unlikely]]
                notify();
        }
        return pick;
    }

    // has_ready — whether any ready activity looks queued anywhere (a hint: the parker's
    // re-check). Any thread.
    bool has_ready() const noexcept { return alg_.has_ready(); }

    // find_work — an idle processor `self` looks for work elsewhere (steals); nullptr: none
    // (always for the global algorithm: pick_next already looked at every queue). The
    // spinning rule was applied by start_spinning. Executed only by processor `self`, while
    // it spins or after a refused spin found work queued (worker.cpp).
    Activity* find_work(unsigned self) noexcept {
        if constexpr (!A::kProcessorLocal) {
            (void)self;
            return nullptr;
        } else {
            return alg_.find_work(alg_.local(self), Priority::Idle).activity;
        }
    }

    // suspend — parks processor `self` (idle) until notify, the timeout (ns, < 0: none) or a
    // spurious wake-up; returns at once if has_ready() or more_work(arg) finds work (the
    // parker's re-check, park.hpp (a)). Executed only by processor `self`.
    void suspend(unsigned self, std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept {
        struct Look {
            const Scheduler* s;
            bool (*more_work)(void*);
            void* arg;
        } look{this, more_work, arg};
        park(self, timeout_ns, [](void* l) {
            auto* x = static_cast<Look*>(l);
            return x->s->has_ready() || x->more_work(x->arg);
        }, &look);
    }

    // stats — the shared counters and, for a local algorithm, its per-processor ones, summed
    // (names: docs/native-runtime.md). Any thread (relaxed reads, racy by design).
    SchedulerStats stats() const {
        SchedulerStats s{{"parks", 0}};
        core_stats(s);
        if constexpr (A::kProcessorLocal) {
            for (unsigned i = 0; i < processors_; ++i) {
                const Counters& c = const_cast<A&>(alg_).local(i).counters;
                s["steals"] += c.steals;
                s["steal_batches"] += c.steal_batches;
                s["failed_steals"] += c.failed_steals;
                s["runnext_hits"] += c.runnext_hits;
                s["local_picks"] += c.local_picks;
                s["global_picks"] += c.global_picks;
                s["overflowed"] += c.overflowed;
                s["near_steals"] += c.near_steals;
                s["refilled"] += c.refilled;
            }
        }
        return s;
    }

    // set_groups — see SchedulerCore::set_groups. Before the workers start.
    void set_groups(const std::vector<unsigned>& group_of) {
        if constexpr (A::kProcessorLocal) alg_.set_groups(group_of);
        else (void)group_of;
    }

  private:
    A alg_;
};

// with_scheduler — f(Scheduler<A>&) for the algorithm A of `s` (its kind()): the one branch
// on the kind, where a hot entry point begins (api.cpp, worker.cpp) or off the hot path.
// `f` is a generic callable, instantiated once per algorithm; the entry points pass
// [[gnu::noinline]] function templates so each algorithm's code stays in its own function
// (all three inlined into one caller made every algorithm pay for the others' register
// saves: callgrind +7 instructions per switch for `native`).
template <class F>
[[gnu::always_inline]] inline decltype(auto) with_scheduler(SchedulerCore& s, F&& f) {
    const Scheduling kind = s.kind();
    if (kind == Scheduling::global) [[likely]]
        return f(static_cast<Scheduler<GlobalAlgorithm>&>(s));
    if (kind == Scheduling::work_stealing) return f(static_cast<Scheduler<WsAlgorithm>&>(s));
    return f(static_cast<Scheduler<ParasailAlgorithm>&>(s));
}
template <class F>
[[gnu::always_inline]] inline decltype(auto) with_scheduler(const SchedulerCore& s, F&& f) {
    return with_scheduler(const_cast<SchedulerCore&>(s), [&](auto& sched) -> decltype(auto) {
        return f(std::as_const(sched));
    });
}

// make_scheduler — the Scheduler of algorithm `kind` for `processors` processors.
std::unique_ptr<SchedulerCore> make_scheduler(unsigned processors, Scheduling kind);

inline void SchedulerCore::awakened(unsigned self, Activity* a, bool next) noexcept {
    with_scheduler(*this, [&](auto& s) { s.awakened(self, a, next); });
}
inline bool SchedulerCore::has_ready() const noexcept {
    return with_scheduler(*this, [](const auto& s) { return s.has_ready(); });
}

}  // namespace coop::internal
