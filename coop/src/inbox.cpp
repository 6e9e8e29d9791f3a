// inbox.cpp — activities started (or made ready) by threads that are not coop's workers:
// such threads have no hazard-pointer slot of their own, so they borrow the one the runtime
// keeps for them (index processor_count, one borrower at a time under external_slot, as
// dequeue_waiter does) and enqueue the activity on the inbox queue; a worker drains it from
// its idle loop. The enqueue uses the activity's own queue node (every descriptor holds one
// from its spawn, and the hazard pools are filled when the runtime starts), so it allocates
// nothing: make_ready is noexcept and a thread outside the runtime may wake an activity with
// the heap exhausted (Memory.AThreadOutsideTheRuntimeWakesAnActivityWithNoHeapLeft). A
// std::vector here used to allocate on the first append after each drain.
#include "coop/src/runtime_internal.hpp"

namespace coop::internal {

void submit_inbox(RuntimeState& rt, Activity* a) noexcept {
    {
        std::lock_guard<std::mutex> lock(rt.external_slot);
        bind_processor(rt.processor_count);
        COOP_HOOK(inbox_before_enqueue);
        rt.inbox.enqueue(a);
        detail::t_index = detail::kUnbound;  // enqueue() cleared hp1/hp2 (release stores)
        // seq_cst: published after the enqueue, before notify_all()'s fence; the parker
        // checks inbox_ready after its own fence (Dekker pair, see worker.cpp more_work).
        rt.inbox_ready.store(true, std::memory_order_seq_cst);
    }
    rt.scheduler->notify_all();
}

bool drain_inbox(RuntimeState& rt) {
    // seq_cst: cleared before the dequeues below read the queue. A submitter whose enqueue
    // they miss stores true after it (both in the one seq_cst order, its enqueue's CAS before
    // its store), so the flag is set again and a later look drains it.
    rt.inbox_ready.store(false, std::memory_order_seq_cst);
    bool any = false;
    while (Activity* a = rt.inbox.dequeue()) {
        rt.scheduler->awakened(a);
        any = true;
    }
    COOP_HOOK(inbox_after_drain);
    return any;
}

}  // namespace coop::internal
