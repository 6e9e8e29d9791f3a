// units.hpp — Quirk's units, free operations and futures on coop, scheduled lock-free with
// the OwnerQueue (owner_queue.hpp).
//
// Citation: L. Quirk, "Ownership of a queue for practical lock-free scheduling" (2008):
// section 2 (units, operations, unit exclusion, free operations), section 3 (futures that
// cannot be forced; a message starts only when every future reachable from its arguments
// is resolved: forwardesque computations, Theorem 1), section 5 (unit-specific messages on
// a unit runqueue, the unit on a processor's runqueue), section 8 (the unit's runqueue is an
// OwnerQueue; its owner runs its messages) and section 10 (the waiter list of a future is an
// OwnerQueue too, so no wake-up is lost).
//
// Example (compiled: docs/examples/units_example.cpp), inside a coop activity; a Unit holds
// the user's state and its message queue, units::wait is for the main activity only:
//   units::Scope scope(2);                              // carriers: one per processor
//   struct Account { long balance = 0; };
//   units::Unit<Account> acct;
//   auto f = units::send(acct, [](Account& a, long x) { return a.balance += x; }, 5L);
//   auto g = units::send([](units::Future<long> v) { return v.get() * 2; }, f);  // free op,
//   long r = units::wait(g);                            // starts when f is resolved; main waits
//
// Design summary
// - A message (detail::Message) is one allocation: the operation, its arguments, the
//   future state of its result (refcount, resolved flag, value, waiter list) and the links
//   it needs to travel through queues (a coop::QueueItem). It is in at most one queue at a
//   time: a future's waiter list, then its unit's OwnerQueue or the ready queue.
// - send(): the arguments are scanned for unresolved futures (Future<T> directly, or inside
//   standard containers, pairs, tuples and optionals, to any depth); the message registers
//   on them ONE AT A TIME: on the first unresolved one; when that resolves, the resolver
//   wakes the message, which moves on to the next one. When none is left the message is
//   dispatched: a unit message is entered into its unit's OwnerQueue and, if that made the
//   sender the owner (enq_and_was_empty() == true), the unit itself goes on the ready queue;
//   a free message goes on the ready queue directly.
// - Carriers: `processors` long-lived coop activities (started by Scope) take tasks from
//   the ready queue (a coop::Queue, the paper's "main runqueue" of section 10) in FIFO order,
//   a coop::Semaphore counting the tasks (so a carrier sleeps, as a blocked activity, only
//   when there is nothing to do, and no wake-up is lost: one permit per task). A unit task
//   drains its OwnerQueue: begin_deq(), run the operation, end_deq_and_is_empty(), publish
//   the operation's result, until empty; ownership (and with it the right to run the unit's
//   operations) ends only after the last operation finished: unit exclusion (see
//   owner_queue.hpp on why the paper's deq_and_is_empty alone is not enough for it). The
//   result is published after the carrier's last access to the unit, so a program that saw
//   it may destroy the unit (UnitBase::drain).
// - Futures: the waiter list is an OwnerQueue constructed owned by the producer (the
//   message or Promise). resolve(): store the value, set the flag, give the token back and,
//   if waiters were counted meanwhile, drain them (wake each). A waiter that enters the list
//   after the producer gave up ownership becomes its owner itself and drains the list (its
//   own entry included): the value is then guaranteed visible (the producer's release
//   decrement -> the waiter's acquire increment). No wake-up is lost: each entry is counted,
//   and exactly one owner at a time drains the counted entries (Theorem 2 and 3).
// - An operation that returns a Future<R> is "flattened": the message's own future resolves
//   with that future's value; the finished message waits on it as a forwarder (it is in no
//   queue any more, so it can enter the waiter list).
// - No forcing: Future::get() on an unresolved future aborts; wait() aborts inside an
//   operation. wait() is for the program's main activity (any coop activity that is not a
//   carrier running an operation).
//
// Ownership rules
// - A message is owned by whoever holds it outside a queue: the sender until it registers
//   or dispatches it; a future's waiter-list owner while waking it; the unit's owner (the
//   carrier draining the unit) while running it. Its memory is freed when the last Future
//   handle and its own "pending" reference (dropped after it resolved and drained its
//   waiters) are gone.
// - A unit belongs to the program; it must outlive every message sent to it: destroy it
//   after the results of all its messages were seen (wait(), ready(), or an operation that
//   received the future), or after the Scope ended. Seeing the unit's last result is enough:
//   the carrier publishes a unit message's result only after its last access to the unit
//   (UnitBase::drain), so `Scope scope(n); Unit<S> u; ... wait(f);` may destroy u right away.
//
// Misuse that is reported (units: ... on stderr, then abort), never undefined behaviour:
// - Promise::resolve twice, also by two activities at once ("resolved twice": the first
//   call claims the state with an exchange; the second aborts before touching it).
// - A message whose dependency resolves after the Scope it was sent in stopped (or inside a
//   later Scope): it could never run ("resolved after its units::Scope stopped"). A message
//   still waiting when its Scope stops never runs; its future is never resolved.
// - An activity that is not an operation (the program's main, a helper activity) sending,
//   or resolving a Promise a message waits for, while the Scope stops ("while its
//   units::Scope was stopping"). A send already in progress when stop() begins completes
//   and its message runs (stop() waits for it); one that begins later aborts; one after
//   the Scope ended aborts too ("send outside a units::Scope"). So join such activities
//   before the Scope ends.
// - Operations must not block (no coop::Mutex, no wait()) and must not yield: they run to
//   completion on their carrier (section 3: tasks do not block once started).
#pragma once

#include <pthread.h>

#include <array>
#include <chrono>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <exception>
#include <new>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "coop/coop.hpp"
#include "coop/slab.hpp"
#include "units/owner_queue.hpp"

// UNITS_TEST_HOOK(name, ...) — calls units::test_hooks::name if a test set it (only where
// UNITS_TEST_HOOKS is defined: tests/units/test_units_lifetime.cpp stops a carrier or a
// sender inside a window); elsewhere it compiles to nothing.
#if defined(UNITS_TEST_HOOKS)
namespace units::test_hooks {
// drain(): the operation of `message` ran (its result is kept, not yet published), before
// the unit's end_deq_and_is_empty().
inline void (*drain_before_end_deq)(const void* message) = nullptr;
// Promise::resolve: this call won the claim, before it stores the value.
inline void (*promise_resolve_claimed)() = nullptr;
// submit() from outside a carrier: past the Scope check, before the ready queue's enqueue.
inline void (*submit_outside)() = nullptr;
}  // namespace units::test_hooks
#define UNITS_TEST_HOOK(name, ...)                                                          \
    do {                                                                                    \
        if (::units::test_hooks::name != nullptr) ::units::test_hooks::name(__VA_ARGS__);  \
    } while (0)
#else
#define UNITS_TEST_HOOK(name, ...) \
    do {                           \
    } while (0)
#endif

namespace units {

template <class R>
class Future;
template <class R>
class Promise;

namespace detail {

[[noreturn, gnu::cold, gnu::noinline]] inline void fatal(const char* what) {
    std::fprintf(stderr, "units: %s\n", what);
    std::abort();
}

// operation_threw — an operation let an exception out (Message::operate): one line, abort.
[[noreturn, gnu::cold, gnu::noinline]] inline void operation_threw(const char* what) noexcept {
    std::fprintf(stderr,
                 "units: an operation threw an exception (%s); operations must not throw: catch it inside the "
                 "operation and return it as part of the result (units/README.md)\n",
                 what != nullptr ? what : "not a std::exception");
    std::abort();
}

// Task — anything a carrier or a waiter list handles: `run` when taken from the ready queue
// or a unit's queue, `wake` when a future it waits on resolved. A unit's message runs in
// two steps: `run` is its operation only (the result is kept in the message), `publish`
// makes the result visible after the unit was counted out (UnitBase::drain).
struct Task : coop::QueueItem {
    void (*run)(Task*) = nullptr;
    void (*wake)(Task*) = nullptr;
    void (*publish)(Task*) = nullptr;
    bool free_operation = false;  // counted as an operation when a carrier runs it
};

// t_in_operation — set by a carrier while it runs an operation (operations never switch,
// so the flag belongs to the OS thread for exactly that time).
inline thread_local bool t_in_operation = false;

// Thread-locals and activities: an activity may continue on another OS thread after any
// switch, and a compiler may compute a thread_local's address once per function and keep it
// across a call. Our own thread_locals (t_in_operation, t_pool) are therefore read only inside
// functions that are not inlined and never switch (in_operation, block_allocate, block_free).
// coop's queue and node pool do the same for theirs (hazard.hpp: slot(), processor_index(),
// allocate_node(), free_node()), so code that uses coop's queue needs nothing of its own.
[[gnu::noinline]] inline bool in_operation() noexcept {
    asm volatile("");  // as coop's accessors (hazard.hpp): no optimiser may treat it as pure
    return t_in_operation;
}

// t_in_task — set while a carrier (or Scope::stop()'s leftover loop) runs a task taken from
// the ready queue: sends made then cannot outlive the Scope (carriers are joined, and the
// leftover loop is stop() itself). A task never switches, so the flag belongs to the OS
// thread for exactly that time; the carrier does switch between tasks, hence the
// non-inlined accessors (see above).
inline thread_local bool t_in_task = false;
[[gnu::noinline]] inline bool in_task() noexcept {
    asm volatile("");
    return t_in_task;
}
[[gnu::noinline]] inline void set_in_task(bool v) noexcept {
    asm volatile("");
    t_in_task = v;
}

// Scheduler — the ready queue, the task semaphore and the statistics of one Scope.
struct alignas(coop::kCacheLine) Scheduler {
    Scheduler() = default;
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;
    coop::Queue<Task> ready;
    coop::Semaphore work{0};
    unsigned carriers = 0;
    std::uint32_t epoch = 0;  // this Scope's number (g_epoch), for messages sent in it
    // Per processor (coop::processor_index()): operations run; written only by that
    // processor (relaxed load + store, no locked instruction), read after the carriers ended.
    struct alignas(coop::kCacheLine) PerProcessor {
        std::atomic<std::uint64_t> operations{0};
        std::atomic<std::int64_t> idle_ns{0};
    };
    std::unique_ptr<PerProcessor[]> per = std::make_unique<PerProcessor[]>(coop::kMaxProcessors);

    void schedule(Task* t) {
        ready.enqueue(t);
        // After the enqueue: a carrier holding a permit finds an item (items >= permits).
        work.release();
    }
    // take — a task from the ready queue (nullptr if empty).
    Task* take() { return ready.dequeue(); }
};

// g_scheduler — the running Scope's scheduler (one Scope at a time).
inline std::atomic<Scheduler*> g_scheduler{nullptr};
// g_epoch — the running Scope's number (0: none); g_epochs numbers the Scopes (from 1). A
// message remembers the number of the Scope it was sent in: it may only be dispatched there.
inline std::atomic<std::uint32_t> g_epoch{0};
inline std::atomic<std::uint32_t> g_epochs{0};
// g_stopping / g_outside — a Dekker pair between Scope::stop() and senders that are not
// carriers (see submit()): stop() sets g_stopping, then waits until g_outside (senders from
// outside a carrier inside submit()) is 0. Globals, not Scheduler members: a sender must be
// able to read them while the Scheduler may already be gone.
inline std::atomic<bool> g_stopping{false};
inline std::atomic<std::int64_t> g_outside{0};

// scheduler — the running Scope's scheduler, for carriers (which the Scope outlives).
inline Scheduler& scheduler() {
    // acquire: pairs with Scope's release store; the scheduler is built before it.
    Scheduler* s = g_scheduler.load(std::memory_order_acquire);
    if (s == nullptr) [[unlikely]]
        fatal("send/wait outside a units::Scope");
    return *s;
}

// current_epoch — the number of the running Scope, for a new message; aborts outside one.
inline std::uint32_t current_epoch() {
    // relaxed: only the number is read (no memory is reached through it). A sender runs
    // inside the Scope's lifetime, which the program orders after the Scope's constructor
    // (its store happens-before this load, so coherence gives us that value or a later one).
    const std::uint32_t e = g_epoch.load(std::memory_order_relaxed);
    if (e == 0) [[unlikely]]
        fatal("send outside a units::Scope");
    return e;
}

[[noreturn, gnu::cold, gnu::noinline]] inline void dispatched_after_stop() {
    fatal("a message's dependency was resolved after its units::Scope stopped (the message can "
          "never run: resolve every future a message waits for before its Scope ends)");
}

// submit — puts a task of a message sent in Scope `epoch` on the ready queue. From a carrier
// (an operation, a waiter list it drains, stop()'s leftover loop) the Scope is alive: it
// cannot end before its carriers return. From any other activity (the program's main, an
// activity resolving a Promise) the Scope may be stopping concurrently: the sender announces
// itself in g_outside first, and stop() waits for announced senders before it queues its
// stop pills (so their tasks still run) and never frees the Scheduler under one; a sender
// that comes after stop() began aborts with a clear message instead of using a Scheduler
// that may be freed.
inline void submit(Task* t, std::uint32_t epoch) {
    if (in_task()) {
        Scheduler& s = scheduler();
        if (s.epoch != epoch) [[unlikely]]
            dispatched_after_stop();
        s.schedule(t);
        return;
    }
    // seq_cst (the increment and the load below, with stop()'s store of g_stopping and load
    // of g_outside): a Dekker pair. In the single total order either our increment comes
    // before stop()'s load (stop() waits for our decrement) or stop()'s store comes before
    // our load (we see true and abort): never both missed. acq_rel alone would allow both
    // loads to read the old values (store-buffer reordering).
    g_outside.fetch_add(1, std::memory_order_seq_cst);
    if (g_stopping.load(std::memory_order_seq_cst)) [[unlikely]]
        fatal("an activity sent a message (or resolved a Promise a message waits for) while "
              "its units::Scope was stopping (every sender that is not an operation must "
              "finish before the Scope ends)");
    // acquire: pairs with the Scope constructor's release (the scheduler is built). A null
    // or another Scope's scheduler: the message's Scope ended before its dependency resolved.
    Scheduler* s = g_scheduler.load(std::memory_order_acquire);
    if (s == nullptr || s->epoch != epoch) [[unlikely]]
        dispatched_after_stop();
    UNITS_TEST_HOOK(submit_outside);
    s->schedule(t);
    // release: our enqueue (and the semaphore's release) happen-before stop()'s load that
    // reads this decrement; after it stop() may queue its pills and free the Scheduler.
    g_outside.fetch_sub(1, std::memory_order_release);
}

inline void bump(std::atomic<std::uint64_t>& c) noexcept {
    // relaxed load + store: a single writer (this processor); readers read after a join.
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Block pool — messages and future states come from coop's slab allocator
// (coop/include/coop/slab.hpp, the one behind queue nodes and activity descriptors): 64-byte
// aligned blocks in size classes of 64 bytes (up to 1 KiB), a cache per OS thread and size
// class (a free list and a bump slab; beyond kCacheMax blocks the surplus goes to the class's
// shared list), slabs never returned to the OS. A block freed on another thread than it was
// allocated on joins that thread's cache. Larger or more aligned blocks go to operator new.
// Under ASan/TSan every block goes to operator new/delete instead, so a use after free of a
// message is reported however soon its memory would be reused.
// The functions are not inlined on purpose: an activity may continue on another OS thread
// after a switch, and the thread_local's address must be taken inside each call.
inline constexpr std::size_t kPoolClass = 64;
inline constexpr std::size_t kPoolClasses = 16;

template <std::size_t C>
struct PoolTraits {
    static constexpr std::size_t kBlock = (C + 1) * kPoolClass;
    static constexpr std::size_t kLinkOffset = 0;  // a free block's first word links it
    static constexpr std::size_t kKeep = sizeof(void*);
    static constexpr std::size_t kSlabFirst = std::size_t{64} << 10;
    static constexpr std::size_t kSlabMax = std::size_t{1} << 20;
    static constexpr std::size_t kCacheMax = 4096;  // per thread and class
    static constexpr std::size_t kBatch = 256;
    static coop::internal::SlabShared& shared() {
        static auto* s = new coop::internal::SlabShared;  // outlives every thread (exit flushes use it)
        return *s;
    }
};

template <class Seq>
struct PoolCachesOf;
template <std::size_t... C>
struct PoolCachesOf<std::index_sequence<C...>> {
    using type = std::tuple<coop::internal::BlockCache<PoolTraits<C>>...>;
};

// PoolCaches — one thread's caches, one per class; its free blocks go to the shared lists
// at thread exit.
//
// Trivially destructible on purpose. A thread_local with a destructor registers it
// (__cxa_thread_atexit) at its first use on a thread, and glibc allocates a record for that
// and ends the process when it cannot ("Fatal glibc error: failed to register TLS
// destructor: out of memory"). The first use of t_pool on a worker can come at any moment —
// a message freed there that another thread allocated — including when memory has run out
// (coop's own node cache had the same abort: coop/include/coop/hazard.hpp, touch_node_cache).
// So the flush at thread exit goes through a pthread key instead: pthread_setspecific on one
// of a process's first 32 keys writes into the thread's descriptor and allocates nothing
// (glibc nptl/pthread_setspecific.c, PTHREAD_KEY_2NDLEVEL_SIZE); where it could not (a
// process with more keys, no memory for the second level), it is tried again at the next
// use, and a thread that never registered keeps its free blocks at exit (a leak of at most
// kCacheMax blocks per class, never a crash).
struct PoolCaches {
    typename PoolCachesOf<std::make_index_sequence<kPoolClasses>>::type caches;
    bool flush_at_exit = false;  // registered with pool_key()
};
static_assert(std::is_trivially_destructible_v<PoolCaches>, "a destructor would be registered at first use");
inline thread_local PoolCaches t_pool;

inline void flush_pool(void* caches) noexcept {
    std::apply([](auto&... c) { (c.flush(0), ...); }, static_cast<PoolCaches*>(caches)->caches);
}
// pool_key — the key whose destructor flushes an exiting thread's caches (made once, at the
// first use in the process; a function-local static's guard allocates nothing).
inline pthread_key_t pool_key() noexcept {
    static const pthread_key_t key = [] {
        pthread_key_t k{};
        if (pthread_key_create(&k, &flush_pool) != 0) {
            std::fputs("units: pthread_key_create failed (no key left for the block pool)\n", stderr);
            std::abort();
        }
        return k;
    }();
    return key;
}
// pool — this thread's caches, registered for the flush at exit on first use (see above).
inline PoolCaches& pool() noexcept {
    PoolCaches& p = t_pool;
    if (!p.flush_at_exit) p.flush_at_exit = pthread_setspecific(pool_key(), &p) == 0;
    return p;
}

inline constexpr bool kPoolBypass = COOP_ASAN || COOP_TSAN;

// pool_allocate<C> / pool_free<C> — class C of this thread's caches; called through the
// tables below (never switch; each takes t_pool's address itself, through pool()).
template <std::size_t C>
void* pool_allocate() {
    return std::get<C>(pool().caches).allocate();
}
template <std::size_t C>
void pool_free(void* p) noexcept {
    std::get<C>(pool().caches).free(p);
}
inline constexpr auto kPoolAllocate = []<std::size_t... C>(std::index_sequence<C...>) {
    return std::array<void* (*)(), kPoolClasses>{&pool_allocate<C>...};
}(std::make_index_sequence<kPoolClasses>{});
inline constexpr auto kPoolFree = []<std::size_t... C>(std::index_sequence<C...>) {
    return std::array<void (*)(void*) noexcept, kPoolClasses>{&pool_free<C>...};
}(std::make_index_sequence<kPoolClasses>{});

[[gnu::noinline]] inline void* block_allocate(std::size_t n, std::align_val_t a) {
    const std::size_t cls = (n + kPoolClass - 1) / kPoolClass - 1;
    if (kPoolBypass || static_cast<std::size_t>(a) > kPoolClass || cls >= kPoolClasses) return ::operator new(n, a);
    return kPoolAllocate[cls]();
}
[[gnu::noinline]] inline void block_free(void* p, std::size_t n, std::align_val_t a) noexcept {
    const std::size_t cls = (n + kPoolClass - 1) / kPoolClass - 1;
    if (kPoolBypass || static_cast<std::size_t>(a) > kPoolClass || cls >= kPoolClasses) return ::operator delete(p, a);  // unsized: clang 14 lacks -fsized-deallocation
    kPoolFree[cls](p);
}

// StateBase — a future's state without the value.
struct StateBase : Task {
    // Messages and future states come from per-thread slab caches (block_allocate): they
    // are over-aligned (the waiter list's coop::Queue keeps head and tail on lines of their
    // own), and glibc's memalign bypasses its per-thread cache, while its cache holds only
    // 7 blocks per size; callgrind showed malloc/free as the largest cost of a send.
    static void* operator new(std::size_t n, std::align_val_t a) { return block_allocate(n, a); }
    static void operator delete(void* p, std::size_t n, std::align_val_t a) noexcept { block_free(p, n, a); }

    // References: Future handles + 1 for the producer until it resolved and drained.
    std::atomic<std::uint32_t> refs{2};
    std::atomic<bool> resolved{false};
    std::atomic<bool> claimed{false};  // Promise::resolve: taken by the one resolve that may run
    void (*destroy)(StateBase*) = nullptr;
    OwnerQueue<Task> waiters{owned};  // owned by the producer from the start (the token)

    bool ready() const noexcept {
        // acquire: pairs with resolve's release store, so the value is visible.
        return resolved.load(std::memory_order_acquire);
    }
    void ref() noexcept {
        // relaxed: a new reference is made from an existing one, which keeps the state alive.
        refs.fetch_add(1, std::memory_order_relaxed);
    }
    void unref() noexcept {
        // acq_rel: release orders our uses before the destruction; acquire (for the last
        // one) orders the destruction after everybody else's uses.
        if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            coop::release(this);  // the queue node this item carries (hazard.hpp)
            destroy(this);
        }
    }
    // drain_waiters — the waiter list's owner wakes every counted waiter. Each waiter keeps
    // this state alive (it holds a Future to it) until we wake it, so the state is alive
    // until our last dequeue, after which we touch only the waiter.
    void drain_waiters() {
        for (;;) {
            auto d = waiters.deq_and_is_empty();
            d.item->wake(d.item);
            if (d.is_empty) return;
        }
    }
    // add_waiter — `w` waits for this state; true if w was woken already (or will be by us
    // right now: we became the list's owner and drained it). After false, w belongs to the
    // list's owner and may be gone.
    void add_waiter(Task* w) {
        if (waiters.enq_and_was_empty(w)) drain_waiters();
    }
    // finish_resolve — after the value and the flag: give the producer's token back and wake
    // the waiters counted meanwhile; then drop the producer's reference.
    void finish_resolve() {
        if (!waiters.disown_token_and_is_empty()) drain_waiters();
        unref();
    }
};

// State — a future's state with its value. resolve(v) = store the value, then
// resolve_stored();
// a unit's message stores the value while it owns its unit and publishes after it gave the
// unit up (UnitBase::drain). One producer resolves a state (a message's carrier, the
// program through a Promise, whose resolve() claims the state first): the "already
// resolved?" checks below are for sequential misuse.
template <class R>
struct State : StateBase {
    std::optional<R> value;
    template <class V>
    void resolve(V&& v) {
        if (resolved.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: producer-only write
            fatal("a future was resolved twice");
        value.emplace(std::forward<V>(v));
        resolve_stored();
    }
    // resolve_stored — the value is stored: make it visible and wake the waiters.
    void resolve_stored() {
        if (resolved.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: producer-only write
            fatal("a future was resolved twice");
        // release: the value happens-before every reader that sees the flag (ready()).
        resolved.store(true, std::memory_order_release);
        finish_resolve();
    }
    const R& get() const { return *value; }
};
template <>
struct State<void> : StateBase {
    void resolve() { resolve_stored(); }
    void resolve_stored() {
        if (resolved.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: producer-only write
            fatal("a future was resolved twice");
        resolved.store(true, std::memory_order_release);  // release: as above
        finish_resolve();
    }
};

// FutureAccess — the library's access to a Future's state.
struct FutureAccess {
    template <class R>
    static State<R>* state(const Future<R>& f) noexcept {
        return f.state_;
    }
    template <class R>
    static Future<R> adopt(State<R>* s) noexcept {
        return Future<R>(s);
    }
};

// for_each_future — calls fn(StateBase*) for every Future reachable from `x`.
template <class T>
struct FutureTraits {
    template <class Fn>
    static void each(const T& x, Fn& fn);
};
template <class T, class Fn>
void for_each_future(const T& x, Fn& fn) {
    FutureTraits<std::remove_cvref_t<T>>::each(x, fn);
}
template <class T>
concept Range = requires(const T& t) {
    std::begin(t);
    std::end(t);
};
template <class T>
struct is_future : std::false_type {};
template <class R>
struct is_future<Future<R>> : std::true_type {};
template <class T>
struct is_pair_or_tuple : std::false_type {};
template <class A, class B>
struct is_pair_or_tuple<std::pair<A, B>> : std::true_type {};
template <class... A>
struct is_pair_or_tuple<std::tuple<A...>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

// may_hold_future — whether scanning T can find anything (strings, numbers: no).
template <class T>
constexpr bool may_hold_future() {
    using U = std::remove_cvref_t<T>;
    if constexpr (is_future<U>::value) return true;
    else if constexpr (is_optional<U>::value) return may_hold_future<typename U::value_type>();
    else if constexpr (is_pair_or_tuple<U>::value)
        return []<std::size_t... I>(std::index_sequence<I...>) {
            return (may_hold_future<std::tuple_element_t<I, U>>() || ...);
        }(std::make_index_sequence<std::tuple_size_v<U>>{});
    else if constexpr (Range<U>) return may_hold_future<decltype(*std::begin(std::declval<const U&>()))>();
    else return false;
}

template <class T>
template <class Fn>
void FutureTraits<T>::each(const T& x, Fn& fn) {
    if constexpr (!may_hold_future<T>()) {
        (void)x;
        (void)fn;
    } else if constexpr (is_future<T>::value) {
        if (StateBase* s = FutureAccess::state(x)) fn(s);
    } else if constexpr (is_optional<T>::value) {
        if (x) for_each_future(*x, fn);
    } else if constexpr (is_pair_or_tuple<T>::value) {
        std::apply([&](const auto&... e) { (for_each_future(e, fn), ...); }, x);
    } else {
        for (const auto& e : x) for_each_future(e, fn);
    }
}

// Deps — the unresolved futures a message still waits for (two inline, more on the heap).
class Deps {
  public:
    Deps() = default;
    Deps(const Deps&) = delete;
    Deps& operator=(const Deps&) = delete;
    ~Deps() { delete[] heap_; }
    void push(StateBase* s) {
        if (heap_ == nullptr && n_ < kInline) {
            inline_[n_++] = s;
            return;
        }
        if (heap_ == nullptr || n_ == cap_) {
            const std::size_t cap = cap_ == 0 ? 8 : 2 * cap_;
            auto* h = new StateBase*[cap];
            for (std::size_t i = 0; i < n_; ++i) h[i] = at(i);
            delete[] heap_;
            heap_ = h;
            cap_ = cap;
        }
        heap_[n_++] = s;
    }
    std::size_t size() const noexcept { return n_; }
    StateBase* at(std::size_t i) const noexcept { return heap_ != nullptr ? heap_[i] : inline_[i]; }

  private:
    static constexpr std::size_t kInline = 2;
    StateBase* inline_[kInline] = {};
    StateBase** heap_ = nullptr;
    std::size_t n_ = 0, cap_ = 0;
};

struct UnitBase;

// MessageCore — the part of a message dispatch needs, independent of its types.
struct MessageCore {
    UnitBase* unit = nullptr;  // nullptr: a free operation
    Deps deps;
    std::size_t next_dep = 0;  // deps before it are resolved
    std::uint32_t epoch = 0;   // the Scope it was sent in (g_epoch)
};

// flatten — an operation returning Future<R> resolves its message with R.
template <class T>
struct flatten {
    using type = T;
    static constexpr bool forwards = false;
};
template <class R>
struct flatten<Future<R>> {
    using type = R;
    static constexpr bool forwards = true;
};

void dispatch(Task* m, MessageCore& core);

// op_result — what F returns for a unit of state S (S = void: a free operation).
template <class S, class F, class... Args>
struct op_result {
    using type = std::invoke_result_t<F, S&, Args&&...>;
};
template <class F, class... Args>
struct op_result<void, F, Args...> {
    using type = std::invoke_result_t<F, Args&&...>;
};

// advance — wake handler of a message: registers on the next unresolved dependency, or
// dispatches the message when there is none. After registering, the message belongs to that
// future's waiter list (and may already be running elsewhere): we must not touch it again.
template <class M>
void advance(Task* t) {
    M* m = static_cast<M*>(t);
    MessageCore& c = m->core;
    while (c.next_dep < c.deps.size()) {
        StateBase* d = c.deps.at(c.next_dep++);
        if (d->ready()) continue;
        d->add_waiter(m);  // if we became the list's owner, our own wake ran inside
        return;
    }
    dispatch(m, c);
}

// UnitBase — a unit without its state: the OwnerQueue of its messages and its statistics
// (written only by its owner).
struct UnitBase : Task {
    OwnerQueue<Task> queue;
    static constexpr unsigned kNever = ~0u;
    unsigned last_processor = kNever;
    std::uint64_t operations = 0;
    std::uint64_t migrations = 0;   // scheduled on another processor than the time before
    std::uint64_t scheduled = 0;    // times the unit was taken from the ready queue

    UnitBase() { run = &UnitBase::drain; }
    UnitBase(const UnitBase&) = delete;
    UnitBase& operator=(const UnitBase&) = delete;
    // ~UnitBase — gives back the queue node the unit carries from its last trip through the
    // ready queue (hazard.hpp release; any thread). A unit destroyed while messages sent to
    // it are counted in its queue (queued, or running: the count drops only at the carrier's
    // end_deq_and_is_empty, its last access to the unit) is a misuse, reported in every build
    // before anything is freed: the carrier would run them on freed memory. The count's
    // acquire load sees the last end_deq of every message whose result the program saw (its
    // publish comes after that decrement), so a correct program never gets here with one.
    ~UnitBase() {
        if (queue.count() != 0) [[unlikely]]
            fatal("a unit was destroyed while messages sent to it were queued or running; a unit must outlive "
                  "every message sent to it: destroy it once their results were seen (units/README.md)");
        coop::release(this);
    }

    // drain — the owner runs every message of the unit, one at a time, and gives ownership
    // up only after the last one finished (end_deq_and_is_empty() == true).
    //
    // Lifetime: the program may destroy the unit as soon as it has seen the result of the
    // unit's last message (wait(), ready(), or an operation that received the future). So a
    // message's result is published only AFTER the carrier's last access to the unit for it,
    // end_deq_and_is_empty(): m->run is the operation alone (the value is kept in the
    // message), m->publish afterwards stores the flag and wakes the waiters. The result lives
    // in the message, never in the unit, so unit exclusion is unaffected: the next owner may
    // start on the unit while we publish. What we touch after end_deq_and_is_empty():
    // - the message m: kept alive by its producer reference, dropped only by publishing;
    // - when it returned false, the unit again (begin_deq of the next message): we still own
    //   it, and another message was counted in, which the program must await before it may
    //   destroy the unit (the contract: a unit outlives every message sent to it);
    // - the Scheduler (submit of woken messages, our statistics): the Scope outlives its
    //   carriers. Nothing else: after the last publish we return to the carrier loop.
    // Ordering: publish's release store of the flag (and the waiter list's release
    // decrements) comes after our end_deq_and_is_empty() in program order, so whoever sees
    // the result also sees our last access to the unit happen before it.
    static void drain(Task* t) {
        auto* u = static_cast<UnitBase*>(t);
        const unsigned p = coop::processor_index();
        if (u->last_processor != p) {
            if (u->last_processor != kNever) ++u->migrations;
            u->last_processor = p;
        }
        ++u->scheduled;
        Scheduler& s = scheduler();
        for (;;) {
            Task* m = u->queue.begin_deq();
            ++u->operations;
            bump(s.per[p].operations);
            m->run(m);  // the operation; its result is kept in m, not yet visible
            UNITS_TEST_HOOK(drain_before_end_deq, m);
            // After this returns true another owner may run: do not touch *u.
            const bool last = u->queue.end_deq_and_is_empty();
            m->publish(m);  // now the program may see the result (and destroy the unit)
            if (last) return;
        }
    }
};

inline void dispatch(Task* m, MessageCore& core) {
    if (UnitBase* u = core.unit) {
        if (u->queue.enq_and_was_empty(m)) submit(u, core.epoch);  // we own the unit: schedule it
    } else {
        m->free_operation = true;
        submit(m, core.epoch);
    }
}

// Message — an operation F applied to (unit state S&, if any) and Args..., with its result's
// future state.
template <class S, class F, class... Args>
struct Message final : State<typename flatten<typename op_result<S, F, Args...>::type>::type> {
    using Raw = typename op_result<S, F, Args...>::type;
    using R = typename flatten<Raw>::type;
    using Base = State<R>;

    MessageCore core;
    [[no_unique_address]] F fn;
    std::optional<std::tuple<Args...>> args;  // destroyed right after the operation ran
    std::optional<Future<R>> forward_from;    // a returned future being forwarded
    S* state = nullptr;                       // the unit's state (S non-void)

    template <class FF, class... AA>
    Message(FF&& f, AA&&... a) : fn(std::forward<FF>(f)), args(std::in_place, std::forward<AA>(a)...) {
        // A free message runs whole from the ready queue; a unit's message is run by its
        // unit's drain, which publishes the result itself after the unit's end_deq.
        if constexpr (std::is_void_v<S>) this->run = &Message::execute;
        else this->run = &Message::operate;
        this->publish = &Message::publish_result;
        this->wake = &advance<Message>;
        this->destroy = [](StateBase* b) { delete static_cast<Message*>(b); };
    }

    // execute — a free operation: the operation, then its result published.
    static void execute(Task* t) {
        operate(t);
        publish_result(t);
    }

    // operate — the operation; its result is stored in the message (the value, or the
    // returned future to forward) and not yet visible. A unit message's `run` once dispatched.
    // An operation must not throw: one that does ends the process with a message
    // (operation_threw), as an exception escaping a coop::spawn'ed function or a std::thread
    // does. It is not carried to the future: the operation may have left its unit's state
    // half-changed, and the unit's later messages would run on it; the messages waiting for
    // the future, and the futures forwarded from it, have no error path (units/README.md).
    static void operate(Task* t) {
        auto* m = static_cast<Message*>(t);
        t_in_operation = true;
        try {
            if constexpr (std::is_void_v<Raw>) m->invoke();
            else if constexpr (flatten<Raw>::forwards) m->forward_from.emplace(m->invoke());
            else m->value.emplace(m->invoke());
        } catch (const std::exception& e) {
            operation_threw(e.what());
        } catch (...) {
            operation_threw(nullptr);
        }
        m->args.reset();
        t_in_operation = false;
    }

    // publish_result — makes the stored result visible and wakes the waiters; a returned
    // future that is not ready yet: the finished message waits for it as a forwarder (it is
    // in no queue any more, so it can enter the waiter list). For a unit message this runs
    // after the unit was counted out (UnitBase::drain): a forwarder may be resolved by
    // another carrier as soon as it is registered.
    static void publish_result(Task* t) {
        auto* m = static_cast<Message*>(t);
        if constexpr (flatten<Raw>::forwards) {
            if (m->forward_from->ready()) {
                Future<R> r = std::move(*m->forward_from);
                m->forward_from.reset();
                m->resolve_from(r);
            } else {
                StateBase* d = FutureAccess::state(*m->forward_from);
                m->wake = &Message::forward;
                d->add_waiter(m);
            }
        } else {
            m->Base::resolve_stored();
        }
    }

    decltype(auto) invoke() {
        return std::apply(
            [this](Args&... a) -> Raw {
                if constexpr (std::is_void_v<S>) return std::invoke(fn, std::move(a)...);
                else return std::invoke(fn, *state, std::move(a)...);
            },
            *args);
    }

    void resolve_from(const Future<R>& f) {
        if constexpr (std::is_void_v<R>) {
            (void)f;
            this->resolve();
        } else {
            this->resolve(f.get());
        }
    }

    // forward — wake handler of a forwarder: the future it waits for is resolved. Resolving
    // here, inline, would recurse through chains of forwarders (a ddb client's 2000 steps
    // each return the next step's future: 2000 nested resolutions overflowed a 64 KiB
    // activity stack), so the forwarder goes through the ready queue instead and resolves
    // from a carrier's top level.
    static void forward(Task* t) {
        t->run = &Message::forward_run;
        t->free_operation = false;  // internal, not an operation
        submit(t, static_cast<Message*>(t)->core.epoch);
    }
    static void forward_run(Task* t) {
        auto* m = static_cast<Message*>(t);
        Future<R> from = std::move(*m->forward_from);
        m->forward_from.reset();
        m->resolve_from(from);
    }
};

}  // namespace detail

// Future — a handle to a value that some operation will produce. Copyable (reference
// counted). It cannot be forced: get() needs ready(); pass the future to another send()
// instead, which starts that operation when it is resolved.
template <class R>
class Future {
  public:
    Future() = default;
    Future(const Future& o) noexcept : state_(o.state_) {
        if (state_ != nullptr) state_->ref();
    }
    Future(Future&& o) noexcept : state_(std::exchange(o.state_, nullptr)) {}
    Future& operator=(Future o) noexcept {
        std::swap(state_, o.state_);
        return *this;
    }
    ~Future() {
        if (state_ != nullptr) state_->unref();
    }

    // valid — whether the handle refers to a future.
    bool valid() const noexcept { return state_ != nullptr; }
    // ready — whether it is resolved (then get() may be called).
    bool ready() const noexcept { return state_ != nullptr && state_->ready(); }
    // get — the value; aborts if not resolved (futures cannot be forced, section 3).
    template <class Q = R>
        requires(!std::is_void_v<Q>)
    const Q& get() const {
        if (!ready()) [[unlikely]]
            detail::fatal("Future::get() on an unresolved future (futures cannot be forced: "
                          "send it to another operation, or wait() for it from main)");
        return state_->get();
    }

  private:
    friend struct detail::FutureAccess;
    explicit Future(detail::State<R>* s) noexcept : state_(s) {}
    detail::State<R>* state_ = nullptr;
};

// Promise — a future resolved by the program (not by an operation): resolve() exactly once
// (twice aborts). Destroying an unresolved promise leaves its waiters waiting forever.
template <class R>
class Promise {
  public:
    Promise() : state_(new detail::State<R>) {
        state_->destroy = [](detail::StateBase* b) { delete static_cast<detail::State<R>*>(b); };
    }
    Promise(const Promise&) = delete;
    Promise& operator=(const Promise&) = delete;
    // ~Promise — drops the handle's reference. An unresolved promise's producer reference
    // is never dropped (its waiters, if any, wait forever and the state stays allocated).
    ~Promise() { state_->unref(); }
    Future<R> future() const {
        state_->ref();
        return detail::FutureAccess::adopt(state_);
    }
    // resolve — resolves the future and wakes its waiters. Exactly once: a second call
    // aborts ("resolved twice"), also when two calls race (only one of them can claim the
    // state). Call from a coop activity (the waiter list is a coop queue), inside the Scope
    // of the messages that wait for it (see the contract in the file comment).
    template <class... V>
    void resolve(V&&... v) {
        // relaxed exchange: the claims are read-modify-writes of one atomic, so exactly one
        // call reads false (modification order) — that is the mutual exclusion we need; the
        // loser aborts without touching the state, so nothing has to be ordered after it.
        if (state_->claimed.exchange(true, std::memory_order_relaxed)) [[unlikely]]
            detail::fatal("a future was resolved twice (Promise::resolve called twice, or by two "
                          "activities at once)");
        UNITS_TEST_HOOK(promise_resolve_claimed);
        state_->resolve(std::forward<V>(v)...);  // refs: 2 = this handle + the producer
    }

  private:
    detail::State<R>* state_;
};

// make_ready_future — a future that is already resolved with `v` (one allocation, no
// message): for operations that must return a Future on some paths and have the value.
template <class R>
Future<std::decay_t<R>> make_ready_future(R&& v) {
    using V = std::decay_t<R>;
    auto* s = new detail::State<V>;
    s->destroy = [](detail::StateBase* b) { delete static_cast<detail::State<V>*>(b); };
    s->resolve(std::forward<R>(v));  // drops the producer's reference: the handle's is left
    return detail::FutureAccess::adopt(s);
}

namespace detail {
template <class S, class F, class... Args>
auto make_send(UnitBase* unit, S* state, F&& f, Args&&... args) {
    using M = Message<S, std::decay_t<F>, std::decay_t<Args>...>;
    using R = typename M::R;
    const std::uint32_t epoch = current_epoch();  // aborts outside a Scope
    auto* m = new M(std::forward<F>(f), std::forward<Args>(args)...);
    m->core.epoch = epoch;
    m->core.unit = unit;
    m->state = state;
    auto collect = [m](StateBase* s) {
        if (!s->ready()) m->core.deps.push(s);
    };
    std::apply([&](const auto&... a) { (for_each_future(a, collect), ...); }, *m->args);
    Future<R> result = FutureAccess::adopt(static_cast<State<R>*>(m));  // refs = 2: this + producer
    advance<M>(m);                                // register on a dependency, or dispatch
    return result;
}
}  // namespace detail

// Unit — user state S plus the OwnerQueue of its messages. At most one operation of a unit
// runs at a time (unit exclusion). Not movable (messages point to it).
template <class S>
class Unit : public detail::UnitBase {
  public:
    template <class... A>
    explicit Unit(A&&... a) : state_(std::forward<A>(a)...) {}
    Unit(const Unit&) = delete;
    Unit& operator=(const Unit&) = delete;

    // state — the user state; only for operations of this unit, or after the work ended.
    S& state() noexcept { return state_; }
    const S& state() const noexcept { return state_; }
    // Statistics (read when no operation of the unit can run).
    std::uint64_t operations() const noexcept { return UnitBase::operations; }
    std::uint64_t migrations() const noexcept { return UnitBase::migrations; }
    std::uint64_t scheduled() const noexcept { return UnitBase::scheduled; }

  private:
    S state_;
};

// send — sends `op(unit.state(), args...)` to `unit`; returns the future of its result (an
// operation returning Future<R> gives Future<R>). The operation starts when every future
// reachable from `args` is resolved, and never while another operation of `unit` runs.
// Call from a coop activity inside a units::Scope (an operation, or the main activity).
template <class S, class F, class... Args>
auto send(Unit<S>& unit, F&& op, Args&&... args) {
    return detail::make_send<S>(static_cast<detail::UnitBase*>(&unit), &unit.state(), std::forward<F>(op),
                                std::forward<Args>(args)...);
}

// send — a free operation `op(args...)`: no unit, runs in parallel with anything.
template <class F, class... Args>
    requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>&&...>
auto send(F&& op, Args&&... args) {
    return detail::make_send<void>(nullptr, static_cast<void*>(nullptr), std::forward<F>(op),
                                   std::forward<Args>(args)...);
}

// wait_ready — blocks the calling activity until `f` is resolved. Not from an operation
// (aborts: operations never block); for the program's main activity.
template <class R>
void wait_ready(const Future<R>& f) {
    if (detail::in_operation()) detail::fatal("wait() inside an operation (operations cannot block on futures)");
    if (!f.valid()) detail::fatal("wait() on an empty Future");
    if (f.ready()) return;
    struct Waiter : detail::Task {
        coop::Semaphore woken{0};
    } w;
    w.wake = [](detail::Task* t) { static_cast<Waiter*>(t)->woken.release(); };
    detail::FutureAccess::state(f)->add_waiter(&w);
    w.woken.acquire();
    coop::release(&w);  // the node our dequeue left with us
}

// wait — wait_ready(f), then the value (a copy; void for Future<void>).
template <class R>
R wait(const Future<R>& f) {
    wait_ready(f);
    if constexpr (!std::is_void_v<R>) return f.get();
}

// Stats — what a Scope measured.
struct Stats {
    std::vector<std::uint64_t> operations_per_processor;  // by coop processor index
    std::vector<double> idle_seconds_per_processor;      // carriers blocked for want of work
};

// Scope — runs units: starts `carriers` carrier activities (normally one per processor)
// and, when destroyed, stops them after the tasks queued before, joins them, and runs any
// task still queued itself. Construct it in a coop activity; one Scope at a time.
class Scope {
  public:
    explicit Scope(unsigned carriers) : s_(std::make_unique<detail::Scheduler>()) {
        if (carriers == 0) detail::fatal("Scope: at least one carrier");
        if (!coop::in_activity()) detail::fatal("Scope: construct it inside a coop activity");
        s_->carriers = carriers;
        // relaxed: the RMW alone makes the number unique; it is published with the scheduler.
        s_->epoch = detail::g_epochs.fetch_add(1, std::memory_order_relaxed) + 1;
        if (s_->epoch == 0) s_->epoch = detail::g_epochs.fetch_add(1, std::memory_order_relaxed) + 1;  // wrapped
        detail::Scheduler* expected = nullptr;
        // acq_rel: release publishes the built scheduler to scheduler()'s acquire.
        if (!detail::g_scheduler.compare_exchange_strong(expected, s_.get(), std::memory_order_acq_rel))
            detail::fatal("Scope: another units::Scope is active");
        // relaxed: a number only (see current_epoch()); senders start after this constructor.
        detail::g_epoch.store(s_->epoch, std::memory_order_relaxed);
        for (unsigned i = 0; i < carriers; ++i) threads_.push_back(coop::spawn([s = s_.get()] { carrier(*s); }));
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { stop(); }

    // stop — see the class comment; idempotent. Stats are complete afterwards.
    void stop() {
        if (threads_.empty()) return;
        // Senders that are not carriers (see detail::submit): announce that we stop, then wait
        // for those already inside submit() (a submit never blocks). seq_cst store and load:
        // the Dekker pair with submit()'s seq_cst increment of g_outside and load of
        // g_stopping (either we see its increment and wait, or it sees our flag and aborts).
        // Reading g_outside == 0 (it decrements with release) also makes their enqueues
        // happen-before our pills: their tasks run before the carriers stop.
        detail::g_stopping.store(true, std::memory_order_seq_cst);
        while (detail::g_outside.load(std::memory_order_seq_cst) != 0) coop::yield();
        // One stop pill per carrier, behind every task queued so far.
        std::vector<detail::Task> pills(threads_.size());
        for (auto& p : pills) s_->schedule(&p);
        for (auto& t : threads_) t.join();
        threads_.clear();
        // Tasks queued by the last operations after the pills: run them here (we may: whoever
        // takes a task from the ready queue owns it).
        // They run as a carrier's tasks (detail::in_task): the Scope is alive meanwhile.
        detail::set_in_task(true);
        while (detail::Task* t = s_->take()) {
            if (t->run != nullptr) t->run(t);
            else coop::release(t);
        }
        detail::set_in_task(false);
        for (auto& p : pills) coop::release(&p);
        // relaxed: a number only; a message of this Scope woken from now on finds
        // g_scheduler null (or another Scope's) in submit().
        detail::g_epoch.store(0, std::memory_order_relaxed);
        // release: the scheduler's statistics were read after this by the next user.
        detail::g_scheduler.store(nullptr, std::memory_order_release);
        // seq_cst: after the null above (a sender that reads false here then reads the null
        // in submit(): it synchronises with this store), and the next Scope's stop() begins
        // a new Dekker round.
        detail::g_stopping.store(false, std::memory_order_seq_cst);
    }

    Stats stats() const {
        Stats st;
        for (unsigned i = 0; i < coop::kMaxProcessors; ++i) {
            // relaxed: read after the carriers were joined (or as an estimate while running).
            const auto ops = s_->per[i].operations.load(std::memory_order_relaxed);
            const auto idle = s_->per[i].idle_ns.load(std::memory_order_relaxed);
            if (ops == 0 && idle == 0 && i >= s_->carriers) continue;
            st.operations_per_processor.resize(i + 1, 0);
            st.idle_seconds_per_processor.resize(i + 1, 0);
            st.operations_per_processor[i] = ops;
            st.idle_seconds_per_processor[i] = static_cast<double>(idle) * 1e-9;
        }
        return st;
    }

  private:
    static void carrier(detail::Scheduler& s) {
        for (;;) {
            if (!s.work.try_acquire()) {
                const auto t0 = std::chrono::steady_clock::now();
                s.work.acquire();  // blocks this activity, not the processor
                const std::int64_t dt = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                            std::chrono::steady_clock::now() - t0)
                                            .count();
                auto& idle = s.per[coop::processor_index()].idle_ns;
                // relaxed load + store: single writer per processor (see PerProcessor).
                idle.store(idle.load(std::memory_order_relaxed) + dt, std::memory_order_relaxed);
            }
            detail::Task* t = s.take();  // a permit means an item (items >= permits)
            if (t == nullptr) [[unlikely]]
                detail::fatal("carrier: a permit without a task");
            if (t->run == nullptr) return;  // a stop pill
            // A unit (drain counts its operations), a free operation, or a forwarder.
            if (t->free_operation) detail::bump(s.per[coop::processor_index()].operations);
            detail::set_in_task(true);  // a task never switches: the flag is this thread's
            t->run(t);
            detail::set_in_task(false);
        }
    }

    std::unique_ptr<detail::Scheduler> s_;
    std::vector<coop::Thread> threads_;
};

}  // namespace units
