// cal.hpp — `cal` and `cal-opt`: the CLH-based Composite Abortable Lock.
//
// Citation: V. J. Marathe, M. Moir and N. Shavit, "Composite Abortable Locks", IPDPS 2006:
// section 3 and Figs. 1–2 (`cal`), section 3.2 (`cal-opt`, the locked_by_unqueued_thread
// bit). Line numbers below ("L23") refer to Figs. 1–2.
//
// Design. A lock is a fixed array of C queue nodes (default 4) and a versioned Tail word.
// A node is Free, Waiting, Released or Aborted. A thread first acquires a node: it picks
// one at random and CASes it F -> W (L23), backing off exponentially between failures and
// picking again at random (the paper's "same node or a different one at random"); aborting
// in this phase is just leaving. A node that is A or R and is the current Tail has nobody
// to clean it up, so the thread may take it by moving Tail off it (L27–36: to null for R,
// to the aborted node's predecessor for A). With a node in hand it splices the node at
// Tail (L44–51) and spins on its predecessor (kept in a private variable, L52): R means
// the lock is ours (we set the predecessor F for reuse, L69); A means the predecessor
// aborted, so we set it F and continue with the predecessor it left in `next` (L57–61).
// Release is a single store of R (L14). Abort while queued is two stores: next, then A
// (L63–64). The Tail word packs <node index, unqueued bit, version>; the version, bumped
// on every change of Tail, defeats ABA on the CASes that move Tail.
//
// cal-opt (section 3.2): Tail also carries locked_by_unqueued_thread. When Tail's node is
// null (or an R node, or an A node with no predecessor — an empty queue) and the bit is
// clear, a thread CASes Tail to <null, bit set> and holds the lock without any node: a
// TAS lock in the uncontended case. That holder releases with a CAS that clears the bit
// (a CAS, because a thread may splice a node into Tail meanwhile). A queued thread at the
// head of the queue (no predecessor) enters only once the bit is clear; queued threads
// never change the bit (every Tail CAS of theirs copies it).
//
// Ownership rules. The array belongs to the lock: no allocation after construction, and
// space is O(C) whatever the number of threads. A node is owned by the thread whose CAS
// moved it F -> W (or whose Tail CAS took it as a stale tail) until it becomes R or A;
// then it is owned by the one thread that cleans it: its successor in the queue, or the
// thread whose versioned Tail CAS removes it from Tail. The cleaner reads the node's
// `next` before storing F, and nobody touches a node after storing F into it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "locks/abortable.hpp"

namespace locks {

// kMaxCalNodes — the largest C (node indices are 8 bits in the Tail word).
inline constexpr unsigned kMaxCalNodes = 255;

// Cal — the CLH-based composite abortable lock; Opt = cal-opt (section 3.2).
template <bool Opt>
class Cal {
  public:
    static constexpr std::string_view name = Opt ? "cal-opt" : "cal";

    // Node — one of the C queue nodes (Fig. 1 QNode); `next` is a node index + 1, 0 = null.
    struct alignas(64) Node {
        std::atomic<std::uint32_t> state{kFree};
        std::atomic<std::uint32_t> next{0};
    };

    // Ticket — the node through which the lock is held (null: timed out); cal-opt's
    // unqueued holder gets the address of a shared sentinel.
    struct Ticket {
        Node* node = nullptr;
        explicit operator bool() const { return node != nullptr; }
    };

    explicit Cal(const LockOptions& o = {}) : c_(o.nodes), nodes_(new Node[o.nodes == 0 ? 1 : o.nodes]) {
        if (o.nodes == 0 || o.nodes > kMaxCalNodes)
            throw std::invalid_argument("cal: nodes must be 1.." + std::to_string(kMaxCalNodes));
    }
    Cal(const Cal&) = delete;
    Cal& operator=(const Cal&) = delete;

    // nodes — C, the size of the node array (the lock's whole space besides Tail).
    unsigned nodes() const { return c_; }

    // try_lock_for — acquire within `patience` (Fig. 2).
    Ticket try_lock_for(Patience patience) {
        if constexpr (Opt) {
            if (try_unqueued()) return {&unqueued_};
        }
        Deadline deadline(patience);
        Backoff backoff;
        // Acquire a node (L22–43).
        std::uint32_t idx = 0;  // index + 1 of our node
        for (;;) {
            idx = random_below(c_) + 1;
            Node& n = node(idx);
            std::uint32_t expect_free = kFree;
            // acquire: pairs with the cleaner's release store of F, so its last reads of
            // the node (of `next`) happen-before our writes to it.
            if (n.state.compare_exchange_strong(expect_free, kWaiting, std::memory_order_acquire,
                                                std::memory_order_relaxed))
                break;
            // acquire: the state loaded next must be at least as new as this Tail.
            std::uint64_t cur = tail_.load(std::memory_order_acquire);
            // acquire: pairs with the release store of R or A, so `next` (written before
            // A) is visible.
            const std::uint32_t st = n.state.load(std::memory_order_acquire);
            if ((st == kAborted || st == kReleased) && ptr(cur) == idx) {
                // A node at Tail has no successor to clean it: take it by moving Tail off
                // it. The versioned CAS succeeds only if Tail did not change since `cur`,
                // so the node stayed the tail, and its R/A state and `next` were stable.
                const std::uint32_t nxt = st == kAborted ? n.next.load(std::memory_order_relaxed) : 0;
                // acq_rel: acquire the history of whoever last moved Tail; release our
                // reads of the node to the next mover of Tail.
                if (tail_.compare_exchange_strong(cur, pack(nxt, unq(cur), ver(cur) + 1), std::memory_order_acq_rel,
                                                  std::memory_order_relaxed)) {
                    // relaxed: the node is ours and not yet reachable; the splice CAS
                    // below (release) publishes this store.
                    n.state.store(kWaiting, std::memory_order_relaxed);
                    break;
                }
            }
            if constexpr (Opt) {
                if (try_unqueued()) return {&unqueued_};
            }
            if (deadline.expired()) return {};  // L41–42: abort = leave
            backoff.pause();
        }
        Node& me = node(idx);
        // Splice our node into the queue (L44–51).
        std::uint64_t cur = tail_.load(std::memory_order_relaxed);
        // acq_rel: release publishes our node's W (and clean `next`) to the thread that
        // finds it through Tail; acquire makes the predecessor's fields readable.
        while (!tail_.compare_exchange_weak(cur, pack(idx, unq(cur), ver(cur) + 1), std::memory_order_acq_rel,
                                            std::memory_order_relaxed)) {
            if (deadline.expired()) {
                // release: pairs with the acquire CAS F -> W of the node's next user.
                me.state.store(kFree, std::memory_order_release);
                return {};
            }
        }
        // Wait for the predecessor (L52–68).
        std::uint32_t pred = ptr(cur);
        for (;;) {
            if (pred == 0) {
                if constexpr (!Opt) return {&me};  // L53–54: first in the queue
                // cal-opt: the head enters once the unqueued holder (if any) released.
                // acquire: pairs with the release CAS that cleared the bit.
                if (!unq(tail_.load(std::memory_order_acquire))) return {&me};
            } else {
                Node& p = node(pred);
                // acquire: pairs with the release store of R (the holder's critical section
                // happens-before ours) or of A (its `next` is visible).
                const std::uint32_t st = p.state.load(std::memory_order_acquire);
                if (st == kReleased) {
                    // release: our reads of p happen-before its next user's writes.
                    p.state.store(kFree, std::memory_order_release);  // L69
                    return {&me};
                }
                if (st == kAborted) {  // L57–61: skip and free the aborted predecessor
                    pred = p.next.load(std::memory_order_relaxed);  // ordered by the acquire above
                    p.state.store(kFree, std::memory_order_release);  // as at L69
                    continue;
                }
            }
            if (deadline.expired()) {  // L62–65: abort = two stores
                // relaxed: published by the release store of A just below.
                me.next.store(pred, std::memory_order_relaxed);
                me.state.store(kAborted, std::memory_order_release);
                return {};
            }
            cpu_relax();
        }
    }

    // unlock — release the lock held through `t` (Fig. 1 L14; cal-opt: clear the bit).
    void unlock(Ticket t) {
        if constexpr (Opt) {
            if (t.node == &unqueued_) {
                std::uint64_t cur = tail_.load(std::memory_order_relaxed);
                // release: pairs with the acquire load/CAS of the next holder that sees
                // the bit clear. A CAS, not a store: a splice may change Tail meanwhile.
                while (!tail_.compare_exchange_weak(cur, pack(ptr(cur), 0, ver(cur) + 1), std::memory_order_release,
                                                    std::memory_order_relaxed)) {
                }
                return;
            }
        }
        // release: pairs with the successor's acquire load of R (hand-off), or with the
        // acquire load of a thread that cleans this node from Tail.
        t.node->state.store(kReleased, std::memory_order_release);
    }

  private:
    static constexpr std::uint32_t kFree = 0, kWaiting = 1, kReleased = 2, kAborted = 3;
    static constexpr unsigned kUnqBit = 8, kVerShift = 9;

    static std::uint64_t pack(std::uint32_t p, bool u, std::uint64_t v) {
        return std::uint64_t{p} | (std::uint64_t{u} << kUnqBit) | (v << kVerShift);
    }
    static std::uint32_t ptr(std::uint64_t t) { return static_cast<std::uint32_t>(t & 0xff); }
    static bool unq(std::uint64_t t) { return (t >> kUnqBit) & 1; }
    static std::uint64_t ver(std::uint64_t t) { return t >> kVerShift; }
    Node& node(std::uint32_t idx) { return nodes_[idx - 1]; }

    // try_unqueued — cal-opt's TAS-like path: take the lock without a node when the queue
    // is empty (Tail null, or an R node, or an A node without predecessor) and the bit clear.
    bool try_unqueued() {
        std::uint64_t cur = tail_.load(std::memory_order_relaxed);  // relaxed: the CAS decides
        if (unq(cur)) return false;
        const std::uint32_t p = ptr(cur);
        if (p == 0)
            // acquire: pairs with the release CAS/store of the previous holder, through the
            // release sequence on Tail.
            return tail_.compare_exchange_strong(cur, pack(0, true, ver(cur) + 1), std::memory_order_acquire,
                                                 std::memory_order_relaxed);
        Node& n = node(p);
        // acquire: pairs with the release store of R (previous holder) or A (its `next`).
        const std::uint32_t st = n.state.load(std::memory_order_acquire);
        if (st != kReleased && !(st == kAborted && n.next.load(std::memory_order_relaxed) == 0)) return false;
        // acq_rel: as the stale-tail CAS in try_lock_for. Success means Tail (and so the
        // node's R/A state) did not change since `cur`: the node is ours to free.
        if (!tail_.compare_exchange_strong(cur, pack(0, true, ver(cur) + 1), std::memory_order_acq_rel,
                                           std::memory_order_relaxed))
            return false;
        n.state.store(kFree, std::memory_order_release);  // release: as at L69
        return true;
    }

    alignas(64) std::atomic<std::uint64_t> tail_{0};  // <node index + 1 | unqueued bit | version>
    unsigned c_;
    std::unique_ptr<Node[]> nodes_;
    static inline Node unqueued_{};  // cal-opt: the Ticket of an unqueued holder
};

using CalLock = Cal<false>;
using CalOptLock = Cal<true>;

}  // namespace locks
