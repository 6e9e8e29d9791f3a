// inbox.cpp — activities started (or made ready) by threads that are not coop's workers:
// such threads have no hazard-pointer slot and must not touch the lock-free queues, so they
// hand the activity to the workers through a mutex-protected vector; a worker drains it
// from its idle loop.
#include "coop/src/runtime_internal.hpp"

namespace coop::internal {

void submit_inbox(RuntimeState& rt, Activity* a) {
    {
        std::lock_guard<std::mutex> lock(rt.inbox_mutex);
        rt.inbox.push_back(a);
        // seq_cst: published before notify()'s fence and working_ check (the parker checks
        // inbox_ready after its own fence: Dekker pair, see scheduler.hpp).
        rt.inbox_ready.store(true, std::memory_order_seq_cst);
    }
    rt.scheduler->notify_all();
}

bool drain_inbox(RuntimeState& rt) {
    std::vector<Activity*> batch;
    {
        std::lock_guard<std::mutex> lock(rt.inbox_mutex);
        batch.swap(rt.inbox);
        // relaxed: under the mutex, which orders it with the producers' stores.
        rt.inbox_ready.store(false, std::memory_order_relaxed);
    }
    for (Activity* a : batch) rt.scheduler->awakened(a);
    return !batch.empty();
}

}  // namespace coop::internal
