// scott_clh_nb.hpp — `scott-clh-nb` and `scott-clh-nb-opt`: Scott's non-blocking abortable
// CLH queue lock.
//
// Citation: M. L. Scott, "Non-blocking timeout in scalable queue-based spin locks",
// PODC 2002 (the CLH-NB try lock; reference [9] of Marathe, Moir and Shavit, "Composite
// Abortable Locks", IPDPS 2006, where it is "Scott-AL"). The -opt variant is the CAL
// paper's release optimisation (section 4.1): read Tail before the CAS, and skip the CAS
// when it would fail anyway.
//
// Design. Every attempt takes a fresh node I (prev = null) and swaps it into `tail_`; the
// swap returns its predecessor `pred`. The thread spins on pred->prev:
//   - kAvailable: pred's owner released the lock; we own the lock and pred's node;
//   - another node pp: pred's owner aborted and left pp, its own predecessor; we own pred's
//     node, reclaim it and spin on pp instead;
//   - null: keep waiting.
// Timeout: if I is still the tail, CAS tail I -> pred (we were last: take I back); else
// publish I->prev = pred, so our successor skips I and reclaims it. Release: if I is still
// the tail, CAS tail I -> null (no successor: take I back); else I->prev = kAvailable.
//
// Ownership rules (the node reclamation scheme). A node is reclaimed exactly once, by the
// one thread that holds the last reference to it: its successor when that successor reads
// a non-null prev in it, or its owner when the owner's CAS removes it from `tail_`. No one
// reads a node after that point, so reclamation needs no hazard pointers; but nodes are
// freed by threads other than the ones that allocated them, and a queue may hold many
// abandoned nodes, which is the paper's point about space (up to O(T) per lock) and
// memory management. Nodes go to a per-thread pool (NodePool, no shared free list and so
// no ABA); a pool keeps at most kPoolKeep nodes and deletes the rest; a thread's pool is
// deleted at thread exit and the lock's destructor reclaims what the queue still holds,
// so nothing leaks. Under ASan a pooled node is poisoned, so a use after reclamation is
// reported as one.
#pragma once

#include <atomic>
#include <cstddef>
#include <string_view>
#include <vector>

#include "locks/abortable.hpp"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define LOCKS_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define LOCKS_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define LOCKS_POISON(p, n) ((void)(p), (void)(n))
#define LOCKS_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace locks {

namespace clh_nb {

// Node — a queue node: only `prev`, which its owner writes when it leaves.
struct alignas(64) Node {
    std::atomic<Node*> prev{nullptr};
};

// kAvailable — the address stored in prev by a releasing owner (Scott's AVAILABLE).
inline Node kAvailableNode;
inline Node* const kAvailable = &kAvailableNode;

// heap_nodes — nodes currently allocated from the heap (in queues or in pools); tests use
// it to check that nothing leaks.
inline std::atomic<long> heap_nodes{0};

// NodePool — this thread's reclaimed nodes (no sharing: only the owning thread touches it).
class NodePool {
  public:
    static constexpr std::size_t kPoolKeep = 64;
    ~NodePool() {
        for (Node* n : free_) {
            LOCKS_UNPOISON(n, sizeof(Node));
            destroy(n);
        }
    }
    Node* get() {
        if (free_.empty()) {
            // relaxed: a statistic, no ordering needed.
            heap_nodes.fetch_add(1, std::memory_order_relaxed);
            return new Node;
        }
        Node* n = free_.back();
        free_.pop_back();
        LOCKS_UNPOISON(n, sizeof(Node));
        return n;
    }
    void put(Node* n) {
        if (free_.size() >= kPoolKeep) return destroy(n);
        LOCKS_POISON(n, sizeof(Node));
        free_.push_back(n);
    }
    // mine — the calling thread's pool.
    static NodePool& mine() {
        thread_local NodePool pool;
        return pool;
    }

  private:
    static void destroy(Node* n) {
        delete n;
        heap_nodes.fetch_sub(1, std::memory_order_relaxed);  // relaxed: a statistic
    }
    std::vector<Node*> free_;
};

}  // namespace clh_nb

// ScottClhNb — Scott's non-blocking abortable CLH lock; ReadTailFirst = the CAL paper's
// release optimisation (`scott-clh-nb-opt`).
template <bool ReadTailFirst>
class ScottClhNb {
    using Node = clh_nb::Node;

  public:
    static constexpr std::string_view name = ReadTailFirst ? "scott-clh-nb-opt" : "scott-clh-nb";

    // Ticket — the node that holds the lock (null: timed out).
    struct Ticket {
        Node* node = nullptr;
        explicit operator bool() const { return node != nullptr; }
    };

    explicit ScottClhNb(const LockOptions& = {}) {}
    ScottClhNb(const ScottClhNb&) = delete;
    ScottClhNb& operator=(const ScottClhNb&) = delete;

    // ~ScottClhNb — reclaims the nodes still queued (precondition: no thread uses the lock).
    ~ScottClhNb() {
        Node* n = tail_.load(std::memory_order_acquire);
        while (n != nullptr && n != clh_nb::kAvailable) {
            Node* p = n->prev.load(std::memory_order_acquire);
            clh_nb::NodePool::mine().put(n);
            n = p;
        }
    }

    // try_lock_for — enqueue and wait for the predecessor's release within `patience`.
    Ticket try_lock_for(Patience patience) {
        auto& pool = clh_nb::NodePool::mine();
        Node* me = pool.get();
        // relaxed: published by the exchange below (release).
        me->prev.store(nullptr, std::memory_order_relaxed);
        // acq_rel: release publishes me->prev == null to whoever swaps in behind us;
        // acquire makes pred (initialised by its owner before its own release swap) readable.
        Node* pred = tail_.exchange(me, std::memory_order_acq_rel);
        if (pred == nullptr) return {me};  // the lock was free and its queue empty
        Deadline deadline(patience);
        for (;;) {
            // acquire: pairs with the release store of kAvailable (the previous holder's
            // critical section happens-before ours) or of an abandoned node's predecessor
            // (which we then read).
            Node* pp = pred->prev.load(std::memory_order_acquire);
            if (pp == clh_nb::kAvailable) {
                pool.put(pred);  // we hold the only reference to pred
                return {me};
            }
            if (pp != nullptr) {  // pred's owner timed out and left pp: skip and reclaim pred
                pool.put(pred);
                pred = pp;
                continue;
            }
            if (deadline.expired()) break;
            cpu_relax();
        }
        // Timed out. If we are still the tail, take our node back out of the queue.
        Node* expected = me;
        // acq_rel: release hands pred (and what we read of it) to the next swapper; acquire
        // is not needed on failure (we only store to our own node then).
        if (tail_.compare_exchange_strong(expected, pred, std::memory_order_acq_rel, std::memory_order_relaxed)) {
            pool.put(me);
        } else {
            // release: our successor reads pred through our node after an acquire load.
            me->prev.store(pred, std::memory_order_release);
        }
        return {};
    }

    // unlock — release the lock held through `t`.
    void unlock(Ticket t) {
        Node* me = t.node;
        if (!ReadTailFirst || tail_.load(std::memory_order_relaxed) == me) {
            // relaxed load above: only decides whether the CAS is worth trying; the CAS
            // itself is the decision. acq_rel on success. release: the next thread to swap
            // in gets null and enters; our critical section must happen-before its own.
            // acquire: tail_ may hold `me` again because a successor timed out and its CAS
            // (acq_rel) handed the tail back to our node; that successor read me->prev while
            // it waited, and we are about to reuse or free `me`, so its reads must
            // happen-before. With release only, ThreadSanitizer reported the successor's
            // read racing with the pool's delete of the node (test_abortable_locks
            // MutualExclusionWithAborts, about 6 runs in 100).
            Node* expected = me;
            if (tail_.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel,
                                              std::memory_order_relaxed)) {
                clh_nb::NodePool::mine().put(me);
                return;
            }
        }
        // release: pairs with the successor's acquire load of prev (hand-off).
        me->prev.store(clh_nb::kAvailable, std::memory_order_release);
    }

  private:
    alignas(64) std::atomic<Node*> tail_{nullptr};
};

using ScottClhNbLock = ScottClhNb<false>;
using ScottClhNbOptLock = ScottClhNb<true>;

}  // namespace locks
