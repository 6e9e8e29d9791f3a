// worker.cpp — a processor's OS thread: the idle loop (the processor's idle activity, on
// the thread's own stack) and an activity's end.
//
// Design summary
// - The idle loop: take a ready activity and switch to it; otherwise drain the inbox, poll
//   the timers, spin kIdleSpins polls (the local policies steal at each poll, Go's spinning
//   rule bounding how many processors do), then park (the policy's suspend, park.hpp) with the
//   earliest timer deadline as timeout. An idle runtime uses no CPU.
// - finish(): publishes "finished" to the joiner, counts the finish, switches to the next
//   ready activity (or the idle loop) with fin_recycle, which gives the stack back.
#include <pthread.h>

#include <algorithm>

#include "runtimes/native/cpus.hpp"
#include "runtimes/native/switch.hpp"

namespace coop::internal {

namespace {
inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

bool more_work(void* state) {
    auto& rt = *static_cast<RuntimeState*>(state);
    // seq_cst loads: the parker's reads of the Dekker pairs (after its fence anyway).
    if (rt.inbox_ready.load(std::memory_order_seq_cst) || rt.stopping.load(std::memory_order_seq_cst))
        return true;
    return timers_due(rt);
}

// idle_loop — the processor's idle activity (on the worker's own stack).
void idle_loop(Processor& p) {
    RuntimeState& rt = *p.runtime;
    unsigned spins = 0;
    bool ran = false;
    for (;;) {
        // may_spin: Go's spinning rule for the local policies (ws/scheduler_select.hpp):
        // false when enough processors already look for work to steal; then park at once.
        bool may_spin = true;
        Activity* next = rt.policy.pick_next(Priority::Idle);
        if (next == nullptr) next = rt.policy.find_work(p.index, &may_spin);  // steal (local policies)
        if (next != nullptr) {
            spins = 0;
            rt.policy.stop_spinning(p.index);
            // Chained wake-up: more work than we take -> another parked processor helps
            // (park.hpp: a burst wakes processors one after the other, one futex wake each).
            if (rt.policy.has_ready()) rt.policy.notify();
            switch_to(p, &p.idle, next, nullptr, nullptr);
            ran = true;
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
        if (rt.stopping.load(std::memory_order_acquire) && !rt.policy.has_ready()) break;
        if (may_spin && spins < kIdleSpins) {
            ++spins;
            cpu_relax();
            continue;
        }
        spins = 0;
        rt.policy.suspend(p.index, timer_timeout_ns(rt), &more_work, &rt);
    }
}
}  // namespace

void worker_main(Processor* p, int cpu) {
    bind_processor(p->index);
    if (cpu >= 0) pin_current_thread(cpu);
    set_this_processor(p);
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
    idle_loop(*p);
    p->stacks.flush();
    p->descriptors.flush(0);
    set_this_processor(nullptr);
}

[[noreturn]] void finish(Activity* self) noexcept {
    Processor* p = this_processor();
    RuntimeState& rt = *p->runtime;
    Stack* stack = self->stack;
#if COOP_TSAN
    stack->tsan_fiber = self->tsan_fiber;
#endif
    // acq_rel: release publishes everything the activity did to the joiner (who frees the
    // descriptor); acquire takes the joiner's registration (its saved context).
    const std::uintptr_t joiner = self->join_word.exchange(kJoinFinished, std::memory_order_acq_rel);
    // From here on `self` may be freed by its joiner: only `stack`, `p` and `rt` are used.
    if (joiner > kJoinFinished) rt.policy.joiner_awakened(reinterpret_cast<Activity*>(joiner));
    bump(p->finished);
    Activity* next = rt.policy.pick_next(Priority::Idle);
    if (next == nullptr) next = &p->idle;
    switch_to(*p, nullptr, next, &fin_recycle, stack);
    __builtin_unreachable();
}

}  // namespace coop::internal
