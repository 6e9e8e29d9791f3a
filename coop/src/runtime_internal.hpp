// runtime_internal.hpp — what the runtime's .cpp files share (not part of coop's API): the
// active runtime, the calling thread's processor, and the functions each file offers the
// others (see api.cpp for the list of files).
#pragma once

#include <atomic>
#include <cstdint>

#include "coop/src/processor.hpp"

namespace coop::internal {

// running_activity — current() inline, for the runtime's files (Processor is complete
// here): the running activity, or nullptr outside coop's workers and in an idle loop.
[[gnu::always_inline]] inline Activity* running_activity() noexcept {
    Processor* p = this_processor();
    return p != nullptr && !p->current->idle ? p->current : nullptr;
}

// set_this_processor — this OS thread becomes processor `p` (nullptr: none) (api.cpp).
void set_this_processor(Processor* p) noexcept;

// bump — increments a counter that only the calling processor writes: owner_add, a release
// increment without a locked instruction (algorithm.hpp). release: a reader that sees the
// new value (acquire) sees everything this processor did before, in particular the start of
// every activity whose finish it counts (see quiescent()).
[[gnu::always_inline]] inline void bump(std::atomic<std::uint64_t>& c) noexcept { owner_add(c, 1); }

// pick_next — the next activity for processor `p` to run from Scheduler<A> `s`, of
// priority >= `min`, or nullptr. One taken from runnext inherits the running quantum (Go's
// inheritTime: switch_to reads keep_quantum), so a ping-pong pair shares one quantum; not
// from the idle loop (its quantum belongs to no activity). Compared by address, not through
// p.current->idle: from finish(), p.current is the finishing activity, whose descriptor its
// joiner may already be freeing (TSan: a read here racing the joiner's free in
// AppTest/tokenring on native-ws). Executed only by processor `p` (its OS thread).
template <class A>
[[gnu::always_inline]] inline Activity* pick_next(Scheduler<A>& s, Processor& p, Priority min) noexcept {
    const Pick pick = s.pick_next(p.index, min);
    if constexpr (A::kProcessorLocal) {
        if (pick.inherits && p.current != &p.idle) [[unlikely]]
            p.keep_quantum = true;
    }
    return pick.activity;
}

// scheduler_of — processor `p`'s Scheduler<A>, for code instantiated for algorithm A (the
// runtime's: with_scheduler chose A). Any bound processor.
template <class A>
inline Scheduler<A>& scheduler_of(Processor& p) noexcept {
    return static_cast<Scheduler<A>&>(*p.runtime->scheduler);
}

// fin_yield — ENQUEUESWITCH for a yield under algorithm A; `processor`: the yielding
// Processor (the resumed side runs on its OS thread: a switch never leaves its processor, so
// no this_processor() is needed). Executed only by that processor.
template <class A>
[[gnu::always_inline]] inline void fin_yield(Activity* prev, void* processor) noexcept {
    auto* p = static_cast<Processor*>(processor);
    scheduler_of<A>(*p).yielded(p->index, prev);
}

// register_joiner — fin_join's CAS: `prev` registers as the joiner of `target`; false if
// `target` finished meanwhile (then prev must be made ready at once). Executed by the
// processor that switched `prev` out (on the resumed side).
[[gnu::always_inline]] inline bool register_joiner(Activity* prev, Activity* target) noexcept {
    std::uintptr_t expected = kJoinRunning;
    // acq_rel: release publishes prev (its saved context) to the finisher that will make it
    // ready; acquire (also on failure) takes the finished activity's writes.
    return target->join_word.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(prev),
                                                     std::memory_order_acq_rel, std::memory_order_acquire);
}

// fin_join_on — fin_join (finalizers.cpp) under algorithm A (coop::Algo<K>'s join): the
// joiner registers with the target or, if it finished meanwhile, is ready at once. Executed
// on the resumed side of the joiner's switch (this_processor(): a finalizer gets no
// Processor).
template <class A>
void fin_join_on(Activity* prev, void* target) noexcept {
    if (!register_joiner(prev, static_cast<Activity*>(target))) {
        Processor* p = this_processor();
        scheduler_of<A>(*p).awakened(p->index, prev);
    }
}

// finalizers.cpp
void fin_recycle(Activity*, void* stack) noexcept;
void fin_join(Activity* prev, void* target) noexcept;
void fin_sleep(Activity*, void* entry) noexcept;

// inbox.cpp — hand-over from non-worker threads.
void submit_inbox(RuntimeState& rt, Activity* a) noexcept;
bool drain_inbox(RuntimeState& rt);

// timers.cpp — sleeping activities.
void push_timer(RuntimeState& rt, TimerEntry* e) noexcept;
int poll_timers(RuntimeState& rt) noexcept;  // wakes the expired; returns how many
bool timers_due(RuntimeState& rt) noexcept;  // some deadline has passed (a hint)
std::int64_t timer_earliest_ns(RuntimeState& rt) noexcept;  // the earliest deadline (INT64_MAX: none)
std::int64_t timer_timeout_ns(std::int64_t earliest) noexcept;  // until `earliest` (< 0: none)
void drop_timers(RuntimeState& rt) noexcept;  // frees the I/O deadlines left (~Runtime)

// quiescence.cpp
bool quiescent(RuntimeState& rt) noexcept;
void notice_quiescence(RuntimeState& rt) noexcept;

// worker.cpp
void worker_main(Processor* p, int cpu);
[[noreturn]] void finish(Activity* self) noexcept;

}  // namespace coop::internal
