// finalizers.cpp — the runtime's task-switch finalizers (Fig. 3: run on the resumed side,
// on behalf of the activity that switched away); those of Mutex, CondVar and Semaphore are
// in sync.cpp.
//
// Citation: Negele et al. 2017, Sect. 3.2, Fig. 2 (ENQUEUESWITCH) and Fig. 3.
// - fin_yield (runtime_internal.hpp, one per algorithm): ENQUEUESWITCH for a yield (requeue, no
//   wake-up needed because this processor stays busy); fin_recycle: a finished activity's
//   stack back to this processor's cache; fin_join: register as the joiner, or be ready at once; fin_sleep: onto the timers.
#include "coop/src/switch.hpp"

namespace coop::internal {

// fin_recycle — a finished activity's stack goes back to this processor's cache.
void fin_recycle(Activity*, void* stack) noexcept {
    auto* s = static_cast<Stack*>(stack);
#if COOP_ASAN
    // The finished activity's last frames (trampoline, finish, switch_to) never returned,
    // so their redzones are still poisoned; the next activity on this stack would trip
    // over them (a false stack-buffer-overflow).
    __asan_unpoison_memory_region(s->bottom, s->size);
#endif
#if COOP_TSAN
    __tsan_destroy_fiber(s->tsan_fiber);
    s->tsan_fiber = nullptr;
#endif
    this_processor()->stacks.put(s);
}

// fin_join — the joiner registers itself with the target; if the target finished in the
// meantime (the CAS fails on kJoinFinished), the joiner is ready at once.
void fin_join(Activity* prev, void* target) noexcept {
    if (!register_joiner(prev, static_cast<Activity*>(target))) {
        Processor* p = this_processor();
        p->runtime->scheduler->awakened(p->index, prev);
    }
}

// fin_sleep — a sleeping activity's timer entry goes on the timer list.
void fin_sleep(Activity*, void* entry) noexcept {
    Processor* p = this_processor();
    push_timer(*p->runtime, static_cast<TimerEntry*>(entry));
}

}  // namespace coop::internal
