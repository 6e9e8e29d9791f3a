// scheduler.cpp — the out-of-line half of the Scheduler (scheduler.hpp): SchedulerCore's
// construction, the spinning rule, parking's counters and statistics, and the calls for
// callers that do not know the algorithm or their processor's index.
#include "coop/src/scheduler.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "coop/src/io_poller.hpp"
#include "coop/src/runtime_internal.hpp"

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

SchedulerCore::SchedulerCore(unsigned processors, Scheduling kind)
    : kind_(kind), processors_(processors), cpus_(usable_cpus()), parking_(processors),
      pstats_(std::make_unique<ProcessorStats[]>(processors)) {}

SchedulerCore::~SchedulerCore() = default;

std::unique_ptr<SchedulerCore> make_scheduler(unsigned processors, Scheduling kind) {
    switch (kind) {
        case Scheduling::work_stealing: return std::make_unique<Scheduler<WsAlgorithm>>(processors);
        case Scheduling::parasail: return std::make_unique<Scheduler<ParasailAlgorithm>>(processors);
        case Scheduling::global: break;
    }
    return std::make_unique<Scheduler<GlobalAlgorithm>>(processors);
}

void SchedulerCore::awakened(Activity* a) noexcept { awakened(this_processor()->index, a); }

SchedulerStats SchedulerCore::stats() const {
    return with_scheduler(*this, [](const auto& s) { return s.stats(); });
}

void SchedulerCore::set_groups(const std::vector<unsigned>& group_of) {
    with_scheduler(*this, [&](auto& s) { s.set_groups(group_of); });
}

bool SchedulerCore::start_spinning(unsigned self) noexcept {
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

void SchedulerCore::stop_spinning(unsigned self, unsigned polls) noexcept {
    ProcessorStats& st = pstats_[self];
    if (!st.spinning) return;
    if (polls > kSpinHogPolls) ++st.spin_hogs;
    st.spinning = false;
    // relaxed: see spinning_.
    spinning_.fetch_sub(1, std::memory_order_relaxed);
}

void SchedulerCore::park(unsigned self, std::int64_t timeout_ns, bool (*ready)(void*), void* arg) noexcept {
    ProcessorStats& st = pstats_[self];
    ++st.parks;
    // The parker's re-check (park.hpp (a)): the algorithm's queues (any ring/deque or global
    // queue), or what the runtime adds (inbox, timers, stop): `ready`.
    // ---- I/O (io.cpp) ------------------------------------------------------------------
    // Once an fd has been registered, the one idle processor that takes the poll token parks
    // as the poller: the same announcement and re-check, but it sleeps in epoll_wait (until
    // the earliest timer, the same timeout as the futex's) instead of its futex. Go's
    // findRunnable: one M blocks in netpoll(pollUntil), the other idle Ms sleep.
    io::Poller* const poller = io::active_poller();
    if (poller != nullptr && poller->take_token()) {
        io::Batch batch;
        const bool woken = parking_.park_polling(self, ready, arg, [&] { poller->block(timeout_ns, batch); });
        // Released before the events are handed out: another idle processor may poll at once.
        poller->release_token();
        if (woken) ++st.wakeups;
        // Running again (the exchange in park_polling): awakened's notify may wake others.
        poller->dispatch(self, batch, true);
        return;
    }
    if (poller == nullptr) {
        // No poller yet: a futex park that also re-checks whether one was made meanwhile
        // (then go round: the next park takes the token). The parker's half of the Dekker
        // pair with io.cpp poller()'s nudge: the re-check runs after park's count and seq_cst
        // fence, the maker's notify fences after its store of the poller, so either this
        // load sees the poller or the maker's load of the count sees us and wakes us.
        struct Look {
            bool (*ready)(void*);
            void* arg;
        } look{ready, arg};
        const auto again = [](void* a) {
            const auto& l = *static_cast<const Look*>(a);
            // acquire is enough: park's seq_cst fence precedes this load, notify's follows the
            // maker's store, and of two seq_cst fences the later one's side sees the other's
            // write (C++20 [atomics.fences]; on x86 both are mfence / a locked RMW).
            return l.ready(l.arg) || io::active_poller() != nullptr;
        };
        if (parking_.park(self, timeout_ns, again, &look)) ++st.wakeups;
        return;
    }
    // ---- end I/O -----------------------------------------------------------------------
    if (parking_.park(self, timeout_ns, ready, arg)) ++st.wakeups;
}

void SchedulerCore::core_stats(SchedulerStats& s) const {
    for (unsigned i = 0; i < processors_; ++i) {
        s["parks"] += pstats_[i].parks;
        s["wakeups"] += pstats_[i].wakeups;
        s["spin_yields"] += pstats_[i].spin_yields;
        s["spin_hogs"] += pstats_[i].spin_hogs;
        s["spin_overcap"] += pstats_[i].spin_overcap;
    }
}

}  // namespace coop::internal
