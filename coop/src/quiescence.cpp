// quiescence.cpp — when Runtime::run may return: every activity started so far has
// finished. Per-processor monotonic counters (no locked instruction on spawn or finish) and
// a futex word that the last processor to go idle bumps.
#include "coop/src/runtime_internal.hpp"

#include "coop/coop.hpp"

namespace coop {
namespace internal {

// quiescent — whether every activity started so far has finished. Reads all `finished`
// counters, then all `started` ones (acquire). A finish we count happened after its start
// (spawn -> enqueue -> dequeue -> run), so that start is counted too; and an unfinished
// activity keeps the sums apart (it, or the unfinished ancestor that started it, is counted
// in `started` but not `finished`). Equal sums therefore mean: all finished, and nothing
// can start any more except from outside. The leading seq_cst fence pairs with the one in
// notice_quiescence(): of two processors that go idle at once, one sees the other's count.
bool quiescent(RuntimeState& rt) noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    std::uint64_t fin = 0, st = 0;
    for (auto& p : rt.processors) fin += p->finished.load(std::memory_order_acquire);
    COOP_HOOK(quiescent_between_reads);
    // acquire: see above; seq_cst for external_started pairs with start()'s increment.
    st = rt.external_started.load(std::memory_order_seq_cst);
    for (auto& p : rt.processors) st += p->started.load(std::memory_order_acquire);
    return st == fin;
}

// notice_quiescence — called by a processor that just ran out of work: wakes
// Runtime::run's waiter when everything has finished.
void notice_quiescence(RuntimeState& rt) noexcept {
    if (!quiescent(rt)) return;
    // seq_cst: the bump follows our check; the waiter read the epoch before its own check.
    rt.quiescent_epoch.fetch_add(1, std::memory_order_seq_cst);
    futex_wake(&rt.quiescent_epoch, INT_MAX);
}

}  // namespace internal

void Runtime::wait_all_finished() {
    using namespace internal;
    // quiescent()'s acquire loads make everything the activities did visible on return.
    for (;;) {
        // seq_cst: read before the check, so a processor's later bump wakes the futex wait.
        const std::uint32_t e = state_->quiescent_epoch.load(std::memory_order_seq_cst);
        if (quiescent(*state_)) return;
        futex_wait(&state_->quiescent_epoch, e, -1);
    }
}

}  // namespace coop
