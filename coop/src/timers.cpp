// timers.cpp — sleeping activities (sleep_for / sleep_until_ns).
//
// Design summary
// - A sleeper's TimerEntry (on its own stack) is pushed onto a lock-free stack `timers`
//   (CAS push; no ABA: the only pop is a take-all exchange) by fin_sleep, and `earliest_ns`
//   is lowered to its deadline (CAS-min): a lower bound of every pending deadline.
// - poll_timers (idle loop; every kTimerPollMask+1 yields): nothing to do unless
//   earliest_ns has passed. Then one processor at a time (try_lock: the others go on) moves
//   the pushed entries into a min-heap by deadline (timer_heap, under timer_mutex), wakes
//   the expired ones from its top and restores earliest_ns from the new top. A poll costs
//   O(k log n) amortised for k new and expired entries, not O(n): the sleepers that are not
//   due stay in the heap (popping and re-pushing each of them at every poll, with a notify()
//   each, made a poll O(n)). The heap is a pairing heap (Fredman, Sedgewick, Sleator and
//   Tarjan, "The pairing heap: a new form of self-adjusting heap", Algorithmica 1986) linked
//   through the entries themselves (child, sibling), so a poll allocates nothing: it runs in
//   the idle loop (noexcept), where the std::vector heap it replaced grew with push_back
//   and ended the process when the heap was exhausted
//   (Memory.TimersArePolledWithNoHeapLeft).
// - The idle loop parks with timer_timeout_ns(earliest) as its futex timeout, so sleepers are
//   woken by the processors' own timeouts; an idle runtime uses no CPU. A timer pushed after
//   the idle loop read `earliest` and before its park is announced is caught by the parker's
//   re-check (worker.cpp more_work: a deadline below the one its timeout came from), or its
//   pusher's notify() sees the parker and wakes it (park.hpp's Dekker pair (a)).
#include <climits>
#include <mutex>
#include <utility>

#include "coop/src/runtime_internal.hpp"

namespace coop::internal {

namespace {
// later — the heap order: the earliest deadline on top.
bool later(const TimerEntry* a, const TimerEntry* b) noexcept { return a->deadline_ns > b->deadline_ns; }

// meld — one heap of the heaps rooted at a and b (either may be null; a root's sibling is
// null): the later root becomes the first child of the other.
TimerEntry* meld(TimerEntry* a, TimerEntry* b) noexcept {
    if (a == nullptr) return b;
    if (b == nullptr) return a;
    if (later(a, b)) std::swap(a, b);
    b->sibling = a->child;
    a->child = b;
    return a;
}

// pop_root — the heap of `root`'s children (root removed): the two-pass pairing of the
// paper, left to right in pairs, then the pairs melded right to left; iterative, so its
// stack use does not grow with the number of sleepers.
TimerEntry* pop_root(TimerEntry* root) noexcept {
    TimerEntry* c = root->child;
    root->child = nullptr;
    TimerEntry* pairs = nullptr;  // the melded pairs, last first (linked through sibling)
    while (c != nullptr) {
        TimerEntry* a = c;
        TimerEntry* b = a->sibling;
        c = b != nullptr ? b->sibling : nullptr;
        a->sibling = nullptr;
        if (b != nullptr) b->sibling = nullptr;
        TimerEntry* m = meld(a, b);
        m->sibling = pairs;
        pairs = m;
    }
    TimerEntry* heap = nullptr;
    while (pairs != nullptr) {
        TimerEntry* next = pairs->sibling;
        pairs->sibling = nullptr;
        heap = meld(heap, pairs);
        pairs = next;
    }
    return heap;
}

// lower_earliest — CAS-min of earliest_ns.
void lower_earliest(RuntimeState& rt, std::int64_t deadline) noexcept {
    // seq_cst: see push_timer.
    std::int64_t cur = rt.earliest_ns.load(std::memory_order_seq_cst);
    while (deadline < cur && !rt.earliest_ns.compare_exchange_weak(cur, deadline, std::memory_order_seq_cst)) {
    }
}
}  // namespace

void push_timer(RuntimeState& rt, TimerEntry* e) noexcept {
    // Read before publishing: once pushed, a poller may wake the sleeper, whose stack (and
    // the entry on it) then changes.
    const std::int64_t deadline = e->deadline_ns;
    // relaxed: the value is only the CAS's first guess.
    TimerEntry* head = rt.timers.load(std::memory_order_relaxed);
    do {
        e->next = head;
        // seq_cst: release publishes the entry to the poller's take-all exchange; seq_cst
        // orders the push before our earliest_ns update below (see poll_timers).
    } while (!rt.timers.compare_exchange_weak(head, e, std::memory_order_seq_cst, std::memory_order_relaxed));
    // After the push, so a poller that reset earliest_ns before taking the list either took
    // our entry or sees this lower bound.
    lower_earliest(rt, deadline);
    rt.scheduler->notify();  // a parked processor may need a shorter timeout
}

int poll_timers(RuntimeState& rt) noexcept {
    // seq_cst: see push_timer. INT64_MAX: no sleeper at all.
    const std::int64_t earliest = rt.earliest_ns.load(std::memory_order_seq_cst);
    if (earliest == INT64_MAX) return 0;
    const std::int64_t now = now_ns();
    if (now < earliest) return 0;
    std::unique_lock<std::mutex> lock(rt.timer_mutex, std::try_to_lock);
    if (!lock.owns_lock()) return 0;  // another processor is polling
    // seq_cst: reset before the take-all, so every entry pushed afterwards lowers it again;
    // the heap's own top is put back below.
    rt.earliest_ns.store(INT64_MAX, std::memory_order_seq_cst);
    // acq_rel (seq_cst): acquire takes the pushers' entries; take-all has no ABA problem.
    TimerEntry* list = rt.timers.exchange(nullptr, std::memory_order_seq_cst);
    TimerEntry*& heap = rt.timer_heap;
    while (list != nullptr) {
        TimerEntry* e = list;
        list = e->next;
        e->child = e->sibling = nullptr;
        heap = meld(heap, e);
    }
    int woken = 0;
    while (heap != nullptr && heap->deadline_ns <= now) {
        TimerEntry* e = heap;
        heap = pop_root(e);
        COOP_HOOK(timer_woken, static_cast<long long>(e->deadline_ns), woken);
        if (e->fire != nullptr) e->fire(e, true);  // an I/O deadline (io.cpp); frees e
        else rt.scheduler->awakened(e->activity);  // e is dead after this
        ++woken;
    }
    if (heap != nullptr) lower_earliest(rt, heap->deadline_ns);
    return woken;
}

bool timers_due(RuntimeState& rt) noexcept {
    // seq_cst: the parker's read of the Dekker pair with push_timer (after its fence anyway).
    const std::int64_t earliest = rt.earliest_ns.load(std::memory_order_seq_cst);
    return earliest != INT64_MAX && earliest <= now_ns();
}

std::int64_t timer_earliest_ns(RuntimeState& rt) noexcept {
    // relaxed: only the basis of a timeout; the parker's re-check (worker.cpp more_work)
    // compares it with a seq_cst load after its fence, so a timer pushed since is not missed.
    return rt.earliest_ns.load(std::memory_order_relaxed);
}

std::int64_t timer_timeout_ns(std::int64_t earliest) noexcept {
    if (earliest == INT64_MAX) return -1;
    return std::max<std::int64_t>(0, earliest - now_ns());
}

namespace {
// drop_list — frees the I/O deadline entries of the heap rooted at `h` (iterative: the
// children and siblings go on an explicit list).
void drop_list(TimerEntry* todo) noexcept {
    while (todo != nullptr) {
        TimerEntry* e = todo;
        todo = e->next;
        for (TimerEntry* c = e->child; c != nullptr;) {
            TimerEntry* sib = c->sibling;
            c->next = todo;
            todo = c;
            c = sib;
        }
        if (e->fire != nullptr) e->fire(e, false);
    }
}
}  // namespace

void drop_timers(RuntimeState& rt) noexcept {
    // Only the runtime's destructor, after its workers joined: no concurrent access. The
    // pushed list's entries have no children yet; the heap's root has no `next`.
    drop_list(rt.timers.exchange(nullptr, std::memory_order_acquire));
    if (rt.timer_heap != nullptr) {
        rt.timer_heap->next = nullptr;
        drop_list(rt.timer_heap);
        rt.timer_heap = nullptr;
    }
}

}  // namespace coop::internal
