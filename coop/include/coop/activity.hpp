// activity.hpp — coop's activity (thread) descriptor and the task-switch primitives.
//
// Citation: F. Negele, F. Friedrich, S. Oh, B. Egger, "On the Design and Implementation of
// an Efficient Lock-Free Scheduler", Sect. 3.1-3.2: Fig. 1 (SWITCHTO), Fig. 2 (SWITCH,
// ENQUEUESWITCH), Fig. 3 (FINALIZESWITCH).
//
// Design summary
// - An Activity is a QueueItem (it travels through the lock-free ready and wait queues of
//   queue.hpp) with a continuation (one jump per switch, no fiber record, no exception
//   machinery: coop's context-aware switch on x86-64, Boost.Context's fcontext_t elsewhere or
//   with COOP_CACS=OFF; coop/src/switch.hpp), a stack assigned at its first run (not at spawn)
//   and a priority (the quantum is a thread-local counter: quantum.hpp).
// - A switch passes a SwitchArgs {finalizer, previous, value} to the resumed side, which
//   first stores the suspended activity's continuation into `previous` and then calls
//   finalizer(previous, value) before it continues (Fig. 3). Only then may `previous` be
//   published (enqueued into a ready or wait queue): no other processor can resume an
//   activity that is still running on this one. The paper keeps finalizer/previous/value in
//   the resumed activity's descriptor; a switch never leaves its processor, so we pass them
//   on the switching stack instead, saving 24 bytes in each of up to 10^7 descriptors.
// - A finished activity switches away with previous = nullptr and value = its stack; the
//   resumed side recycles the stack (the descriptor may already be freed by its joiner).
//
// Ownership rules
// - The descriptor is owned by its join handle (coop::Thread) and freed by join(); the
//   running activity only reads it until it publishes "finished" in `join_word`.
// - `context` is written only by the resumed side of a switch, before the finalizer runs;
//   `stack` only by the processor that starts or finishes the activity.
// - An activity is in at most one queue at a time (ready queue, a wait queue, or none while
//   it runs); whoever dequeues it owns it until it enqueues or switches to it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

#include "config.hpp"
#include "queue.hpp"

namespace coop {

// Priority — scheduling priorities, lowest first (the paper's Idle ... Realtime). Ready
// activities of a higher priority always run before lower ones; round robin within one.
// Idle-priority activities do not wake sleeping processors (Fig. 2).
enum class Priority : std::uint8_t { Idle = 0, Low = 1, Default = 2, High = 3, Realtime = 4 };

// kPriorities — the number of priority levels (one ready queue each).
inline constexpr unsigned kPriorities = 5;

// Scheduling — the scheduling algorithm of a runtime (Options::scheduling): the
// paper's global lock-free queues (backend `native`), per-processor rings with work
// stealing after Go (`native-ws`), or ParaSail's owner-guarded deques (`native-parasail`).
// The run-time choice of coop's one Scheduler<A> (coop/src/scheduler.hpp).
enum class Scheduling : std::uint8_t { global = 0, work_stealing = 1, parasail = 2 };

namespace internal {

struct Activity;
struct Processor;
struct RuntimeState;
struct Stack;

// Finalizer — a task-switch finalizer (Fig. 3): runs on the resumed side, right after the
// switch, on behalf of the suspended `previous` (nullptr when it finished).
using Finalizer = void (*)(Activity* previous, void* value);

// kJoinRunning / kJoinFinished — values of Activity::join_word besides a joiner's address.
inline constexpr std::uintptr_t kJoinRunning = 0;
inline constexpr std::uintptr_t kJoinFinished = 1;

// Activity — the descriptor (48 bytes, plus the closure in Closure<F>). A recycled pooled
// descriptor keeps its queue node (QueueItem::node), so that a spawn in steady state
// allocates neither a descriptor nor a node.
struct Activity : QueueItem {
    void* context = nullptr;                   // the suspended continuation (switch.hpp jump);
                                               // nullptr until the first run
    Stack* stack = nullptr;                    // assigned at the first run
    void (*body)(Activity*) = nullptr;         // runs and destroys the closure
    std::atomic<std::uintptr_t> join_word{kJoinRunning};  // running, finished, or the joiner
    Priority priority = Priority::Default;
    std::uint8_t uncooperative = 0;            // depth of coop::uncooperative scopes
    bool idle = false;                         // a processor's own (OS thread) context
    bool pooled = false;                       // a kDescriptorBlock block (see allocate_descriptor)
    bool start_failed = false;                 // no stack could be had: the body never runs
                                               // (set at first run, read by the joiner)
    bool stack_guarded = false;                // stack->guarded, copied at first run: a switch-away
                                               // checks the canary of an unguarded stack only, and
                                               // this way reads no line of a guarded stack's header
#if COOP_TSAN
    void* tsan_fiber = nullptr;
#endif
};
#if !COOP_TSAN
static_assert(sizeof(Activity) == 48, "the descriptor's 48 bytes: a larger one leaves less of a pooled "
                                      "64-byte block (kDescriptorBlock) to the closure");
#endif

// The typed entry points (coop::Algo<K>, coop.hpp): the same as suspend / make_ready /
// start / join_and_free / finish / coop::yield below, for a runtime whose Options::scheduling
// is K. Each reaches Scheduler<A> of K's algorithm by a static cast, with no branch on the
// kind (the untyped ones branch once, then run the same code); a debug and sanitizer build
// checks that the running runtime's kind is K (COOP_ASSERT). Defined in api.cpp and
// worker.cpp, instantiated there for the three Scheduling values. Callers: as their untyped
// counterparts.
template <Scheduling K>
void suspend_as(Finalizer finalizer, void* value) noexcept;
template <Scheduling K>
void make_ready_as(Activity* a) noexcept;
template <Scheduling K>
void start_as(Activity* a, Priority priority);
template <Scheduling K>
bool join_and_free_as(Activity* a) noexcept;
template <Scheduling K>
[[noreturn]] void finish_as(Activity* self) noexcept;
template <Scheduling K>
void yield_as() noexcept;

// Closure — an activity with its callable stored inline (one allocation per spawn).
template <class F>
struct Closure : Activity {
    alignas(F) unsigned char storage[sizeof(F)];

    // run — the body of an activity started by the untyped coop::spawn: runs and destroys
    // the callable; the trampoline (switch.cpp) then calls finish(), which branches once on
    // the kind.
    static void run(Activity* a) {
        auto* self = static_cast<Closure*>(a);
        F* fn = std::launder(reinterpret_cast<F*>(self->storage));
        if (!a->start_failed) [[likely]]
            (*fn)();
        fn->~F();  // captured state dies when the body ends, not at join
    }

    // run_and_finish — the body of an activity started by coop::Algo<K>::spawn: run(), then
    // finish_as<K> (never returns to the trampoline, so its untyped finish() is not reached).
    template <Scheduling K>
    [[noreturn]] static void run_and_finish(Activity* a) {
        run(a);
        finish_as<K>(a);
    }
};

// Untyped — the untyped suspend / make_ready as a type's static members, the default of
// the parameters that take an entry-point type (coop::Channel's `Entry`; coop::Algo<K> is
// the typed one).
struct Untyped {
    static void suspend(Finalizer finalizer, void* value) noexcept;
    static void make_ready(Activity* a) noexcept;
};

// kDescriptorBlock — descriptors (with their closure) up to this size are carved from
// per-processor slabs and recycled through per-processor free lists (bounded, surplus to a
// shared list); larger ones use operator new. glibc malloc/free of descriptor and node was
// ~75% of a create (errata item 5).
inline constexpr std::size_t kDescriptorBlock = 64;

// allocate_descriptor — memory for a descriptor of `size` bytes; *node receives the queue
// node a recycled block still carries (nullptr otherwise). Throws std::bad_alloc.
void* allocate_descriptor(std::size_t size, Node** node);

// free_descriptor — gives a finished, joined descriptor back (any thread).
void free_descriptor(Activity* a) noexcept;

// g_processor_tp_offset — the offset of the thread-local processor pointer (api.cpp,
// initial-exec TLS: one offset from the thread pointer for every thread), measured when the
// library is loaded, before main and every C++ static initialiser (api.cpp).
extern std::ptrdiff_t g_processor_tp_offset;

// this_processor_slow — this_processor() as a call (api.cpp).
[[gnu::noinline]] Processor* this_processor_slow() noexcept;

// this_processor — the processor the caller runs on, or nullptr outside coop's workers.
// An activity may migrate between OS threads across any switch, and a compiler may keep a
// thread_local's address (%fs base + offset) across calls in one function: so the pointer is
// read by a volatile asm that addresses it %fs-relative itself (x86-64; one instruction,
// the base never cached), elsewhere by a call the compiler cannot see into.
[[gnu::always_inline]] inline Processor* this_processor() noexcept {
#if defined(__x86_64__)
    Processor* p;
    // "memory": as the call it replaces, the compiler assumes nothing about this thread's
    // identity across it.
    asm volatile("movq %%fs:(%1), %0" : "=r"(p) : "r"(g_processor_tp_offset) : "memory");
    return p;
#else
    return this_processor_slow();
#endif
}

// current — the running activity, or nullptr outside coop's workers.
[[gnu::noinline]] Activity* current() noexcept;

// suspend — blocks the current activity: switches to the next ready one (any priority) or
// the processor's idle loop, with `finalizer(current, value)` run on the resumed side.
// Returns when someone makes the activity ready again.
void suspend(Finalizer finalizer, void* value) noexcept;

// make_ready — `a` (owned by the caller, in no queue) becomes ready: enqueued in its ready
// queue, and a sleeping processor is woken if needed (Fig. 2 ENQUEUESWITCH).
void make_ready(Activity* a) noexcept;

// start — hands a freshly built activity to the runtime (from an activity or any thread).
// Throws std::runtime_error when no runtime is running.
void start(Activity* a, Priority priority);

// join_and_free — join(): blocks until `a` has finished (the activity when called from
// one, the OS thread otherwise), then frees the descriptor. False: `a` never ran (no stack).
bool join_and_free(Activity* a) noexcept;

inline void Untyped::suspend(Finalizer finalizer, void* value) noexcept { internal::suspend(finalizer, value); }
inline void Untyped::make_ready(Activity* a) noexcept { internal::make_ready(a); }

// now_ns — CLOCK_MONOTONIC in nanoseconds.
std::int64_t now_ns() noexcept;

// g_active — the one running runtime (api.cpp; for threads that are not workers).
struct RuntimeState;
extern std::atomic<RuntimeState*> g_active;

// runtime_active — whether a runtime is running (spawn's precondition). Inline: spawn asks
// it every time.
[[gnu::always_inline]] inline bool runtime_active() noexcept {
    // acquire: as in start() (the state is built before it is published).
    return this_processor() != nullptr || g_active.load(std::memory_order_acquire) != nullptr;
}

// dequeue_waiter — q.dequeue() from any thread. Workers (bound processors) dequeue
// directly. A thread that is not one (e.g. main() unlocking a coop::Mutex that activities
// wait for) has no hazard-pointer slot: if the queue looks empty it returns nullptr without
// touching it (no runtime, no waiters); otherwise it borrows the slot just above the running
// runtime's processors, one such thread at a time (a global mutex).
Activity* dequeue_waiter(Queue<Activity>& q) noexcept;

// ready_work — whether the caller's runtime has ready activities (a hint; false outside a
// runtime).
bool ready_work() noexcept;

// processors_in_use — the current runtime's processor count (1 outside a runtime).
unsigned processors_in_use() noexcept;

// cpus_in_use — the CPUs the current runtime's processors may run on (SchedulerCore::cpus:
// the affinity mask when the runtime started; 1 outside a runtime). Any thread.
unsigned cpus_in_use() noexcept;

}  // namespace internal
}  // namespace coop
