// scheduling.hpp — Boost.Fiber's scheduling algorithms, made fit for P worker threads that
// sleep when idle and are woken when work arrives.
//
// Citation: Boost.Fiber 1.74 (boost/fiber/algo/{shared_work,work_stealing}.hpp) and its
// known problems: boostorg/fiber#327 (a sleeping scheduler is not woken when
// another thread makes a fiber ready that it could run), #203 (with suspend=false
// an idle scheduler spins at 100% CPU), #217 (work_stealing keeps static state).
//
// Design. Waking<Base> derives from one of Boost's algorithms, always constructed with
// suspend=true (idle schedulers sleep on their condition variable: no spinning, #203),
// and adds what #327 lacks: the P schedulers of one run share a Peers record with a count
// of sleepers and a `sleeping` flag per scheduler. awakened() (a fiber became ready on
// this thread) hands the fiber to Base, then, when it is a fiber any scheduler may run
// (not pinned) and someone sleeps, wakes one sleeper with Base::notify(). suspend_until()
// announces the sleep (count and flag) BEFORE it looks at the queues one last time, so
// either it sees the new fiber or the thread that queued it sees the sleeper (the
// argument is at suspend_until). work_stealing can only steal a queue's head when it is
// not pinned, so a scheduler that sees ready fibers it may not be able to steal sleeps
// for at most kPollSlice instead of indefinitely (a bounded poll while others are busy,
// never a spin, and nothing at all when the whole runtime is idle).
//
// Ownership. Peers is owned by the BoostFiberBackend::Runtime and outlives all P worker
// threads (it is destroyed after they are joined). Each Waking<Base> is owned by Boost's
// per-thread scheduler (installed with use_scheduling_algorithm) and registers itself in
// slot `index` of Peers in its constructor; slots are read by other threads only after
// the runtime's start barrier, which every worker passes after installing its algorithm.
// A shared_work Waking is destroyed when its thread exits; that happens only after main
// has returned and every fiber has been joined (Thread joins in its destructor), so no
// movable fiber is made ready any more and no peer calls wake_one() on a destroyed slot.
// Boost's work_stealing keeps every scheduler alive in a static table (any_ready() and
// steal() may still reach it): those outlive the run, and the process (boostorg/fiber#217).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/type.hpp>

namespace coopbench::boostfiber {

// Peers — the schedulers of one run: who sleeps, and how to wake them.
class Peers {
  public:
    // Slot — one scheduler: its algorithm and whether it is (about to be) asleep.
    struct alignas(64) Slot {
        boost::fibers::algo::algorithm* algo = nullptr;
        std::atomic<bool> sleeping{false};
    };

    // Peers — records for `count` schedulers, filled in as each constructs its Waking.
    explicit Peers(unsigned count) : count_(count), slots_(new Slot[count]) {}
    Peers(const Peers&) = delete;
    Peers& operator=(const Peers&) = delete;

    // count — the number of schedulers (P); slot — scheduler i's record.
    unsigned count() const { return count_; }
    Slot& slot(unsigned i) { return slots_[i]; }

    // sleepers — how many schedulers announced a sleep (a hint: see Waking::suspend_until).
    std::atomic<unsigned> sleepers{0};

    // wake_one — wake one scheduler other than `self` that announced a sleep, if any.
    // Precondition: every slot's algo is set (the start barrier has been passed).
    void wake_one(unsigned self) noexcept {
        for (unsigned k = 1; k < count_; ++k) {
            Slot& s = slots_[(self + k) % count_];
            // seq_cst load then exchange: only one waker claims a sleeper (the exchange),
            // and the plain load keeps the common "nobody asleep here" case read-only.
            if (s.sleeping.load(std::memory_order_seq_cst) && s.sleeping.exchange(false, std::memory_order_seq_cst)) {
                // notify() takes the sleeper's mutex and sets its flag, so a sleeper that
                // has not reached its wait yet returns at once: no lost wake-up.
                s.algo->notify();
                return;
            }
        }
    }

    // any_ready — does a scheduler other than `self` hold ready fibers (perhaps pinned ones)?
    bool any_ready(unsigned self) const noexcept {
        for (unsigned i = 0; i < count_; ++i)
            if (i != self && slots_[i].algo && slots_[i].algo->has_ready_fibers()) return true;
        return false;
    }

  private:
    unsigned count_;
    std::unique_ptr<Slot[]> slots_;
};

// kPollSlice — how long a work_stealing scheduler that sees ready fibers elsewhere, but
// found none to steal, sleeps before it looks again.
inline constexpr std::chrono::microseconds kPollSlice{100};

// Waking — Base (shared_work or work_stealing, built with suspend=true) that wakes a
// sleeping peer when it queues a fiber any scheduler may run. `Steals`: fibers stay in
// per-thread queues (work_stealing), so peers' queues are checked before sleeping.
template <class Base, bool Steals>
class Waking final : public Base {
  public:
    // Waking — construct Base from `args` and take slot `index` of `peers`.
    template <class... Args>
    Waking(Peers& peers, unsigned index, Args&&... args)
        : Base(std::forward<Args>(args)...), peers_(peers), index_(index) {
        peers_.slot(index_).algo = this;
    }

    // awakened — Boost's hook: ctx became ready on this thread. Queue it (Base), then wake a
    // sleeping peer if ctx may run anywhere and someone sleeps.
    void awakened(boost::fibers::context* ctx) noexcept override {
        const bool movable = !ctx->is_context(boost::fibers::type::pinned_context);
        Base::awakened(ctx);  // queues ctx (under the queue's lock)
        // seq_cst: ordered after the queue's lock release above in this thread; pairs with
        // the sleeper's announcement (see suspend_until) so one of the two sides sees the other.
        if (movable && peers_.sleepers.load(std::memory_order_seq_cst) != 0) peers_.wake_one(index_);
    }

    // suspend_until — sleep until `deadline` or a notify(), unless work is already there.
    //
    // Why no wake-up is lost: this thread (B) announces the sleep (sleepers += 1, flag) and
    // then reads the queues under their locks; a thread A that queues a fiber does so under
    // the same lock, then reads `sleepers`. If B's read of the queue comes after A's push
    // in the lock's order, B sees the fiber and does not sleep for long. Otherwise B's
    // announcement happens-before A's push (program order, then the lock's release/acquire),
    // hence before A's read of `sleepers`, which therefore sees it and A wakes a sleeper.
    // Base's own sleep is a flag under a mutex, so a notify() that comes before B's wait
    // is not lost either.
    void suspend_until(std::chrono::steady_clock::time_point const& deadline) noexcept override {
        Peers::Slot& me = peers_.slot(index_);
        // seq_cst RMW and store: the announcement, ordered before the queue reads below.
        peers_.sleepers.fetch_add(1, std::memory_order_seq_cst);
        me.sleeping.store(true, std::memory_order_seq_cst);
        if (!this->has_ready_fibers()) {
            if (Steals && peers_.any_ready(index_))
                Base::suspend_until(std::min(deadline, std::chrono::steady_clock::now() + kPollSlice));
            else
                Base::suspend_until(deadline);
        }
        // Relaxed is enough here: a stale `true` seen by a waker only costs a spare notify(),
        // which makes the next sleep return at once and re-check the queues.
        me.sleeping.store(false, std::memory_order_relaxed);
        peers_.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    }

  private:
    Peers& peers_;
    unsigned index_;
};

}  // namespace coopbench::boostfiber
