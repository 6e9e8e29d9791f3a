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
//   drains its OwnerQueue: begin_deq(), run the operation, end_deq_and_is_empty(), until
//   empty; ownership (and with it the right to run the unit's operations) ends only after
//   the last operation finished: unit exclusion (see owner_queue.hpp on why the paper's
//   deq_and_is_empty alone is not enough for it).
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
// - A unit belongs to the program; it must outlive every message sent to it (destroy it after
//   the results were awaited, or after the Scope ended).
// - Operations must not block (no coop::Mutex, no wait()) and must not yield: they run to
//   completion on their carrier (section 3: tasks do not block once started).
#pragma once

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
#include <new>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtimes/native/coop.hpp"
#include "units/owner_queue.hpp"

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

// Task — anything a carrier or a waiter list handles: `run` when taken from the ready queue
// or a unit's queue, `wake` when a future it waits on resolved.
struct Task : coop::QueueItem {
    void (*run)(Task*) = nullptr;
    void (*wake)(Task*) = nullptr;
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

// Scheduler — the ready queue, the task semaphore and the statistics of one Scope.
struct alignas(coop::kCacheLine) Scheduler {
    Scheduler() = default;
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;
    coop::Queue<Task> ready;
    coop::Semaphore work{0};
    unsigned carriers = 0;
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

inline Scheduler& scheduler() {
    // acquire: pairs with Scope's release store; the scheduler is built before it.
    Scheduler* s = g_scheduler.load(std::memory_order_acquire);
    if (s == nullptr) [[unlikely]]
        fatal("send/wait outside a units::Scope");
    return *s;
}

inline void bump(std::atomic<std::uint64_t>& c) noexcept {
    // relaxed load + store: a single writer (this processor); readers read after a join.
    c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Block pool — 64-byte-aligned blocks in size classes of 64 bytes (up to 1 KiB), cached per
// OS thread (at most kPoolCap per class; the surplus goes back to malloc). A block freed on
// another thread than it was allocated on simply joins that thread's cache. Fresh blocks
// are malloc'ed with room to align them by hand (the raw pointer is kept just below the
// block). Under ASan/TSan every block goes to malloc/free, so misuse is still reported.
// The functions are not inlined on purpose: an activity may continue on another OS thread
// after a switch, and the thread_local's address must be taken inside each call.
inline constexpr std::size_t kPoolClass = 64;
inline constexpr std::size_t kPoolClasses = 16;
inline constexpr std::size_t kPoolCap = 4096;

inline void* raw_aligned(std::size_t n, std::size_t al) {
    void* raw = std::malloc(n + al);
    if (raw == nullptr) throw std::bad_alloc();
    // malloc's result is 16-aligned and al >= 16, so the aligned block starts at least 16
    // bytes after it: room for the raw pointer.
    const std::uintptr_t p = (reinterpret_cast<std::uintptr_t>(raw) + al) & ~(std::uintptr_t{al} - 1);
    reinterpret_cast<void**>(p)[-1] = raw;
    return reinterpret_cast<void*>(p);
}
inline void raw_free(void* p) noexcept { std::free(static_cast<void**>(p)[-1]); }

struct PoolLocal {
    void* head[kPoolClasses] = {};
    std::size_t count[kPoolClasses] = {};
    ~PoolLocal() {
        for (auto& h : head)
            while (h != nullptr) {
                void* next = *static_cast<void**>(h);
                raw_free(h);
                h = next;
            }
    }
};
inline thread_local PoolLocal t_pool;

[[gnu::noinline]] inline void* block_allocate(std::size_t n, std::align_val_t a) {
    const std::size_t al = static_cast<std::size_t>(a);
    const std::size_t cls = (n + kPoolClass - 1) / kPoolClass - 1;
    if (COOP_ASAN || COOP_TSAN || al > kPoolClass || cls >= kPoolClasses) return raw_aligned(n, al);
    PoolLocal& l = t_pool;
    if (void* b = l.head[cls]) {
        l.head[cls] = *static_cast<void**>(b);
        --l.count[cls];
        return b;
    }
    return raw_aligned((cls + 1) * kPoolClass, kPoolClass);
}
[[gnu::noinline]] inline void block_free(void* p, std::size_t n, std::align_val_t a) noexcept {
    const std::size_t al = static_cast<std::size_t>(a);
    const std::size_t cls = (n + kPoolClass - 1) / kPoolClass - 1;
    if (COOP_ASAN || COOP_TSAN || al > kPoolClass || cls >= kPoolClasses) return raw_free(p);
    PoolLocal& l = t_pool;
    if (l.count[cls] >= kPoolCap) return raw_free(p);
    *static_cast<void**>(p) = l.head[cls];
    l.head[cls] = p;
    ++l.count[cls];
}

// StateBase — a future's state without the value.
struct StateBase : Task {
    // Messages and future states come from per-thread pools (pool.hpp-like, below): they
    // are over-aligned (the waiter list's coop::Queue keeps head and tail on lines of their
    // own), and glibc's memalign bypasses its per-thread cache, while its cache holds only
    // 7 blocks per size; callgrind showed malloc/free as the largest cost of a send.
    static void* operator new(std::size_t n, std::align_val_t a) { return block_allocate(n, a); }
    static void operator delete(void* p, std::size_t n, std::align_val_t a) noexcept { block_free(p, n, a); }

    // References: Future handles + 1 for the producer until it resolved and drained.
    std::atomic<std::uint32_t> refs{2};
    std::atomic<bool> resolved{false};
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

template <class R>
struct State : StateBase {
    std::optional<R> value;
    template <class V>
    void resolve(V&& v) {
        if (resolved.load(std::memory_order_relaxed)) [[unlikely]]  // relaxed: producer-only write
            fatal("a future was resolved twice");
        value.emplace(std::forward<V>(v));
        // release: the value happens-before every reader that sees the flag (ready()).
        resolved.store(true, std::memory_order_release);
        finish_resolve();
    }
    const R& get() const { return *value; }
};
template <>
struct State<void> : StateBase {
    void resolve() {
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
    // ready queue (hazard.hpp release; any thread).
    ~UnitBase() { coop::release(this); }

    // drain — the owner runs every message of the unit, one at a time, and gives ownership
    // up only after the last one finished (end_deq_and_is_empty() == true).
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
            m->run(m);
            // After this returns true another owner may run: do not touch *u.
            if (u->queue.end_deq_and_is_empty()) return;
        }
    }
};

inline void dispatch(Task* m, MessageCore& core) {
    if (UnitBase* u = core.unit) {
        if (u->queue.enq_and_was_empty(m)) scheduler().schedule(u);  // we own the unit: schedule it
    } else {
        m->free_operation = true;
        scheduler().schedule(m);
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
        this->run = &Message::execute;
        this->wake = &advance<Message>;
        this->destroy = [](StateBase* b) { delete static_cast<Message*>(b); };
    }

    static void execute(Task* t) {
        auto* m = static_cast<Message*>(t);
        t_in_operation = true;
        if constexpr (std::is_void_v<Raw>) {
            m->invoke();
            m->args.reset();
            t_in_operation = false;
            m->resolve();
        } else {
            Raw r = m->invoke();
            m->args.reset();
            t_in_operation = false;
            if constexpr (flatten<Raw>::forwards) {
                if (r.ready()) {
                    m->resolve_from(r);
                } else {
                    // The finished message waits for `r` as a forwarder (it is in no queue).
                    StateBase* d = FutureAccess::state(r);
                    m->forward_from.emplace(std::move(r));
                    m->wake = &Message::forward;
                    d->add_waiter(m);
                }
            } else {
                m->resolve(std::move(r));
            }
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
        scheduler().schedule(t);
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
    // resolve — resolves the future and wakes its waiters (aborts when called twice). Call
    // from a coop activity (the waiter list is a coop queue).
    template <class... V>
    void resolve(V&&... v) {
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
    auto* m = new M(std::forward<F>(f), std::forward<Args>(args)...);
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
        detail::Scheduler* expected = nullptr;
        // acq_rel: release publishes the built scheduler to scheduler()'s acquire.
        if (!detail::g_scheduler.compare_exchange_strong(expected, s_.get(), std::memory_order_acq_rel))
            detail::fatal("Scope: another units::Scope is active");
        for (unsigned i = 0; i < carriers; ++i) threads_.push_back(coop::spawn([s = s_.get()] { carrier(*s); }));
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() { stop(); }

    // stop — see the class comment; idempotent. Stats are complete afterwards.
    void stop() {
        if (threads_.empty()) return;
        // One stop pill per carrier, behind every task queued so far.
        std::vector<detail::Task> pills(threads_.size());
        for (auto& p : pills) s_->schedule(&p);
        for (auto& t : threads_) t.join();
        threads_.clear();
        // Tasks queued by the last operations after the pills: run them here (we may: whoever
        // takes a task from the ready queue owns it).
        while (detail::Task* t = s_->take()) {
            if (t->run != nullptr) t->run(t);
            else coop::release(t);
        }
        for (auto& p : pills) coop::release(&p);
        // release: the scheduler's statistics were read after this by the next user.
        detail::g_scheduler.store(nullptr, std::memory_order_release);
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
            t->run(t);
        }
    }

    std::unique_ptr<detail::Scheduler> s_;
    std::vector<coop::Thread> threads_;
};

}  // namespace units
