// runtime.cpp — coop's processors, task switch, finalizers, idle loop, timers and Runtime.
//
// Citation: Negele et al. 2017, Sect. 3.1-3.2, Fig. 1 (SWITCHTO: reset the quantum,
// forward finalizer and previous, restore the next context), Fig. 2 (SWITCH / ENQUEUESWITCH,
// the `working` counter and RESUMEANYPROCESSOR; here GlobalPriorityPolicy::notify) and
// Fig. 3 (FINALIZESWITCH: the resumed side calls finalizer(previous, value)).
//
// Design summary
// - switch_to(p, previous, next, finalizer, value): resets the quantum and sets p.current,
//   gives `next` a stack and a fresh continuation if it never ran (stacks are allocated at
//   first run), and makes ONE Boost.Context jump (jump_fcontext) carrying &SwitchArgs. The
//   resumed side (after_switch) stores the suspended continuation into previous->context,
//   then runs the finalizer; only finalizers publish `previous` (ready queue, wait queue),
//   so no processor can resume an activity before its context is saved.
// - Finalizers: fin_yield (ENQUEUESWITCH for a yield: requeue, no wake-up needed because
//   this processor stays busy), fin_recycle (a finished activity's stack back to this
//   processor's cache), fin_join, fin_sleep, and the ones in sync.cpp (mutex, condition,
//   semaphore waits).
// - The idle loop runs on each worker's own OS-thread stack (the processor's idle
//   activity): take a ready activity and switch to it; otherwise drain the inbox, poll the
//   timers, spin kIdleSpins polls, then park on the policy's futex (scheduler.hpp) with the
//   earliest timer deadline as timeout. An idle runtime uses no CPU.
// - Sanitizers: every jump is bracketed by __sanitizer_start_switch_fiber /
//   __sanitizer_finish_switch_fiber (ASan: the target stack's bounds; a finishing activity
//   passes nullptr so its fake stack is freed) and preceded by __tsan_switch_to_fiber (TSan:
//   one fiber per activity, created at first run, destroyed by fin_recycle).
//
// Ownership rules: see activity.hpp (descriptors, contexts), stack.hpp (stacks) and
// processor.hpp (processor-local state). A switch never crosses OS threads; code after a
// jump must not use values computed before it that depend on the OS thread (the activity may
// have migrated): only SwitchArgs and TLS re-read through this_processor().
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <boost/context/detail/fcontext.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "runtimes/native/coop.hpp"
#include "runtimes/native/processor.hpp"
#include "runtimes/os/os_threads.hpp"

#if COOP_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if COOP_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace coop {
namespace internal {

namespace ctx = boost::context::detail;

namespace {

// t_processor — the processor this OS thread is (nullptr for other threads).
thread_local Processor* t_processor = nullptr;

// g_active — the one running runtime (for spawns from non-worker threads).
std::atomic<RuntimeState*> g_active{nullptr};

inline void cpu_relax() noexcept { __builtin_ia32_pause(); }

// bump — increments a counter that only the calling processor writes: a plain load and a
// release store (no locked instruction). release: a reader that sees the new value (acquire)
// sees everything this processor did before, in particular the start of every activity
// whose finish it counts (see quiescent()).
inline void bump(std::atomic<std::uint64_t>& c) noexcept {
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

// SwitchArgs — what a switch hands to the resumed side (Fig. 1's finalizer, previous and
// value; on the switching stack, read by the resumed side before anything else).
struct SwitchArgs {
    Finalizer finalizer;
    Activity* previous;  // nullptr: the switching activity finished
    void* value;
};

// after_switch — Fig. 3 FINALIZESWITCH, on the resumed side.
inline void after_switch(ctx::transfer_t t) noexcept {
    const auto* args = static_cast<const SwitchArgs*>(t.data);
    const Finalizer fin = args->finalizer;
    Activity* const prev = args->previous;
    void* const value = args->value;
    // `args` lives on prev's stack: copied out above, before the finalizer may publish prev.
    if (prev != nullptr) prev->context = t.fctx;
    if (fin != nullptr) fin(prev, value);
}

[[noreturn]] void finish(Activity* self) noexcept;
}  // namespace

// flush_descriptors — moves the processor's cached descriptors beyond `keep` to the shared
// list.
void flush_descriptors(Processor& p, std::size_t keep);

namespace {

// trampoline — the first frame of every activity.
void trampoline(ctx::transfer_t t) noexcept {
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    after_switch(t);
    Activity* self = current();
    self->body(self);
    finish(self);
}

// first_run — gives a never-run activity its stack and continuation.
[[gnu::noinline]] void first_run(Processor& p, Activity* a) noexcept {
    Stack* s = p.stacks.get();
    a->stack = s;
    // Colouring: the hot top frames of activities would otherwise all sit at the same
    // offset modulo 4 KiB and compete for the same L1 sets (8 ways): 16 colours of 256 B.
    const std::size_t color = (p.color++ & 15u) * 256u;
    a->context = ctx::make_fcontext(static_cast<char*>(s->top()) - color, s->size - color, &trampoline);
#if COOP_TSAN
    a->tsan_fiber = __tsan_create_fiber(0);
#endif
}

// switch_to — Fig. 1 SWITCHTO followed (on the resumed side) by Fig. 3 FINALIZESWITCH.
[[gnu::always_inline]] inline void switch_to(Processor& p, Activity* prev, Activity* next,
                                             Finalizer fin, void* value) noexcept {
    reset_quantum();  // for `next`: the jump below stays on this OS thread (quantum.hpp)
    p.current = next;
    if (next->context == nullptr) [[unlikely]]
        first_run(p, next);
    SwitchArgs args{fin, prev, value};
#if COOP_ASAN
    void* fake_stack = nullptr;
    const void* bottom = next->idle ? p.idle_stack_bottom : next->stack->bottom;
    const std::size_t size = next->idle ? p.idle_stack_size : next->stack->size;
    __sanitizer_start_switch_fiber(prev != nullptr ? &fake_stack : nullptr, bottom, size);
#endif
#if COOP_TSAN
    __tsan_switch_to_fiber(next->tsan_fiber, 0);
#endif
    ctx::transfer_t t = ctx::jump_fcontext(next->context, &args);
    // Resumed, possibly on another processor: `p` is stale from here on.
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
    after_switch(t);
}

// fin_yield — ENQUEUESWITCH for a yield (value: the policy).
void fin_yield(Activity* prev, void* policy) noexcept { static_cast<Policy*>(policy)->yielded(prev); }

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
    auto* t = static_cast<Activity*>(target);
    std::uintptr_t expected = kJoinRunning;
    // acq_rel: release publishes prev (its saved context) to the finisher that will make it
    // ready; acquire (also on failure) takes the finished activity's writes.
    if (!t->join_word.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(prev),
                                              std::memory_order_acq_rel, std::memory_order_acquire))
        this_processor()->runtime->policy.awakened(prev);
}

void push_timer(RuntimeState& rt, TimerEntry* e) noexcept;

// fin_sleep — a sleeping activity's timer entry goes on the timer list.
void fin_sleep(Activity*, void* entry) noexcept {
    Processor* p = this_processor();
    push_timer(*p->runtime, static_cast<TimerEntry*>(entry));
}

void submit_inbox(RuntimeState& rt, Activity* a) {
    {
        std::lock_guard<std::mutex> lock(rt.inbox_mutex);
        rt.inbox.push_back(a);
        // seq_cst: published before notify()'s fence and working_ check (the parker checks
        // inbox_ready after its own fence: Dekker pair, see scheduler.hpp).
        rt.inbox_ready.store(true, std::memory_order_seq_cst);
    }
    rt.policy.notify_all();
}

bool drain_inbox(RuntimeState& rt) {
    std::vector<Activity*> batch;
    {
        std::lock_guard<std::mutex> lock(rt.inbox_mutex);
        batch.swap(rt.inbox);
        // relaxed: under the mutex, which orders it with the producers' stores.
        rt.inbox_ready.store(false, std::memory_order_relaxed);
    }
    for (Activity* a : batch) rt.policy.awakened(a);
    return !batch.empty();
}

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
    // seq_cst CAS-min: after the push, so a poller that reset earliest_ns before taking the
    // list either took our entry or sees this lower bound.
    std::int64_t cur = rt.earliest_ns.load(std::memory_order_seq_cst);
    while (deadline < cur &&
           !rt.earliest_ns.compare_exchange_weak(cur, deadline, std::memory_order_seq_cst)) {
    }
    rt.policy.notify();  // a parked processor may need a shorter timeout
}

// poll_timers — wakes the sleepers whose deadline passed; returns how many.
int poll_timers(RuntimeState& rt) noexcept {
    // relaxed: a hint; the exchange below synchronises.
    if (rt.timers.load(std::memory_order_relaxed) == nullptr) return 0;
    const std::int64_t now = now_ns();
    // seq_cst: see push_timer.
    if (now < rt.earliest_ns.load(std::memory_order_seq_cst)) return 0;
    // seq_cst: reset before the take-all, so every entry still listed afterwards was pushed
    // after the reset and lowered earliest_ns itself.
    rt.earliest_ns.store(INT64_MAX, std::memory_order_seq_cst);
    // acq_rel (seq_cst): acquire takes the pushers' entries; take-all has no ABA problem.
    TimerEntry* list = rt.timers.exchange(nullptr, std::memory_order_seq_cst);
    int woken = 0;
    while (list != nullptr) {
        TimerEntry* e = list;
        list = e->next;
        if (e->deadline_ns <= now) {
            rt.policy.awakened(e->activity);  // e is dead after this
            ++woken;
        } else {
            push_timer(rt, e);
        }
    }
    return woken;
}

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

bool more_work(void* state) {
    auto& rt = *static_cast<RuntimeState*>(state);
    // seq_cst loads: the parker's reads of the Dekker pairs (after its fence anyway).
    if (rt.inbox_ready.load(std::memory_order_seq_cst) || rt.stopping.load(std::memory_order_seq_cst))
        return true;
    return rt.timers.load(std::memory_order_seq_cst) != nullptr &&
           rt.earliest_ns.load(std::memory_order_seq_cst) <= now_ns();
}

// idle_loop — the processor's idle activity (on the worker's own stack).
void idle_loop(Processor& p) {
    RuntimeState& rt = *p.runtime;
    unsigned spins = 0;
    bool ran = false;
    for (;;) {
        if (Activity* next = rt.policy.pick_next(Priority::Idle)) {
            spins = 0;
            // Chained wake-up: more work than we take -> another parked processor helps.
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
        if (spins < kIdleSpins) {
            ++spins;
            cpu_relax();
            continue;
        }
        spins = 0;
        std::int64_t timeout = -1;
        // relaxed: only a timeout; a later push notifies us.
        if (rt.timers.load(std::memory_order_relaxed) != nullptr)
            timeout = std::max<std::int64_t>(0, rt.earliest_ns.load(std::memory_order_relaxed) - now_ns());
        rt.policy.suspend(timeout, &more_work, &rt);
    }
}

void worker_main(Processor* p, int cpu) {
    bind_processor(p->index);
    if (cpu >= 0) coopbench::os::pin_current_thread({cpu});
    t_processor = p;
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
    flush_descriptors(*p, 0);
    t_processor = nullptr;
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
    if (joiner > kJoinFinished) rt.policy.awakened(reinterpret_cast<Activity*>(joiner));
    bump(p->finished);
    Activity* next = rt.policy.pick_next(Priority::Idle);
    if (next == nullptr) next = &p->idle;
    switch_to(*p, nullptr, next, &fin_recycle, stack);
    __builtin_unreachable();
}

}  // namespace

Processor* this_processor() noexcept {
    // Empty asm: keeps the compiler from assuming anything about this thread's identity.
    asm volatile("" ::: "memory");
    return t_processor;
}

Activity* current() noexcept {
    asm volatile("" ::: "memory");
    Processor* p = t_processor;
    return p != nullptr && !p->current->idle ? p->current : nullptr;
}

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
    static std::mutex external;  // one borrower of the slot at a time
    std::lock_guard<std::mutex> lock(external);
    // Index processor_count: no worker of this runtime uses it; bind_processor raises the
    // hazard scan bound to include it (one more slot per acquire() from now on).
    bind_processor(rt->processor_count);
    Activity* a = q.dequeue();
    detail::t_index = detail::kUnbound;  // dequeue() cleared hp1/hp2 (release stores)
    return a;
}

bool ready_work() noexcept {
    Processor* p = this_processor();
    return p != nullptr && p->runtime->policy.has_ready();
}

unsigned processors_in_use() noexcept {
    Processor* p = this_processor();
    return p != nullptr ? p->runtime->processor_count : 1;
}

void suspend(Finalizer finalizer, void* value) noexcept {
    Processor* p = this_processor();
    Activity* cur = p->current;
    Activity* next = p->runtime->policy.pick_next(Priority::Idle);
    if (next == nullptr) next = &p->idle;
    switch_to(*p, cur, next, finalizer, value);
}

void make_ready(Activity* a) noexcept {
    if (Processor* p = this_processor()) {
        p->runtime->policy.awakened(a);
        return;
    }
    // A non-worker thread (e.g. unlocking a coop::Mutex from main()): it has no hazard
    // pointer slot, so it hands the activity to the workers through the inbox.
    RuntimeState* rt = g_active.load(std::memory_order_acquire);
    submit_inbox(*rt, a);
}

bool runtime_active() noexcept {
    // acquire: as in start() (the state is built before it is published).
    return this_processor() != nullptr || g_active.load(std::memory_order_acquire) != nullptr;
}

void start(Activity* a, Priority priority) {
    a->priority = priority;
    Processor* p = this_processor();
    // acquire: the runtime's state is fully built before it is published (see Runtime).
    RuntimeState* rt = p != nullptr ? p->runtime : g_active.load(std::memory_order_acquire);
    if (p != nullptr) {
        bump(p->started);  // before the enqueue: the activity's finish happens after it
        rt->policy.awakened(a);
    } else {
        // seq_cst: counted before the hand-over (and before Runtime::run waits).
        rt->external_started.fetch_add(1, std::memory_order_seq_cst);
        submit_inbox(*rt, a);
    }
}

void join_and_free(Activity* a) noexcept {
    // acquire: pairs with finish()'s release exchange.
    if (a->join_word.load(std::memory_order_acquire) != kJoinFinished) {
        if (current() != nullptr) {
            suspend(&fin_join, a);
            // Made ready by finish() (or by fin_join itself): the target has finished; the
            // queue hand-off ordered its writes before us.
        } else {
            // A non-worker thread: poll (rare: Runtime::run joins after everything ended).
            while (a->join_word.load(std::memory_order_acquire) != kJoinFinished)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
    free_descriptor(a);
}

namespace {
// The shared descriptor list (surplus of the processors' caches) and the slabs (never
// returned to the OS: recycled descriptors keep their nodes; listed here for leak checkers).
struct SharedDescriptors {
    std::mutex mutex;
    Activity* head = nullptr;
    std::atomic<std::size_t> count{0};  // written under the mutex; read as a hint without
    std::vector<void*> slabs;
};
SharedDescriptors& shared_descriptors() {
    static SharedDescriptors* s = new SharedDescriptors;  // outlives every thread
    return *s;
}
// Slabs grow from kSlabFirst to kSlabMax bytes (doubling per processor), so a runtime that
// spawns a thousand activities does not commit a megabyte, and each slab's pages are
// committed in one madvise(MADV_POPULATE_WRITE) call instead of one page fault per 64
// descriptors: on the reference KVM guest a first-touch fault cost ~11 us per 4 KiB page,
// a populated page ~2-4 us (measured with mmap + touch vs MAP_POPULATE), which made the
// faults the largest part of a create in a fresh process (see docs/native-runtime.md).
// With doubling, at most half of the populated memory is not (yet) used.
constexpr std::size_t kSlabFirst = std::size_t{64} << 10;
constexpr std::size_t kSlabMax = std::size_t{2} << 20;
constexpr std::size_t kDescriptorCacheMax = 4096;
constexpr std::size_t kDescriptorBatch = 1024;

inline Activity*& link(Activity* a) noexcept { return *reinterpret_cast<Activity**>(&a->context); }

}  // namespace

void flush_descriptors(Processor& p, std::size_t keep) {
    Activity* list = nullptr;
    while (p.free_count > keep) {
        Activity* a = p.free_descriptors;
        p.free_descriptors = link(a);
        --p.free_count;
        link(a) = list;
        list = a;
    }
    if (list == nullptr) return;
    auto& sh = shared_descriptors();
    std::lock_guard<std::mutex> lock(sh.mutex);
    std::size_t n = 0;
    while (list != nullptr) {
        Activity* a = list;
        list = link(a);
        link(a) = sh.head;
        sh.head = a;
        ++n;
    }
    // A plain load + store, not fetch_add: every writer holds the mutex, so no update is
    // lost (a locked add per descriptor was one locked instruction per create in a burst);
    // relaxed: readers outside the mutex use it only as a hint.
    sh.count.store(sh.count.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}
void* allocate_descriptor(std::size_t size, Node** node) {
    *node = nullptr;
    if (size > kDescriptorBlock) return ::operator new(size);
    Processor* p = this_processor();
    auto& sh = shared_descriptors();
    if (p == nullptr) {
        std::lock_guard<std::mutex> lock(sh.mutex);
        if (Activity* a = sh.head) {
            sh.head = link(a);
            sh.count.fetch_sub(1, std::memory_order_relaxed);  // relaxed: under the mutex
            *node = a->node;
            return a;
        }
        void* m = ::operator new(kDescriptorBlock);
        sh.slabs.push_back(m);
        return m;
    }
    if (p->free_descriptors == nullptr && sh.count.load(std::memory_order_relaxed) > 0) {
        // relaxed: a hint; the lock decides
        std::lock_guard<std::mutex> lock(sh.mutex);
        std::size_t i = 0;
        for (; i < kDescriptorBatch && sh.head != nullptr; ++i) {
            Activity* a = sh.head;
            sh.head = link(a);
            link(a) = p->free_descriptors;
            p->free_descriptors = a;
            ++p->free_count;
        }
        // relaxed load + store: under the mutex (see flush_descriptors).
        sh.count.store(sh.count.load(std::memory_order_relaxed) - i, std::memory_order_relaxed);
    }
    if (Activity* a = p->free_descriptors) {
        p->free_descriptors = link(a);
        --p->free_count;
        *node = a->node;
        return a;
    }
    if (p->slab_next == p->slab_end) {
        const std::size_t bytes = p->slab_bytes = p->slab_bytes == 0 ? kSlabFirst : std::min(2 * p->slab_bytes, kSlabMax);
        auto* slab = static_cast<char*>(::operator new(bytes));
        populate(slab, bytes);
        {
            std::lock_guard<std::mutex> lock(sh.mutex);
            sh.slabs.push_back(slab);
        }
        p->slab_next = slab;
        p->slab_end = slab + bytes;
    }
    void* m = p->slab_next;
    p->slab_next += kDescriptorBlock;
    return m;
}

void free_descriptor(Activity* a) noexcept {
    if (!a->pooled) {
        release(a);  // its queue node
        ::operator delete(static_cast<void*>(a));
        return;
    }
    Processor* p = this_processor();
    if (p == nullptr) {
        auto& sh = shared_descriptors();
        std::lock_guard<std::mutex> lock(sh.mutex);
        link(a) = sh.head;
        sh.head = a;
        sh.count.fetch_add(1, std::memory_order_relaxed);  // relaxed: under the mutex
        return;
    }
    link(a) = p->free_descriptors;
    p->free_descriptors = a;
    if (++p->free_count > kDescriptorCacheMax) flush_descriptors(*p, kDescriptorCacheMax - kDescriptorBatch);
}

Processor::Processor(RuntimeState& rt, unsigned i) : runtime(&rt), index(i), stacks(rt.stack_pool) {
    idle.idle = true;
    idle.priority = Priority::Idle;
}

RuntimeState::RuntimeState(unsigned n, std::size_t stack_size, bool guard, bool pin_)
    : processor_count(n), pin(pin_), policy(n), stack_pool(stack_size, guard) {}

}  // namespace internal

void yield() noexcept {
    using namespace internal;
    Processor* p = this_processor();
    if (p == nullptr || p->current->idle) {
        std::this_thread::yield();
        return;
    }
    Activity* cur = p->current;
    if (cur->uncooperative != 0) return;
    RuntimeState& rt = *p->runtime;
    if ((++p->ticks & kTimerPollMask) == 0) poll_timers(rt);
    Activity* next = rt.policy.pick_next(cur->priority);
    if (next == nullptr) {
        reset_quantum();  // Fig. 2: nobody else to run
        return;
    }
    switch_to(*p, cur, next, &fin_yield, &rt.policy);
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
    auto* rt = new RuntimeState(n, o.stack_size != 0 ? o.stack_size : kDefaultStackSize, o.guard, o.pin);
    for (unsigned i = 0; i < n; ++i) rt->processors.push_back(std::make_unique<Processor>(*rt, i));
    RuntimeState* expected = nullptr;
    // acq_rel: release publishes the built state to start()'s acquire load.
    if (!g_active.compare_exchange_strong(expected, rt, std::memory_order_acq_rel)) {
        delete rt;
        throw std::logic_error("coop::Runtime: another runtime is still running in this process");
    }
    state_ = rt;
    std::vector<int> cpus;
    if (o.pin) cpus = coopbench::os::choose_cpus(n);
    for (unsigned i = 0; i < n; ++i) {
        const int cpu = i < cpus.size() ? cpus[i] : -1;
        rt->processors[i]->thread = std::thread(&worker_main, rt->processors[i].get(), cpu);
    }
}

Runtime::~Runtime() {
    using namespace internal;
    wait_all_finished();
    // seq_cst: the stop flag's half of the Dekker pair with parking processors.
    state_->stopping.store(true, std::memory_order_seq_cst);
    state_->policy.notify_all();
    for (auto& p : state_->processors) p->thread.join();
    state_->processors.clear();
    drain_pools();
    // release: the teardown above happens before a next runtime's successful CAS (acq_rel).
    g_active.store(nullptr, std::memory_order_release);
    delete state_;
}

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

unsigned Runtime::processors() const noexcept { return state_->processor_count; }

}  // namespace coop
