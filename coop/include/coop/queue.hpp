// queue.hpp — coop's unbounded lock-free FIFO queue with per-processor hazard pointers.
//
// Citation: F. Negele, F. Friedrich, S. Oh, B. Egger, "On the Design and Implementation of
// an Efficient Lock-Free Scheduler", Sect. 4.3, Fig. 6 (ENQUEUE/DEQUEUE), with three corrections
// found by implementing it (docs/native-runtime.md, errata): (1) hp1 is cleared *after* ENQUEUE's last CAS, (2) line 40's
// `first` is the old head, (3) hazard pointers are published with a full fence. The list
// shape is Michael and Scott's queue (PODC 1996); hazard pointers and node reuse: hazard.hpp.
//
// Design summary
// - A singly linked list with a dummy node at the head. `head_` is the dummy; `tail_` is the
//   last node or behind it (by one node after an enqueue's link, by up to a chain's length
//   while an enqueue(chain) is in flight; whoever sees the lag helps it forward).
//   `tail_` is never behind `head_`: a dequeue first moves a lagging tail past the node it
//   retires.
// - An item carries the node it is enqueued with (QueueItem::node; hazard.hpp acquire()
//   checks it is not hazardous), and a dequeue hands the retired dummy to the returned item.
//   No allocation happens in steady state; nodes <= items + queues + 2N (N processors).
// - Chains (native-ws's overflow): link() threads items' nodes into a private list and
//   enqueue(Chain&) appends it with the same two CASes as one item. If its tail CAS loses
//   (another processor helped the tail one node forward: an enqueuer that found the tail
//   lagging, or a dequeue that found the tail on the head), the append helps the tail on,
//   one node per round, until the tail is at or past the chain's last node, and only then
//   returns. So, as for one item, "enqueue returned" implies "tail_ is past the item", which
//   is what empty() relies on (see there). Without that help a dequeuer that moved the tail
//   by one node left head_ == tail_ inside the chain: empty() said "empty" with up to the
//   whole chain queued behind the tail, until some later enqueue helped it on.
//   Cost: nothing when the tail CAS succeeds (the common case); otherwise at most
//   size-1 rounds of one hazard publication and one CAS (bounded: each round moves the tail
//   at least one node, and the tail starts at the chain's first node).
// - Protection: enqueue protects the tail with hp1 while it links behind it and swings
//   `tail_`; dequeue protects the head with hp1 and its successor with hp2. Each hazard is
//   validated by re-reading the queue pointer it came from *after* the publishing exchange.
//   For hp2 we re-read `head_` (Michael's queue), not `head->next` as Fig. 6 line 30 does:
//   head->next never changes while head is protected, so that re-check is always true and
//   would not stop us from reading `next->item` after `next` was dequeued and freed.
//
// Locked instructions per enqueue+dequeue pair (x86-64), uncontended: 6 (the paper's: 7).
//   enqueue: xchg hp1 <- tail (publication needs store->load ordering before the re-read)
//            CAS tail->next (links the node; the linearisation point)
//            CAS tail_ (swings the tail; without it the tail would lag without bound)
//   dequeue: xchg hp1 <- head, xchg hp2 <- next (publications, as above)
//            CAS head_ (unlinks the dummy; the linearisation point)
//   Saved versus Fig. 6: line 35's CAS(queue.tail, head, next) is issued only when the tail
//   is seen to lag (tail_ == head), which needs a plain load; clearing a hazard pointer is a
//   release store (a plain mov): a late clear only delays reuse, it never breaks safety.
//   All other loads (seq_cst or acquire) are plain movs on x86.
//   Not taken: dropping hp2 and validating the read of next->item with the head CAS alone
//   would save one more xchg, but the read could then touch a node that release() already
//   freed (a use-after-free whose value is discarded, still undefined behaviour and an ASan
//   error); a plain store for a hazard followed by the validating load is unsafe on x86
//   (store->load reordering, errata 3).
//   Measured (valgrind --tool=callgrind on tests/native_queue/callgrind_pair.cpp, g++ 12
//   Release, one thread, queue of 4 items): one enqueue+dequeue pair costs 93 instructions
//   with 1 bound processor (enqueue 57, dequeue 38, with call overhead); the hazard scan in
//   acquire() adds about 11 instructions per bound processor (170 with 8 bound). Each
//   processor's slot is its own cache line, so on many cores the scan costs N line reads
//   per enqueue: the paper's constant, independent of the number of activities.
//
// Ownership rules
// - enqueue(item): the caller owns the item (in no queue) and its node; the queue owns both
//   until a dequeue returns the item; that caller then owns the item and, through
//   item->node, the retired dummy.
// - A thread calls bind_processor() before its first operation, and no context switch to
//   another activity on the same processor happens during an operation (both are the
//   scheduler's guarantee in coop: the operations run "uncooperatively").
// - The item handover (dequeue result to its next user) carries the ordering of the plain
//   QueueItem::node field: a dequeue reads the link with acquire that the enqueue wrote
//   with a release CAS after writing item->node.
//
// Example (compiled: docs/examples/queues_example.cpp):
//   struct Job : coop::QueueItem { int id; };
//   coop::bind_processor(0);
//   coop::Queue<Job> q;
//   Job a;
//   q.enqueue(&a);
//   Job* j = q.dequeue();        // &a; a.node now holds the old dummy
//   coop::release(j);            // before `a` is destroyed
#pragma once

#include <atomic>
#include <cstddef>
#include <type_traits>

#include "hazard.hpp"

namespace coop {

// Fig6Corrected — the default Queue policy: Fig. 6 with the errata applied, no hooks.
struct Fig6Corrected {
    static constexpr bool kClearHp1BeforeTailCas = false;
};

// PrintedFig6 — Fig. 6 exactly as printed (ABA bug, errata item 1: hp1 cleared at line 18,
// before line 19's CAS); for tests only. The tests' hooks (COOP_HOOK in config.hpp) run in
// the production policy's code, so what they check is the queue the runtime uses.
struct PrintedFig6 {
    static constexpr bool kClearHp1BeforeTailCas = true;
};

// Queue — unbounded lock-free FIFO of T* (T derives from QueueItem). Operations are
// lock-free; node reuse is wait-free (hazard.hpp). `Policy` is for tests (PrintedFig6).
template <class T, class Policy = Fig6Corrected>
class Queue {
    static_assert(std::is_base_of_v<QueueItem, T>, "coop::Queue<T>: T must derive from QueueItem");

public:
    // Queue — an empty queue (allocates its dummy node).
    Queue() {
        Node* dummy = detail::allocate_node();
        COOP_ASSERT(dummy->next.load(std::memory_order_relaxed) == nullptr, "Queue: dummy not fresh");
        // relaxed: the queue is published to other threads by whatever publishes `this`.
        head_.store(dummy, std::memory_order_relaxed);
        tail_.store(dummy, std::memory_order_relaxed);
    }

    // ~Queue — frees the dummy node. Precondition: the queue is empty and no operation on it
    // is in flight.
    ~Queue() {
        // relaxed: no operation is in flight; the caller's own synchronisation (joining the
        // threads that used the queue, say) orders their last writes before this.
        Node* dummy = head_.load(std::memory_order_relaxed);
        COOP_ASSERT(dummy->next.load(std::memory_order_relaxed) == nullptr, "~Queue: not empty");
        QueueItem holder;
        holder.node = dummy;
        release(&holder);  // frees it, or a pooled node if a stale hazard still names it
    }

    Queue(const Queue&) = delete;
    Queue& operator=(const Queue&) = delete;

    // enqueue — appends `item` (Fig. 6 ENQUEUE). Precondition: the caller owns `item` (it is
    // in no queue), the thread is bound, no context switch happens during the call.
    void enqueue(T* item) {
        Node* node = prepare(item);
        append(node, node, 1);
    }

    // Chain — items linked privately by link() and appended in one step by enqueue(Chain&):
    // a batch (native-ws's overflow of half a ring) pays one append's 3 locked instructions
    // instead of 3 per item. Owned by one thread; its nodes are in no queue until appended.
    struct Chain {
        Node* first = nullptr;
        Node* last = nullptr;
        std::size_t size = 0;
        bool empty() const noexcept { return first == nullptr; }
    };

    // link — adds `item` at the end of `chain` (nothing shared is touched: the nodes are
    // private until enqueue(chain) publishes them). Precondition: as enqueue(item).
    void link(Chain& chain, T* item) {
        Node* node = prepare(item);
        // relaxed: the chain is private; enqueue(chain)'s linking CAS (release) publishes
        // every node's next and item with it (written before it, by this thread).
        if (chain.last != nullptr) chain.last->next.store(node, std::memory_order_relaxed);
        else chain.first = node;
        chain.last = node;
        ++chain.size;
    }

    // enqueue(chain) — appends every item of `chain`, in order, and empties it. One link CAS
    // and one tail CAS for the whole chain; if the tail CAS loses, the append helps the tail
    // on to the chain's last node before it returns (append), so on return tail_ is at or
    // past every node of the chain, as after enqueue(item). Precondition: the thread is
    // bound, no context switch during the call.
    void enqueue(Chain& chain) {
        if (chain.first == nullptr) return;
        append(chain.first, chain.last, chain.size);
        chain = Chain{};
    }

    // dequeue — removes and returns the first item, or nullptr when empty (Fig. 6 DEQUEUE).
    // The returned item carries the retired dummy node in item->node. Precondition: the
    // thread is bound, no context switch happens during the call.
    T* dequeue() {
        detail::ProcessorSlot& self = detail::slot();
        for (;;) {
            Node* head = protect(head_, self.hp1);
            // acquire: pairs with the linking CAS (release), so next->item and the item's
            // fields written before the enqueue are visible.
            COOP_HOOK(dequeue_read_next, head);
            Node* next = head->next.load(std::memory_order_acquire);
            if (next == nullptr) {
                // release: as in enqueue (our read of head->next precedes a reuse of head).
                // hp2 too: a failed validation below may have left it set, and a stale
                // hazard would keep its node out of reuse (pooled) indefinitely.
                self.hp1.store(nullptr, std::memory_order_release);
                self.hp2.store(nullptr, std::memory_order_release);
                return nullptr;
            }
            COOP_HOOK(dequeue_before_hp2);
            // seq_cst exchange: publication needs store->load order before the validation.
            self.hp2.exchange(next, std::memory_order_seq_cst);
            // seq_cst: the validation load of the Dekker pair (hazard.hpp acquire). If head_
            // is still `head`, `next` has not been unlinked yet (it can be unlinked only after
            // head_ moves past `head`, and `head` cannot return: hp1 keeps it from reuse), so
            // from here on no processor can reuse or free `next`.
            if (head_.load(std::memory_order_seq_cst) != head)
                continue;
            // Fig. 6 line 35, only when needed: the tail must not stay on the node we unlink.
            // seq_cst load and seq_cst CAS (both orders): whichever of them sees tail_ off
            // `head` puts the tail's move before our unlinking CAS in the seq_cst order. An
            // enqueuer that validated hp1 == `head` as the tail read tail_ before that move,
            // so its hazard store precedes the scan of whoever later reuses `head` (the
            // argument in hazard.hpp acquire, for hp1 on a tail). On x86 the load is a plain
            // mov and the CAS is locked whatever its orders, so this costs nothing.
            Node* tail = tail_.load(std::memory_order_seq_cst);
            if (tail == head)
                tail_.compare_exchange_strong(tail, next, std::memory_order_seq_cst,
                                              std::memory_order_seq_cst);
            // relaxed: next->item was published by the link we read with acquire above, and
            // next cannot be reused while hp2 protects it.
            COOP_HOOK(dequeue_read_item, next);
            QueueItem* item = next->item.load(std::memory_order_relaxed);
            // seq_cst: the unlinking CAS that acquire()'s argument orders hazard scans after.
            if (head_.compare_exchange_strong(head, next, std::memory_order_seq_cst,
                                              std::memory_order_relaxed)) {
                // release: our reads of head and next precede their reuse (see enqueue).
                self.hp1.store(nullptr, std::memory_order_release);
                self.hp2.store(nullptr, std::memory_order_release);
                item->node = head;  // errata 2: the old head (the dummy we retired)
                return static_cast<T*>(item);
            }
        }
    }

    // empty — whether the queue looked empty: a hint, stale as soon as it returns. Needs no
    // bound processor and no hazard pointer: it compares two pointers and reads nothing
    // through them.
    //
    // What it means ("empty" for a queue whose tail may lag): an item whose enqueue() or
    // enqueue(chain) returned before the call (happens-before) and that is still queued
    // when the head is read makes it false. An enqueue still in flight may or may not be
    // seen; a "false" may be stale (the items taken meanwhile).
    // Why: (1) a returned enqueue has left tail_ at or past its last node (for a chain:
    // append's help loop; a lagging tail can only be inside a chain whose append has not
    // returned yet, or one node behind a single enqueue in flight); (2) the tail is read
    // FIRST: its value `t` is then at or past every such item's node, and the head read
    // after it is before any item still queued; the two can only be equal if the head
    // reached `t`, i.e. those items were taken. Reading the head first would be wrong: a
    // processor that dequeues the head's successor and re-enqueues that item between the
    // two loads gets the retired dummy as its node (dequeue hands it over), so the tail
    // becomes the address just read as the head while items are still queued (test
    // QueueEmpty.ReenqueueBetweenTheLoadsIsNotEmpty).
    //
    // Why every caller is then right (they all use it as "is a take worth trying"):
    // - GlobalQueues::take / GlobalQueueAlgorithm's takes: a false "empty" can only be an
    //   enqueue still in flight; its enqueuer then notifies (park.hpp's waker half) or is
    //   the caller itself, so the item is not left behind; a false "not empty" only costs
    //   a dequeue() returning nullptr.
    // - has_ready() / any() (the parker's re-check, after park.hpp's fence): every item
    //   whose enqueue precedes the waker's fence is seen, which is the Dekker pair (a) of
    //   park.hpp; before the chain help this failed for the items behind a lagging tail.
    // - refill() and the every-61st look: as take.
    // - The worker's exit at stop (stopping && !has_ready()): as has_ready; an enqueue in
    //   flight belongs to a processor that is not in its idle loop, which looks again
    //   itself before it exits.
    bool empty() const noexcept {
        // seq_cst (both loads): the argument above orders the tail load, the head load and
        // the queue's seq_cst CASes on head_/tail_ in one total order (and a returned
        // enqueue's CASes, which happen-before the call, before both loads); on x86 a plain
        // mov each. The tail first: see (2).
        Node* const tail = tail_.load(std::memory_order_seq_cst);
        COOP_HOOK(empty_between_loads);
        return head_.load(std::memory_order_seq_cst) == tail;
    }

    // check_quiescent — test helper: walks the list from the head (at most `limit` nodes)
    // and returns the number of items, or -1 if the list is corrupt (a cycle or longer than
    // `limit`, the tail not on the list, the tail not the last node). Precondition: no
    // operation on this queue is in flight.
    long check_quiescent(long limit = 1L << 40) const noexcept {
        Node* tail = tail_.load(std::memory_order_acquire);
        Node* node = head_.load(std::memory_order_acquire);
        bool tail_seen = false;
        long items = 0;
        for (;;) {
            if (node == tail)
                tail_seen = true;
            Node* next = node->next.load(std::memory_order_acquire);
            if (next == nullptr)
                break;
            if (++items > limit)
                return -1;
            node = next;
        }
        return tail_seen && node == tail ? items : -1;
    }

private:
    // prepare — `item`'s node (hazard.hpp acquire: its own, unless still hazardous) with
    // item set and next cleared.
    static Node* prepare(T* item) {
        QueueItem* const qi = item;
        Node* node = detail::acquire(qi->node);
        qi->node = nullptr;
        if (node == nullptr) [[unlikely]]
            node = detail::allocate_node();
        // relaxed: both are published by the release CAS that links the node (append).
        node->item.store(qi, std::memory_order_relaxed);
        node->next.store(nullptr, std::memory_order_relaxed);
        return node;
    }

    // append — links the private list first..last (`nodes` nodes, last->next == nullptr)
    // behind the last node (Fig. 6 ENQUEUE lines 8-20, for a list instead of one node) and
    // returns once tail_ is at or past `last`.
    void append(Node* first, Node* last, std::size_t nodes) {
        detail::ProcessorSlot& self = detail::slot();
        Node* tail = protect(tail_, self.hp1);
        for (;;) {
            Node* expected = nullptr;
            // success seq_cst (at least release): publishes the nodes' item/next and the
            // items' own fields to the dequeuer that reads this link with acquire (for a
            // chain: every node's next was written before this CAS by this thread, so a
            // dequeuer that acquired this link sees them too). Failure acquire:
            // `expected` (the successor another processor linked) goes into tail_ below and
            // our own protect() then re-reads it from there and dereferences it; reading our
            // own store does not synchronise, so this load must acquire the linker's
            // initialisation of that node (TSan found the race with relaxed).
            if (tail->next.compare_exchange_strong(expected, first, std::memory_order_seq_cst,
                                                   std::memory_order_acquire))
                break;
            // The tail lags: help it forward (Fig. 6 line 15), then protect the new tail.
            // seq_cst: a tail CAS is part of the order the hazard validation relies on.
            tail_.compare_exchange_strong(tail, expected, std::memory_order_seq_cst,
                                          std::memory_order_relaxed);
            tail = protect(tail_, self.hp1);
        }
        if constexpr (Policy::kClearHp1BeforeTailCas)
            self.hp1.store(nullptr, std::memory_order_release);  // the printed line 18 (bug)
        COOP_HOOK(enqueue_before_tail_cas, &tail_, tail);
        // seq_cst: the tail moving past `tail` must precede (in the seq_cst order) the dequeue
        // that later unlinks `tail`, which validation in other processors relies on. It may
        // fail: another processor already helped the tail forward by one node (to `first`).
        if (!tail_.compare_exchange_strong(tail, last, std::memory_order_seq_cst,
                                           std::memory_order_relaxed) &&
            first != last)
            help_tail_to(last, nodes, self);
        if constexpr (!Policy::kClearHp1BeforeTailCas)
            // release: our reads of `tail` happen-before a reuse of it by the processor that
            // sees the cleared slot (its seq_cst load acquires). Errata 1: only now, after the
            // CAS above can no longer act on a recycled `tail`.
            self.hp1.store(nullptr, std::memory_order_release);
    }

    // help_tail_to — after a chain's tail CAS failed: moves tail_ on, one node per round,
    // until it is at or past `last`, the chain's last node (empty()'s guarantee needs it).
    // When called, tail_ is at or past the chain's first node: our link made `first` the
    // successor of the node we validated as the tail, and the tail CAS failed, so someone
    // moved tail_ off that node, which can only be to `first` (a tail move goes to the
    // successor) and then onwards.
    // Each round: protect the tail `t` (hp1: `t` cannot be reused while we read t->next and
    // CAS; validated, so `t` is on the list, at or past the head); if t == last, done;
    // read n = t->next; if null, `t` is the list's last node, and no node of the chain
    // before `last` is (each has its successor, written by link() and unchanged until the
    // node is reused, which hp1 prevents), so the tail is past `last`: done. Otherwise
    // CAS(tail_, t, n): whether it succeeds or fails (someone else moved the tail off `t`),
    // the tail is now past `t`. So after r rounds it is at least r nodes past `first`, and
    // after nodes-1 rounds at or past `last`: the loop is bounded by the chain's length,
    // whatever other processors do. A reincarnation of a chain node's address further on
    // (dequeued, retired, reused, enqueued again) only ends the loop where the tail is
    // past `last` anyway, as the retiring dequeue moved the tail past it first.
    void help_tail_to(Node* last, std::size_t nodes, detail::ProcessorSlot& self) {
        for (std::size_t round = 1; round < nodes; ++round) {
            Node* t = protect(tail_, self.hp1);
            if (t == last) return;
            // acquire: pairs with the linking CAS (release) of whoever linked `n` (past our
            // chain: another enqueuer), so n's next and item are visible when the next round
            // protects `n` from tail_ and reads n->next (as append's failure load).
            Node* n = t->next.load(std::memory_order_acquire);
            if (n == nullptr) return;
            // seq_cst: a tail CAS is part of the order the hazard validation relies on (as
            // the helping CAS in append and the dequeue's).
            tail_.compare_exchange_strong(t, n, std::memory_order_seq_cst, std::memory_order_relaxed);
        }
    }

    // protect — reads `from`, publishes the value in `hp` and returns it once a re-read of
    // `from` confirms it (Fig. 6 lines 9-12 and 23-26).
    static Node* protect(const std::atomic<Node*>& from, std::atomic<Node*>& hp) noexcept {
        // relaxed: the value is only a candidate; the seq_cst re-read validates it.
        Node* node = from.load(std::memory_order_relaxed);
        for (;;) {
            COOP_HOOK(protect_before_publish);
            // seq_cst exchange (xchg on x86, errata 3): the hazard store must be ordered
            // before the re-read below; a plain or release store may be reordered after it
            // (store buffering), and a concurrent acquire() could then miss it.
            hp.exchange(node, std::memory_order_seq_cst);
            // seq_cst: the other half of the pairing (see hazard.hpp acquire).
            Node* again = from.load(std::memory_order_seq_cst);
            if (again == node)
                return node;
            node = again;
        }
    }

    // Each on a line of its own (dequeuers write head_, enqueuers tail_); the alignment also
    // pads sizeof(Queue) to two lines, so neighbouring objects stay off tail_'s line.
    alignas(kCacheLine) std::atomic<Node*> head_{nullptr};  // the dummy
    alignas(kCacheLine) std::atomic<Node*> tail_{nullptr};  // last node or behind it (a lag)
};

}  // namespace coop
