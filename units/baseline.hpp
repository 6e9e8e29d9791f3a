// baseline.hpp — the comparison point for units.hpp: the same programming model (units,
// free operations, futures that cannot be forced from an operation) implemented the
// conventional way over any backend of the Backend concept (runtimes/concept.hpp): one
// thread per message, unit exclusion by one B::Mutex per unit, futures by B::Mutex +
// B::CondVar (a message's thread blocks until its argument futures are resolved).
//
// This is what the paper's scheduler replaces (Quirk 2008, sections 4-5: a lock-free
// scheduler instead of locks and blocked threads); the workloads fib-mutex and ddb-mutex
// run the same programs as fib and ddb on it, on every backend.
//
// Example (compiled: docs/examples/units_baseline_example.cpp, on pthreads):
//   baseline::System<B> sys;                            // inside B::Runtime::run
//   baseline::Unit<B, Account> acct;
//   auto f = sys.send(acct, [](Account& a, long x) { return a.balance += x; }, 5L);
//   auto g = sys.send([](baseline::Future<B, long> v) { return v.get() * 2; }, f);  // free op
//   long r = g.get();                                   // main: mutex + condition wait
//   sys.join_all();                                     // every message thread
//
// Design: send() spawns a B thread that waits (B::CondVar) for every future reachable from
// the arguments (the same traversal as units.hpp: futures directly or inside standard
// containers, pairs, tuples, optionals), then locks the unit's B::Mutex (if any), runs the
// operation, unlocks, and resolves the result future (notify_all). An operation returning a
// Future is flattened with a continuation (no thread blocks for it). Finished threads are
// joined by later sends (their handles would otherwise pile up: an OS thread keeps its
// stack until joined). A refused spawn (SpawnError) resolves the message's future with a
// default value and records the error (System::error), so the program ends and the
// workload reports a failed point instead of hanging.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtimes/concept.hpp"

namespace units::baseline {

template <class B, class R>
class Future;

namespace detail {

template <class B, class R>
struct State {
    typename B::Mutex m;
    typename B::CondVar cv;
    bool done = false;
    std::optional<std::conditional_t<std::is_void_v<R>, bool, R>> value;
    std::vector<std::function<void()>> then;  // continuations (flattening)

    template <class... V>
    void resolve(V&&... v) {
        std::vector<std::function<void()>> run;
        m.lock();
        if constexpr (std::is_void_v<R>) value.emplace(true);
        else value.emplace(std::forward<V>(v)...);
        done = true;
        run.swap(then);
        m.unlock();
        cv.notify_all();
        for (auto& f : run) f();
    }
    void wait() {
        m.lock();
        while (!done) cv.wait(m);
        m.unlock();
    }
    bool ready() {
        m.lock();
        const bool d = done;
        m.unlock();
        return d;
    }
    // on_done — runs `f` when resolved (now, if it is).
    void on_done(std::function<void()> f) {
        m.lock();
        if (!done) {
            then.push_back(std::move(f));
            m.unlock();
            return;
        }
        m.unlock();
        f();
    }
};

template <class T>
struct is_future : std::false_type {};
template <class B, class R>
struct is_future<Future<B, R>> : std::true_type {};
template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};
template <class T>
struct is_tuple_like : std::false_type {};
template <class A, class C>
struct is_tuple_like<std::pair<A, C>> : std::true_type {};
template <class... A>
struct is_tuple_like<std::tuple<A...>> : std::true_type {};
template <class T>
concept Range = requires(const T& t) {
    std::begin(t);
    std::end(t);
};

// wait_all — blocks until every future reachable from `x` is resolved.
template <class T>
void wait_all(const T& x) {
    using U = std::remove_cvref_t<T>;
    if constexpr (is_future<U>::value) {
        x.wait();
    } else if constexpr (is_optional<U>::value) {
        if (x) wait_all(*x);
    } else if constexpr (is_tuple_like<U>::value) {
        std::apply([](const auto&... e) { (wait_all(e), ...); }, x);
    } else if constexpr (Range<U> && !std::is_convertible_v<U, std::string>) {
        for (const auto& e : x) wait_all(e);
    }
}

template <class T>
struct flatten {
    using type = T;
    static constexpr bool forwards = false;
};
template <class B, class R>
struct flatten<Future<B, R>> {
    using type = R;
    static constexpr bool forwards = true;
};

}  // namespace detail

// Future — a shared handle; wait() blocks the calling thread (mutex + condition).
template <class B, class R>
class Future {
  public:
    Future() = default;
    explicit Future(std::shared_ptr<detail::State<B, R>> s) : s_(std::move(s)) {}
    bool valid() const noexcept { return s_ != nullptr; }
    bool ready() const { return s_->ready(); }
    void wait() const { s_->wait(); }
    template <class Q = R>
        requires(!std::is_void_v<Q>)
    const Q& get() const {
        s_->wait();
        return *s_->value;
    }
    const std::shared_ptr<detail::State<B, R>>& state() const noexcept { return s_; }

  private:
    std::shared_ptr<detail::State<B, R>> s_;
};

// make_ready_future — a resolved future.
template <class B, class R>
Future<B, std::decay_t<R>> make_ready_future(R&& v) {
    auto s = std::make_shared<detail::State<B, std::decay_t<R>>>();
    s->value.emplace(std::forward<R>(v));
    s->done = true;  // not shared yet: no lock needed
    return Future<B, std::decay_t<R>>(std::move(s));
}

// Unit — user state S with its mutex.
template <class B, class S>
class Unit {
  public:
    template <class... A>
    explicit Unit(A&&... a) : state_(std::forward<A>(a)...) {}
    Unit(const Unit&) = delete;
    Unit& operator=(const Unit&) = delete;
    S& state() noexcept { return state_; }
    typename B::Mutex& mutex() noexcept { return m_; }
    std::uint64_t operations() const noexcept { return ops_; }
    void count_operation() noexcept { ++ops_; }  // under mutex()

  private:
    typename B::Mutex m_;
    std::uint64_t ops_ = 0;
    S state_;
};

// System — the message threads of one program run.
template <class B>
class System {
  public:
    System() = default;
    System(const System&) = delete;
    System& operator=(const System&) = delete;
    ~System() { join_all(); }

    // send — a unit operation op(unit.state(), args...).
    template <class S, class F, class... Args>
    auto send(Unit<B, S>& unit, F&& op, Args&&... args) {
        return post(&unit, std::forward<F>(op), std::forward<Args>(args)...);
    }
    // send — a free operation op(args...).
    template <class F, class... Args>
        requires std::is_invocable_v<std::decay_t<F>, std::decay_t<Args>&&...>
    auto send(F&& op, Args&&... args) {
        return post(static_cast<NoUnit*>(nullptr), std::forward<F>(op), std::forward<Args>(args)...);
    }

    // join_all — joins every message thread (including those started meanwhile).
    void join_all() {
        for (;;) {
            std::map<std::size_t, typename B::Thread> all;
            lock_.lock();
            all.swap(threads_);
            finished_.clear();
            lock_.unlock();
            if (all.empty()) return;
            for (auto& [id, t] : all) t.join();
        }
    }

    // error — why a spawn failed (empty if none did).
    std::string error() {
        lock_.lock();
        std::string e = error_;
        lock_.unlock();
        return e;
    }
    // spawned — message threads started so far.
    std::size_t spawned() {
        lock_.lock();
        std::size_t n = next_id_;
        lock_.unlock();
        return n;
    }

  private:
    template <class U, class F, class... Args>
    auto post(U* unit, F&& op, Args&&... args) {
        using Fn = std::decay_t<F>;
        using Raw = decltype(call(unit, std::declval<Fn&>(), std::declval<std::decay_t<Args>&&>()...));
        using R = typename detail::flatten<Raw>::type;
        auto state = std::make_shared<detail::State<B, R>>();
        Future<B, R> result(state);
        auto body = [unit, state, fn = Fn(std::forward<F>(op)),
                     args = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)]() mutable {
            std::apply([](const auto&... a) { (detail::wait_all(a), ...); }, args);
            if constexpr (std::is_void_v<Raw>) {
                std::apply([&](auto&... a) { call(unit, fn, std::move(a)...); }, args);
                state->resolve();
            } else {
                Raw r = std::apply([&](auto&... a) -> Raw { return call(unit, fn, std::move(a)...); }, args);
                if constexpr (detail::flatten<Raw>::forwards) {
                    auto inner = r.state();
                    inner->on_done([state, inner] {
                        if constexpr (std::is_void_v<R>) state->resolve();
                        else state->resolve(*inner->value);
                    });
                } else {
                    state->resolve(std::move(r));
                }
            }
        };
        spawn_message(std::move(body), state);
        return result;
    }

    struct NoUnit {};
    // call — op(unit state, args...) under the unit's mutex, or op(args...) for a free one.
    template <class Fn, class... A>
    static decltype(auto) call(NoUnit*, Fn& fn, A&&... a) {
        return std::invoke(fn, std::forward<A>(a)...);
    }
    template <class S, class Fn, class... A>
    static decltype(auto) call(Unit<B, S>* unit, Fn& fn, A&&... a) {
        std::lock_guard<typename B::Mutex> g(unit->mutex());
        unit->count_operation();
        return std::invoke(fn, unit->state(), std::forward<A>(a)...);
    }

    template <class Body, class St>
    void spawn_message(Body&& body, const St& state) {
        lock_.lock();
        const std::size_t id = next_id_++;
        lock_.unlock();
        try {
            auto t = B::spawn([this, id, body = std::move(body)]() mutable {
                body();
                lock_.lock();
                finished_.push_back(id);
                lock_.unlock();
            });
            lock_.lock();
            threads_.emplace(id, std::move(t));
            lock_.unlock();
        } catch (const coopbench::SpawnError& e) {
            lock_.lock();
            if (error_.empty()) error_ = e.what();
            lock_.unlock();
            poison(state);
        }
        reap();
    }

    template <class St>
    static void poison(const St& state) {
        using V = typename std::remove_reference_t<decltype(*state->value)>;
        if constexpr (std::is_same_v<V, bool>) state->resolve();
        else state->resolve(V{});
    }

    // reap — joins the threads that said they finished (and whose handle is registered).
    void reap() {
        std::vector<typename B::Thread> done;
        lock_.lock();
        if (finished_.size() >= 64) {
            std::vector<std::size_t> keep;
            for (std::size_t id : finished_) {
                auto it = threads_.find(id);
                if (it == threads_.end()) {
                    keep.push_back(id);
                    continue;
                }
                done.push_back(std::move(it->second));
                threads_.erase(it);
            }
            finished_.swap(keep);
        }
        lock_.unlock();
        for (auto& t : done) t.join();
    }

    typename B::Mutex lock_;
    std::map<std::size_t, typename B::Thread> threads_;
    std::vector<std::size_t> finished_;
    std::size_t next_id_ = 0;
    std::string error_;
};

}  // namespace units::baseline
