// worker.cpp — a processor's OS thread: the idle loop (the processor's idle activity, on
// the thread's own stack) and an activity's end.
//
// Design summary
// - The idle loop: take a ready activity and switch to it; otherwise drain the inbox, poll
//   the timers, spin (poll the queues, and steal on the local policies) for at most
//   kIdleSpinNs, giving the core back (sched_yield) every kSpinPollsPerYield polls, if the
//   spinning rule lets it (SchedulerCore::start_spinning: fewer than half of the running
//   processors spin, running capped by the usable CPUs); then park (Scheduler<A>::suspend,
//   park.hpp) with the earliest timer deadline as timeout. An idle runtime uses no CPU.
// - finish(): publishes "finished" to the joiner, counts the finish, switches to the next
//   ready activity (or the idle loop) with fin_recycle, which gives the stack back.
#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "coop/cpu_relax.hpp"
#include "coop/cpus.hpp"
#include "coop/src/io_poller.hpp"
#include "coop/src/switch.hpp"

namespace coop::internal {

namespace {
// ParkLook — what the idle loop's re-check needs: the runtime, and the earliest deadline its
// futex timeout was computed from.
struct ParkLook {
    RuntimeState* rt;
    std::int64_t earliest;
};

bool more_work(void* arg) {
    const auto& look = *static_cast<const ParkLook*>(arg);
    RuntimeState& rt = *look.rt;
    // seq_cst loads: the parker's reads of the Dekker pairs (after its fence anyway).
    if (rt.inbox_ready.load(std::memory_order_seq_cst) || rt.stopping.load(std::memory_order_seq_cst))
        return true;
    // A deadline earlier than the one the timeout came from: a timer pushed after that read
    // (push_timer lowers earliest_ns, then notify(): if its look at the parked count came
    // before our announcement it woke nobody, and our fence orders this load after its CAS,
    // the Dekker pair of park.hpp (a)). Sleeping with the old timeout would oversleep it,
    // with none at all until some processor polls: go round and compute the timeout again.
    // seq_cst: as above.
    if (rt.earliest_ns.load(std::memory_order_seq_cst) < look.earliest) return true;
    return timers_due(rt);
}

// idle_loop — the processor's idle activity (on the worker's own stack), instantiated per
// algorithm A (worker_main's with_scheduler). Executed only by processor `p`.
template <class A>
void idle_loop(Scheduler<A>& sched, Processor& p) {
    RuntimeState& rt = *p.runtime;
    bool ran = false;
    bool spinning = false;     // counted by the spinning rule (SchedulerCore::start_spinning)
    std::int64_t spin_until = 0;  // CLOCK_MONOTONIC ns: the spin's time bound
    unsigned polls = 0;        // polls since the core was last given back
    auto run = [&](Activity* next) {
        if (spinning) {
            sched.stop_spinning(p.index, polls);
            spinning = false;
        }
        // Chained wake-up: more work than we take -> another parked processor helps
        // (park.hpp: a burst wakes processors one after the other, one futex wake each).
        if (sched.has_ready()) sched.notify();
        // ---- I/O (io.cpp) --------------------------------------------------------------
        // Hand-off of the polling duty: this processor leaves its idle loop while activities
        // wait on fds and nobody holds the poll token (it may have been the poller): wake a
        // parked processor so that it parks as the poller, lest events wait while this one
        // runs an activity that never yields (Go: the M leaving netpoll with work calls wakep).
        // All three looks are relaxed hints: a missed hand-off delays events until this
        // processor polls again (its next 64 switches, or its idle loop), it loses none.
        if (io::Poller* io = io::active_poller();
            io != nullptr && io->waiters() > 0 && !io->token_held() && sched.parking().parked() > 0)
            sched.notify();
        // ---- end I/O -------------------------------------------------------------------
        switch_to(p, &p.idle, next, nullptr, nullptr);
        ran = true;
    };
    for (;;) {
        Activity* next = pick_next(sched, p, Priority::Idle);
        if (next == nullptr && spinning) next = sched.find_work(p.index);  // steal (local algorithms)
        if (next != nullptr) {
            run(next);
            continue;  // back here when an activity blocked or finished with nothing ready
        }
        if (ran) {  // out of work: perhaps everything has finished
            ran = false;
            notice_quiescence(rt);
        }
        // relaxed: a hint; drain_inbox takes the mutex.
        if (rt.inbox_ready.load(std::memory_order_relaxed) && drain_inbox(rt)) continue;
        if (poll_timers(rt) > 0) continue;
        // acquire: pairs with the destructor's store (nothing else is read after it).
        if (rt.stopping.load(std::memory_order_acquire) && !sched.has_ready()) break;
        if (!spinning) {
            // Spin only if the rule allows (otherwise park at once), for at most kIdleSpinNs.
            if (sched.start_spinning(p.index)) {
                spinning = true;
                polls = 0;
                spin_until = now_ns() + kIdleSpinNs;
                continue;
            }
            // Refused, but work is queued elsewhere (the park's re-check would return at
            // once, and this processor would loop without giving its core back): yield the
            // core, then one steal attempt (Go's findRunnable looks at every run queue once
            // more before it stops, and takes what it finds).
            if (sched.has_ready()) {
                sched_yield();
                if (Activity* stolen = sched.find_work(p.index)) run(stolen);
                continue;
            }
        } else if (++polls < kSpinPollsPerYield) {
            cpu_relax();
            continue;
        } else if (now_ns() < spin_until) {
            // Give the core back (Go's osyield): with more processors than cores, one that
            // has work may be waiting for it.
            sched.spin_yielded(p.index, polls);
            polls = 0;
            // I/O (io.cpp): the spinner polls the fds first (Go's findRunnable polls the
            // network before it steals), else an event waits for the spin to end and the park
            // as the poller (up to kIdleSpinNs per request on an echo server that has one
            // connection per processor). Nothing when nobody waits or the token is held.
            io::poll_busy(p.index);
            sched_yield();
            continue;
        }
        if (spinning) {
            sched.stop_spinning(p.index, polls);
            spinning = false;
        }
        // The timeout and the re-check's bound from one read of earliest_ns (more_work).
        ParkLook look{&rt, timer_earliest_ns(rt)};
        COOP_HOOK(idle_before_park);
        sched.suspend(p.index, timer_timeout_ns(look.earliest), &more_work, &look);
    }
}
}  // namespace

void worker_main(Processor* p, int cpu) {
    bind_processor(p->index);
    // Every coop thread_local with a destructor is set up here, while memory is there: its
    // first use later would register the destructor, and glibc aborts if that cannot
    // allocate (hazard.hpp, touch_node_cache).
    coop::detail::touch_node_cache();
    if (cpu >= 0) pin_current_thread(cpu);
    set_this_processor(p);
    p->eh_globals = abi::__cxa_get_globals();  // switch.hpp, ExceptionState
    p->current = &p->idle;
#if COOP_ASAN
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstack(&attr, &p->idle_stack_bottom, &p->idle_stack_size);
        pthread_attr_destroy(&attr);
    }
#endif
#if COOP_TSAN
    p->idle.tsan_fiber = __tsan_get_current_fiber();
#endif
    with_scheduler(*p->runtime->scheduler, [&](auto& s) { idle_loop(s, *p); });
    p->stacks.flush();
    p->descriptors.flush(0);
    set_this_processor(nullptr);
}

namespace {
// finish_body — finish() of activity `self` on processor `p` (algorithm A: only A's code,
// chosen by finish()'s with_scheduler). Executed only by processor `p`.
template <class A>
[[noreturn, gnu::always_inline]] inline void finish_body(Scheduler<A>& s, Processor& p, Activity* self) noexcept {
    Stack* stack = self->stack;
#if COOP_TSAN
    stack->tsan_fiber = self->tsan_fiber;
#endif
    // acq_rel: release publishes everything the activity did to the joiner (who frees the
    // descriptor); acquire takes the joiner's registration (its saved context).
    const std::uintptr_t joiner = self->join_word.exchange(kJoinFinished, std::memory_order_acq_rel);
    // From here on `self` may be freed by its joiner: only `stack`, `p` and `s` are used.
    if (joiner > kJoinFinished)
        s.awakened(p.index, reinterpret_cast<Activity*>(joiner), /*next=*/false);
    bump(p.finished);
    Activity* next = pick_next(s, p, Priority::Idle);
    if (next == nullptr) next = &p.idle;
    switch_to(p, nullptr, next, &fin_recycle, stack);
    __builtin_unreachable();
}

// finish_on — finish_body out of line, for the untyped finish() (one of three behind its
// with_scheduler).
template <class A>
[[noreturn, gnu::noinline]] void finish_on(Scheduler<A>& s, Processor& p, Activity* self) noexcept {
    finish_body(s, p, self);
}
}  // namespace

[[noreturn]] void finish(Activity* self) noexcept {
    COOP_HOOK(untyped_entry);
    Processor* p = this_processor();
    with_scheduler(*p->runtime->scheduler, [&](auto& s) { finish_on(s, *p, self); });
    __builtin_unreachable();
}

// finish_as — finish() of an activity spawned by coop::Algo<K>::spawn (its body,
// Closure::run_and_finish<K>, calls it): A's code without the branch.
template <Scheduling K>
[[noreturn]] void finish_as(Activity* self) noexcept {
    Processor* p = this_processor();
    COOP_ASSERT(p->runtime->scheduler->kind() == K, "coop::Algo<K>::spawn in a runtime of another Scheduling");
    finish_body(scheduler_of<algorithm_t<K>>(*p), *p, self);
}
template void finish_as<Scheduling::global>(Activity*) noexcept;
template void finish_as<Scheduling::work_stealing>(Activity*) noexcept;
template void finish_as<Scheduling::parasail>(Activity*) noexcept;

}  // namespace coop::internal
