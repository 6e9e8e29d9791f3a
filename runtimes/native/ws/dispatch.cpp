// dispatch.cpp — the out-of-line half of Scheduler (ws/scheduler_select.hpp): construction,
// statistics, the idle processor's calls (steal, spin, park, the parker's re-check) and
// awakened() for callers that do not know their processor's index.
//
// awakened(a) reaches the calling processor through this_processor() (not inlined,
// api.cpp), after any switch the caller made: an activity may have migrated between OS
// threads, and a thread_local address computed before the switch would be the old thread's.
// Its callers are always bound processors (make_ready/start hand non-workers' activities to
// the inbox; timers and the inbox are drained by workers), so the pointer is never null.
#include "runtimes/native/ws/scheduler_select.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "runtimes/native/runtime_internal.hpp"

namespace coop::internal {

namespace {
// usable_cpus — the CPUs this process may run on (its affinity mask), at least 1.
int usable_cpus() noexcept {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}
}  // namespace

Scheduler::Scheduler(unsigned processors, Scheduling kind)
    : kind_(kind), processors_(processors), cpus_(usable_cpus()), global_(processors), parking_(processors),
      pstats_(std::make_unique<ProcessorStats[]>(processors)) {
    if (kind == Scheduling::work_stealing) ws_ = std::make_unique<RuntimeWsPolicy>(processors);
    if (kind == Scheduling::parasail) ps_ = std::make_unique<ws::ParasailPolicy>(processors);
}

Scheduler::~Scheduler() = default;

void Scheduler::set_groups(const std::vector<unsigned>& group_of) {
    if (ws_) ws_->set_groups(group_of);
    if (ps_) ps_->set_groups(group_of);
}

void Scheduler::awakened(Activity* a) noexcept { awakened(this_processor()->index, a); }

bool Scheduler::has_ready() const noexcept {
    if (kind_ == Scheduling::global) return global_.has_ready();
    return ws_ ? ws_->has_ready() : ps_->has_ready();
}

Activity* Scheduler::find_work_local(unsigned self) noexcept {
    // The spinning rule was applied by start_spinning (the only place it lives).
    const ws::Pick pick = ws_ ? ws_->find_work(ws_->local(self), Priority::Idle)
                              : ps_->find_work(ps_->local(self), Priority::Idle);
    return pick.activity;
}

bool Scheduler::start_spinning(unsigned self) noexcept {
    ProcessorStats& st = pstats_[self];
    if (st.spinning) return true;
    // relaxed: a hint (see spinning_); a stale count lets one spinner too many start or
    // parks one too early, and the parking protocol makes either harmless.
    const int parked = static_cast<int>(parking_.parked());
    const int running = std::min(static_cast<int>(processors_) - parked, cpus_);
    // relaxed load and CAS: the rule is checked on the value the CAS installs over, so
    // spinners never exceed half of `running`'s bound (cpus_), whatever the interleaving;
    // no other memory is ordered by it.
    int spinning = spinning_.load(std::memory_order_relaxed);
    do {
        if (2 * spinning >= running) return false;
    } while (!spinning_.compare_exchange_weak(spinning, spinning + 1, std::memory_order_relaxed));
    if (2 * spinning >= cpus_) ++st.spin_overcap;  // cannot happen (the check above): a guard
    st.spinning = true;
    return true;
}

void Scheduler::stop_spinning(unsigned self, unsigned polls) noexcept {
    ProcessorStats& st = pstats_[self];
    if (!st.spinning) return;
    if (polls > kSpinHogPolls) ++st.spin_hogs;
    st.spinning = false;
    // relaxed: see spinning_.
    spinning_.fetch_sub(1, std::memory_order_relaxed);
}

void Scheduler::suspend(unsigned self, std::int64_t timeout_ns, bool (*more_work)(void*), void* arg) noexcept {
    ProcessorStats& st = pstats_[self];
    ++st.parks;
    // The parker's re-check (park.hpp (a)): the algorithm's queues (any ring/deque or global
    // queue), or what the runtime adds (inbox, timers, stop).
    struct Look {
        const Scheduler* s;
        bool (*more_work)(void*);
        void* arg;
    } look{this, more_work, arg};
    const bool woken = parking_.park(self, timeout_ns, [](void* l) {
        auto* x = static_cast<Look*>(l);
        return x->s->has_ready() || x->more_work(x->arg);
    }, &look);
    if (woken) ++st.wakeups;
}

SchedulerStats Scheduler::stats() const {
    SchedulerStats s{{"parks", 0}};
    for (unsigned i = 0; i < processors_; ++i) {
        s["parks"] += pstats_[i].parks;
        s["wakeups"] += pstats_[i].wakeups;
        s["spin_yields"] += pstats_[i].spin_yields;
        s["spin_hogs"] += pstats_[i].spin_hogs;
        s["spin_overcap"] += pstats_[i].spin_overcap;
    }
    auto add = [&](const ws::Counters& c) {
        s["steals"] += c.steals;
        s["steal_batches"] += c.steal_batches;
        s["failed_steals"] += c.failed_steals;
        s["runnext_hits"] += c.runnext_hits;
        s["local_picks"] += c.local_picks;
        s["global_picks"] += c.global_picks;
        s["overflowed"] += c.overflowed;
        s["near_steals"] += c.near_steals;
        s["refilled"] += c.refilled;
    };
    for (unsigned i = 0; i < processors_; ++i) {
        if (ws_) add(ws_->local(i).counters);
        if (ps_) add(ps_->local(i).counters);
    }
    return s;
}

}  // namespace coop::internal
