// api.cpp — coop's public API (coop.hpp: Runtime, spawn's start, join, yield, sleep) and the
// runtime-wide state it reaches (the calling thread's processor, the active runtime).
//
// Citation: Negele et al. 2017, Sect. 3.1-3.2, Fig. 2 (SWITCH: yield switches to a ready
// activity of the same or higher priority; ENQUEUESWITCH via fin_yield).
//
// The runtime's files: switch.hpp/.cpp (the task switch, sanitizer glue), finalizers.cpp,
// worker.cpp (idle loop, finish), inbox.cpp, timers.cpp, quiescence.cpp, descriptors.cpp
// (allocator), cpus.cpp (CPU choice and pinning, hwloc), and this file. Ownership rules: see
// activity.hpp (descriptors, contexts), stack.hpp (stacks) and processor.hpp
// (processor-local state).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "coop/coop.hpp"
#include "coop/cpus.hpp"
#include "coop/src/io_poller.hpp"
#include "coop/src/switch.hpp"
#include "coop/src/thread_pointer.hpp"

namespace coop {
namespace internal {

namespace {
// t_processor — the processor this OS thread is (nullptr for other threads). initial-exec:
// in the static TLS block, at one offset from the thread pointer for every thread, which
// this_processor() (activity.hpp) reads %fs-relative.
thread_local Processor* t_processor [[gnu::tls_model("initial-exec")]] = nullptr;

// measure_processor_offset — sets g_processor_tp_offset when the library is loaded: a
// constructor of priority 101 (the first user priority) runs before every C++ static
// initialiser of the program, so a static object that asks this_processor() finds it set.
[[gnu::constructor(101)]] void measure_processor_offset() noexcept {
    g_processor_tp_offset = thread_pointer_offset(&t_processor);
}
}  // namespace

std::ptrdiff_t g_processor_tp_offset = 0;

// g_active — the one running runtime (for spawns from non-worker threads).
std::atomic<RuntimeState*> g_active{nullptr};

void set_this_processor(Processor* p) noexcept { t_processor = p; }

Processor* this_processor_slow() noexcept {
    // Empty asm: keeps the compiler from assuming anything about this thread's identity.
    asm volatile("" ::: "memory");
    return t_processor;
}

Activity* current() noexcept { return running_activity(); }

std::int64_t now_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Activity* dequeue_waiter(Queue<Activity>& q) noexcept {
    if (processor_index() != detail::kUnbound) return q.dequeue();
    // empty() needs no slot. Seeing an enqueue: the callers' seq_cst fence comes first (the
    // Dekker pairs in sync.cpp); a parker whose enqueue we miss here re-checks after its own
    // fence and sees our release, exactly as when dequeue() finds nothing.
    if (q.empty()) return nullptr;
    // The queue has waiters, so a runtime is running and cannot end before they do.
    // acquire: the state is built before it is published (see Runtime).
    RuntimeState* rt = g_active.load(std::memory_order_acquire);
    if (rt == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(rt->external_slot);  // one borrower of the slot at a time
    // Index processor_count: no worker of this runtime uses it; bind_processor raises the
    // hazard scan bound to include it (one more slot per acquire() from now on).
    bind_processor(rt->processor_count);
    Activity* a = q.dequeue();
    detail::t_index = detail::kUnbound;  // dequeue() cleared hp1/hp2 (release stores)
    return a;
}

bool ready_work() noexcept {
    Processor* p = this_processor();
    return p != nullptr && p->runtime->scheduler->has_ready();
}

unsigned processors_in_use() noexcept {
    Processor* p = this_processor();
    return p != nullptr ? p->runtime->processor_count : 1;
}

unsigned cpus_in_use() noexcept {
    Processor* p = this_processor();
    return p != nullptr ? p->runtime->scheduler->cpus() : 1;
}

namespace {
// The hot path per algorithm A: each of these is instantiated for one Scheduler<A> (the
// caller's with_scheduler, scheduler.hpp, chose it) and holds only A's code. `p`: the
// calling processor, reached once by the caller.

// suspend_on — suspend() on processor `p`.
template <class A>
[[gnu::always_inline]] inline void suspend_body(Scheduler<A>& s, Processor& p, Finalizer finalizer, void* value) noexcept {
    Activity* cur = p.current;
    // I/O (io.cpp): a busy processor polls without blocking every kIoPollMask+1 blocks, or
    // at a clock tick when nobody has polled for 1 ms (io_poller.hpp, IoClock).
    if ((++p.ticks & p.io_clock.mask) == 0) [[unlikely]]
        io::busy_checkpoint(p.index, p.ticks, p.io_clock);
    Activity* next = pick_next(s, p, Priority::Idle);
    if (next == nullptr) next = &p.idle;
    switch_to(p, cur, next, finalizer, value);
}

// suspend_on — suspend_body out of line, for the untyped entry point (its with_scheduler calls one
// of three; inlined there, every algorithm paid for the others' register saves).
template <class A>
[[gnu::noinline]] void suspend_on(Scheduler<A>& s, Processor& p, Finalizer finalizer, void* value) noexcept {
    suspend_body(s, p, finalizer, value);
}

// make_ready_on — make_ready() on processor `p`.
template <class A>
[[gnu::always_inline]] inline void make_ready_body(Scheduler<A>& s, Processor& p, Activity* a) noexcept {
    s.awakened(p.index, a);
}

// make_ready_on — make_ready_body out of line, for the untyped entry point (its with_scheduler calls one
// of three; inlined there, every algorithm paid for the others' register saves).
template <class A>
[[gnu::noinline]] void make_ready_on(Scheduler<A>& s, Processor& p, Activity* a) noexcept {
    make_ready_body(s, p, a);
}

// start_on — start() on processor `p`.
template <class A>
[[gnu::always_inline]] inline void start_body(Scheduler<A>& s, Processor& p, Activity* a) noexcept {
    bump(p.started);  // before the enqueue: the activity's finish happens after it
    s.awakened(p.index, a);
}

// start_on — start_body out of line, for the untyped entry point (its with_scheduler calls one
// of three; inlined there, every algorithm paid for the others' register saves).
template <class A>
[[gnu::noinline]] void start_on(Scheduler<A>& s, Processor& p, Activity* a) noexcept {
    start_body(s, p, a);
}
}  // namespace

// check_kind — the typed entry points' contract: the running runtime's algorithm is K.
template <Scheduling K>
[[gnu::always_inline]] inline void check_kind([[maybe_unused]] const Processor& p) noexcept {
    COOP_ASSERT(p.runtime->scheduler->kind() == K, "coop::Algo<K> called in a runtime of another Scheduling");
}

// The untyped entry points: one branch on the kind (with_scheduler), then A's code; the
// typed ones (X_as<K>): A's code at once. Both call the same X_on<A>.
void suspend(Finalizer finalizer, void* value) noexcept {
    COOP_HOOK(untyped_entry);
    Processor* p = this_processor();
    with_scheduler(*p->runtime->scheduler, [&](auto& s) { suspend_on(s, *p, finalizer, value); });
}

template <Scheduling K>
void suspend_as(Finalizer finalizer, void* value) noexcept {
    Processor* p = this_processor();
    check_kind<K>(*p);
    suspend_body(scheduler_of<algorithm_t<K>>(*p), *p, finalizer, value);
}

void make_ready(Activity* a) noexcept {
    COOP_HOOK(untyped_entry);
    if (Processor* p = this_processor()) {
        with_scheduler(*p->runtime->scheduler, [&](auto& s) { make_ready_on(s, *p, a); });
        return;
    }
    // A non-worker thread (e.g. unlocking a coop::Mutex from main()): it has no hazard
    // pointer slot, so it hands the activity to the workers through the inbox.
    RuntimeState* rt = g_active.load(std::memory_order_acquire);
    submit_inbox(*rt, a);
}

template <Scheduling K>
void make_ready_as(Activity* a) noexcept {
    if (Processor* p = this_processor()) [[likely]] {
        check_kind<K>(*p);
        make_ready_body(scheduler_of<algorithm_t<K>>(*p), *p, a);
        return;
    }
    // As make_ready (acquire: as there).
    submit_inbox(*g_active.load(std::memory_order_acquire), a);
}

namespace {
// start_external — start() from a thread that is not a worker: through the inbox.
[[gnu::noinline]] void start_external(Activity* a) {
    // acquire: the runtime's state is fully built before it is published (see Runtime).
    RuntimeState* rt = g_active.load(std::memory_order_acquire);
    // seq_cst: counted before the hand-over (and before Runtime::run waits).
    rt->external_started.fetch_add(1, std::memory_order_seq_cst);
    submit_inbox(*rt, a);
}
}  // namespace

void start(Activity* a, Priority priority) {
    COOP_HOOK(untyped_entry);
    a->priority = priority;
    Processor* p = this_processor();
    if (p != nullptr) with_scheduler(*p->runtime->scheduler, [&](auto& s) { start_on(s, *p, a); });
    else start_external(a);
}

template <Scheduling K>
void start_as(Activity* a, Priority priority) {
    a->priority = priority;
    Processor* p = this_processor();
    if (p != nullptr) [[likely]] {
        check_kind<K>(*p);
        start_body(scheduler_of<algorithm_t<K>>(*p), *p, a);
    } else {
        start_external(a);
    }
}

namespace {
// join_and_free_with — join_and_free through `suspend_fn` and `fin` (untyped, or algorithm
// A's: fin_join / fin_join_on<A>).
template <void (*SuspendFn)(Finalizer, void*) noexcept>
[[gnu::always_inline]] inline bool join_and_free_with(Activity* a, Finalizer fin) noexcept {
    // acquire: pairs with finish()'s release exchange.
    if (a->join_word.load(std::memory_order_acquire) != kJoinFinished) {
        if (running_activity() != nullptr) {
            SuspendFn(fin, a);
            // Made ready by finish() (or by the finalizer itself): the target has finished;
            // the queue hand-off ordered its writes before us.
        } else {
            // A non-worker thread: poll (rare: Runtime::run joins after everything ended).
            while (a->join_word.load(std::memory_order_acquire) != kJoinFinished)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
    // Written at its first run, before the finish that the join above waited for.
    const bool ran = !a->start_failed;
    free_descriptor(a);
    return ran;
}
}  // namespace

bool join_and_free(Activity* a) noexcept { return join_and_free_with<&suspend>(a, &fin_join); }

template <Scheduling K>
bool join_and_free_as(Activity* a) noexcept {
    return join_and_free_with<&suspend_as<K>>(a, &fin_join_on<algorithm_t<K>>);
}

Processor::Processor(RuntimeState& rt, unsigned i) : runtime(&rt), index(i), stacks(rt.stack_pool) {
    idle.idle = true;
    idle.priority = Priority::Idle;
}

RuntimeState::RuntimeState(unsigned n, std::size_t stack_size, bool guard, bool pin_, Scheduling scheduling)
    : processor_count(n), pin(pin_), scheduler(make_scheduler(n, scheduling)), stack_pool(stack_size, guard) {}
}  // namespace internal

namespace internal {
namespace {
// yield_on — yield() of activity `cur` on processor `p` (algorithm A; see suspend_on).
template <class A>
[[gnu::always_inline]] inline void yield_body(Scheduler<A>& s, Processor& p, Activity* cur) noexcept {
    // Every kTimerPollMask+1 yields, or at a clock tick (every kIoClockMask+1-th yield, or
    // every one while yields are slow: IoClock) when activities wait on fds and nobody has
    // polled them for 1 ms (io_poller.hpp: a yield every few ms would otherwise leave I/O,
    // and the deadlines of its waits, for 64 of them).
    static_assert((kTimerPollMask & io::kIoClockMask) == io::kIoClockMask, "a timer tick is a clock tick");
    if ((++p.ticks & p.io_clock.mask) == 0 && ((p.ticks & kTimerPollMask) == 0 || io::busy_poll_due(p.io_clock))) [[unlikely]] {
        poll_timers(*p.runtime);
        // I/O (io.cpp): a busy processor's non-blocking poll (every processor may be busy
        // in yield loops, and then nobody sleeps in epoll_wait; tokio polls every 61 ticks).
        io::poll_busy(p.index);
        // Activities made ready by threads outside the runtime (coop::io::blocking's pool,
        // a main() that unlocks a Mutex) wait in the inbox, which only the idle loop drained:
        // every processor busy in yield loops would leave them there for good. relaxed: a
        // hint; drain_inbox takes the mutex.
        if (p.runtime->inbox_ready.load(std::memory_order_relaxed)) drain_inbox(*p.runtime);
    }
    Activity* next = pick_next(s, p, cur->priority);
    if (next == nullptr) {
        reset_quantum();  // Fig. 2: nobody else to run
        return;
    }
    COOP_HOOK(yield_after_pick);
    // Resumed, most often by another yield (a ping-pong of yielders): its fin_yield<A> inline.
    // cur is a running activity: yield_as and yield() return early on an idle loop.
    switch_to<&fin_yield<A>, true>(p, cur, next, &fin_yield<A>, &p);
}

// yield_on — yield_body out of line, for the untyped entry point (its with_scheduler calls one
// of three; inlined there, every algorithm paid for the others' register saves).
template <class A>
[[gnu::noinline]] void yield_on(Scheduler<A>& s, Processor& p, Activity* cur) noexcept {
    yield_body(s, p, cur);
}
}  // namespace
}  // namespace internal

namespace internal {
template <Scheduling K>
void yield_as() noexcept {
    Processor* p = this_processor();
    if (p == nullptr || p->current->idle) [[unlikely]] {
        std::this_thread::yield();
        return;
    }
    Activity* cur = p->current;
    if (cur->uncooperative != 0) [[unlikely]]
        return;
    check_kind<K>(*p);
    yield_on(scheduler_of<algorithm_t<K>>(*p), *p, cur);
}

// The typed entry points of the three algorithms (declared in activity.hpp; finish_as in
// worker.cpp).
#define COOP_INSTANTIATE_ENTRY_POINTS(K)                                    \
    template void suspend_as<K>(Finalizer, void*) noexcept;                \
    template void make_ready_as<K>(Activity*) noexcept;                    \
    template void start_as<K>(Activity*, Priority);                        \
    template bool join_and_free_as<K>(Activity*) noexcept;                 \
    template void yield_as<K>() noexcept;
COOP_INSTANTIATE_ENTRY_POINTS(Scheduling::global)
COOP_INSTANTIATE_ENTRY_POINTS(Scheduling::work_stealing)
COOP_INSTANTIATE_ENTRY_POINTS(Scheduling::parasail)
#undef COOP_INSTANTIATE_ENTRY_POINTS
}  // namespace internal

void yield() noexcept {
    using namespace internal;
    COOP_HOOK(untyped_entry);
    Processor* p = this_processor();
    if (p == nullptr || p->current->idle) {
        std::this_thread::yield();
        return;
    }
    Activity* cur = p->current;
    if (cur->uncooperative != 0) return;
    with_scheduler(*p->runtime->scheduler, [&](auto& s) { yield_on(s, *p, cur); });
}

void sleep_until_ns(std::int64_t deadline_ns) noexcept {
    using namespace internal;
    Activity* self = current();
    if (self == nullptr) {
        const std::int64_t left = deadline_ns - now_ns();
        if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
        return;
    }
    if (deadline_ns <= now_ns()) {
        coop::yield();
        return;
    }
    TimerEntry entry{self, deadline_ns};
    suspend(&fin_sleep, &entry);
}

Runtime::Runtime(const Options& o) {
    using namespace internal;
    unsigned n = o.processors != 0 ? o.processors : std::max(1u, std::thread::hardware_concurrency());
    // One hazard-pointer slot stays free for threads that are not workers (dequeue_waiter).
    if (n > kMaxProcessors - 1)
        throw std::invalid_argument("coop::Runtime: at most " + std::to_string(kMaxProcessors - 1) + " processors");
    // Everything that may throw before the state is published (allocation, CPU choice)...
    auto rt = std::make_unique<RuntimeState>(n, o.stack_size != 0 ? o.stack_size : kDefaultStackSize, o.guard, o.pin,
                                             o.scheduling);
    for (unsigned i = 0; i < n; ++i) rt->processors.push_back(std::make_unique<Processor>(*rt, i));
    // The hazard pools of the workers' slots and of the slot kept for other threads: filled
    // now, so no enqueue in the scheduler's noexcept paths allocates a node (hazard.hpp).
    fill_pools(n + 1);
    std::vector<int> cpus;
    if (o.pin) {
        cpus = choose_cpus(n);
        // Pinned workers stay on their CPUs, so their cache groups are known: the stealing
        // policies try victims that share a last-level cache first: a stolen batch then
        // moves within a shared cache.
        rt->scheduler->set_groups(cache_groups(cpus));
    }
    RuntimeState* expected = nullptr;
    // acq_rel: release publishes the built state to start()'s acquire load.
    if (!g_active.compare_exchange_strong(expected, rt.get(), std::memory_order_acq_rel))
        throw std::logic_error("coop::Runtime: another runtime is still running in this process");
    // ...and what may throw after (a worker thread the OS refuses): stop the workers already
    // started and withdraw the state, so that a later Runtime can start (the hazard-pointer slots are process-wide: a
    // state left behind would refuse every later Runtime).
    unsigned started = 0;
    try {
        for (; started < n; ++started) {
            const int cpu = started < cpus.size() ? cpus[started] : -1;
            COOP_HOOK(runtime_start_worker);
            rt->processors[started]->thread = std::thread(&worker_main, rt->processors[started].get(), cpu);
        }
    } catch (...) {
        // seq_cst: as in ~Runtime (the stop flag's half of the Dekker pair with parkers).
        rt->stopping.store(true, std::memory_order_seq_cst);
        rt->scheduler->notify_all();
        for (unsigned i = 0; i < started; ++i) rt->processors[i]->thread.join();
        rt->processors.clear();
        // release: as in ~Runtime.
        g_active.store(nullptr, std::memory_order_release);
        throw;
    }
    state_ = rt.release();
}

Runtime::~Runtime() {
    using namespace internal;
    wait_all_finished();
    // seq_cst: the stop flag's half of the Dekker pair with parking processors.
    state_->stopping.store(true, std::memory_order_seq_cst);
    state_->scheduler->notify_all();
    for (auto& p : state_->processors) p->thread.join();
    state_->processors.clear();
    drain_pools();
    drop_timers(*state_);  // I/O deadlines that outlived their waits (io.cpp)
    // release: the teardown above happens before a next runtime's successful CAS (acq_rel).
    g_active.store(nullptr, std::memory_order_release);
    delete state_;
}

unsigned Runtime::processors() const noexcept { return state_->processor_count; }

std::map<std::string, std::uint64_t> Runtime::stats() const {
    auto m = state_->scheduler->stats();
    m["stack_failures"] = state_->stack_pool.failures();
    return m;
}

std::string Runtime::stack_failure() const { return state_->stack_pool.failure(); }

}  // namespace coop
