// hazard.hpp — per-processor hazard pointers and node pools for coop's lock-free queue.
//
// Citation: F. Negele, F. Friedrich, S. Oh, B. Egger, "On the Design and Implementation of
// an Efficient Lock-Free Scheduler", Sect. 4.2-4.3, Fig. 4 (data structures: ITEM, NODE,
// PROCESSOR {hp1, hp2, pool1, pool2}, the global PROCESSORS array) and Fig. 5 (the wait-free
// ACQUIRE and RELEASE). Hazard pointers after M. M. Michael, "Hazard Pointers: Safe Memory
// Reclamation for Lock-Free Objects", IEEE TPDS 2004. One correction to the
// paper (docs/native-runtime.md, errata 3): a hazard pointer must be published with a full
// fence.
//
// Design summary
// - Hazard pointers belong to *processors* (OS threads that run activities), not to
//   activities: no context switch happens inside a queue operation, so at most N operations
//   are in flight, one per processor. The scan in acquire() therefore costs O(N) with N the
//   highest bound processor index + 1, independent of the number of activities.
// - Every processor slot holds two hazard pointers (hp1 protects a queue's head or tail,
//   hp2 the head's successor) and two pooled nodes, all in one cache line of its own.
// - A node is never put on a retire list. A dequeue hands the retired dummy node to the
//   item it returns (QueueItem::node); the item's next enqueue reuses it through acquire().
//   If that node is still hazardous for processor p's hpK, acquire() *exchanges* it with
//   p's poolK and goes on with the node it got back; an empty pool gives nullptr, and the
//   caller allocates. Hence all nodes = items holding a node + items queued + one dummy per
//   queue + at most 2N pooled nodes (the paper's "T + 2N", counting each queue's dummy).
//
// Ownership rules
// - hp1/hp2 of slot i are written only by the thread bound to index i (bind_processor);
//   every thread reads them (acquire() scans them).
// - pool1/pool2 of every slot are read-modify-written by *any* processor, always with one
//   atomic exchange: a node is, at every instant, either in exactly one pool slot or owned
//   by exactly one acquire() call. That is why a plain load+store is not enough: two
//   processors could both take the same pooled node, or one could overwrite (leak) a node
//   another just put there. The exchange makes "put mine, take yours" one indivisible step.
// - QueueItem::node is owned by whoever owns the item (an item is in at most one queue at a
//   time, and the caller of enqueue/dequeue owns it outside the queue). It is a plain
//   pointer; the handover of the item itself orders it (see queue.hpp).
// - A node returned by acquire() is owned by the caller: it is in no queue, no pool, and no
//   processor holds a (validated) hazard pointer to it.
//
// Example (compiled: docs/examples/queues_example.cpp):
//   coop::bind_processor(0);             // once per OS thread that touches queues
//   struct Job : coop::QueueItem { int x; };
//   Job job;  coop::Queue<Job> q;  q.enqueue(&job);  Job* j = q.dequeue();
//   coop::release(j);                    // before the item is freed: gives its node back
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

#include "config.hpp"
#include "slab.hpp"

namespace coop {

// kMaxProcessors — the size of the PROCESSORS array (Fig. 4): the largest processor index
// plus one that bind_processor() accepts.
inline constexpr unsigned kMaxProcessors = 256;

// kCacheLine — the padding unit that keeps two processors' slots on different lines.
inline constexpr std::size_t kCacheLine = 64;
static_assert(kCacheLine == internal::kSlabAlign, "slabs are aligned to cache lines");

struct QueueItem;

// Node — a link of a queue's list (Fig. 4 NODE). `next` is set once from nullptr while the
// node is in a queue, by a CAS that concurrent enqueuers race for (so it is atomic); `item`
// is written before the node is published and read after the acquire that sees the
// publication, so it could be plain: it is an atomic accessed with relaxed orders (plain
// movs) only to keep every access to a node's fields atomic. No processor dereferences a node
// before validating its hazard pointer (queue.hpp protect()).
struct Node {
    std::atomic<Node*> next{nullptr};
    std::atomic<QueueItem*> item{nullptr};
};

// QueueItem — base of anything that is enqueued (activities, waiters). An item is in at most
// one queue at a time; outside a queue it carries the node its next enqueue will use
// (the dummy that its dequeue retired, Sect. 4.3), or nullptr.
struct QueueItem {
    Node* node = nullptr;
};

namespace detail {

// ProcessorSlot — one entry of Fig. 4's PROCESSORS array, alone on its cache line.
struct alignas(kCacheLine) ProcessorSlot {
    std::atomic<Node*> hp1{nullptr};    // protects a queue's head (dequeue) or tail (enqueue)
    std::atomic<Node*> hp2{nullptr};    // protects the head's successor (dequeue)
    std::atomic<Node*> pool1{nullptr};  // a node that was hazardous through some hp1
    std::atomic<Node*> pool2{nullptr};  // a node that was hazardous through some hp2
};

// g_processors — the PROCESSORS array.
inline ProcessorSlot g_processors[kMaxProcessors];

// g_bound — highest bound processor index + 1; acquire() scans [0, g_bound).
inline std::atomic<unsigned> g_bound{0};

// g_nodes_live — nodes allocated and not yet freed (only the rare paths touch it).
inline std::atomic<std::ptrdiff_t> g_nodes_live{0};

// kUnbound — processor index of a thread that has not called bind_processor().
inline constexpr unsigned kUnbound = ~0u;

// t_index — the calling thread's processor index (constant-initialised: no TLS wrapper).
// Read only through slot() and processor_index() (see slot()).
inline thread_local unsigned t_index = kUnbound;

[[noreturn, gnu::cold, gnu::noinline]] inline void unbound_processor() {
    std::fputs("coop: a queue was used by a thread that did not call bind_processor()\n",
               stderr);
    std::abort();
}

// Thread-locals and migrating activities. An activity may continue on another OS thread
// after any switch, and a compiler may compute a thread_local's address once per function
// and keep it across a call (both g++ and clang -O3 do for code compiled -fPIC, where the
// address comes from __tls_get_addr; clang did in units/ before it added accessors of its own).
// Inlined into a function that blocks between two queue operations (a Mutex, Semaphore or
// CondVar in a loop, Queue code in user functions), a direct read of t_index or t_nodes
// would then use the FIRST thread's hazard slot and node cache after migrating (two
// processors on one slot; a non-atomic cache written by two threads).
// So every read of them goes through a function that is never inlined: slot(),
// processor_index(), allocate_node(), free_node() (and bind_processor(), which only runs on a
// thread before it runs activities). None of them switches, so inside each call the address
// is the calling thread's. The empty volatile asm keeps the optimisers from proving such a
// function free of side effects (clang would otherwise infer readnone for a function that
// only returns a TLS address, and may then reuse one call's result after another call).
// Cost: one call + return per queue operation (the index is read once per enqueue/dequeue;
// measured with callgrind, docs/native-runtime.md). tests/native/test_tls_migration.cpp
// forces a migration and checks the slot and index.
#define COOP_TLS_ACCESSOR [[gnu::noinline]]
#define COOP_TLS_OPAQUE() asm volatile("")

// slot — the calling processor's PROCESSORS entry; aborts if the thread is not bound.
// Not inlined: see above.
COOP_TLS_ACCESSOR inline ProcessorSlot& slot() noexcept {
    COOP_TLS_OPAQUE();
    const unsigned index = t_index;
    if (index >= kMaxProcessors) [[unlikely]]
        unbound_processor();
    return g_processors[index];
}

// Node memory: the slab allocator of slab.hpp (the same one as descriptors'), in every build,
// sanitizers included (ASan poisons a free node except its link). Per-thread caches; a
// dying thread's free nodes go to the shared list. A fresh node was ~200 instructions of
// glibc malloc and a first-touch page fault per 128 nodes, one node per fresh activity, so
// about a third of a create in a fresh process (docs/native-runtime.md). A node given to
// free_node() is no longer used by anybody (acquire()'s guarantee), exactly as before a
// delete; reusing its memory for another node is what malloc would do.
struct NodeTraits {
    static constexpr std::size_t kBlock = sizeof(Node);
    static constexpr std::size_t kLinkOffset = 0;  // Node::next
    static constexpr std::size_t kKeep = sizeof(void*);
    static constexpr std::size_t kSlabFirst = std::size_t{64} << 10;  // 4096 nodes
    static constexpr std::size_t kSlabMax = std::size_t{64} << 10;
    static constexpr std::size_t kCacheMax = 4096;
    static constexpr std::size_t kBatch = 2048;
    static internal::SlabShared& shared() {
        static auto* s = new internal::SlabShared;  // outlives every thread (exit flushes use it)
        return *s;
    }
};
static_assert(sizeof(Node) == 16 && offsetof(Node, next) == 0);

// NodeCache — one thread's node cache; its free nodes go to the shared list at thread exit.
struct NodeCache : internal::BlockCache<NodeTraits> {
    ~NodeCache() { flush(0); }
};
// t_nodes — used only inside allocate_node() and free_node() (see slot()).
inline thread_local NodeCache t_nodes;

// touch_node_cache — constructs the calling thread's t_nodes now. A thread_local with a
// destructor registers it on its thread's first use (__cxa_thread_atexit), and glibc ends the
// process when it cannot allocate the record for it ("Fatal glibc error: failed to register
// TLS destructor: out of memory"); a worker's first free_node may come at any time, memory
// exhausted meanwhile. So every worker calls this when it starts (worker_main), while it can
// still allocate; a thread outside the runtime that uses queues makes the same first use at
// its first allocate_node/free_node. Not inlined: it reaches t_nodes (see slot()).
COOP_TLS_ACCESSOR inline void touch_node_cache() noexcept {
    COOP_TLS_OPAQUE();
    NodeCache* cache = &t_nodes;        // odr-use: runs t_nodes' initialisation on this thread
    asm volatile("" : : "r"(cache));  // ... which the optimiser may not drop
}

// allocate_node — a fresh node (next and item nullptr), counted in nodes_live(). Not inlined:
// it reaches t_nodes (see slot()).
COOP_TLS_ACCESSOR inline Node* allocate_node() {
    COOP_TLS_OPAQUE();
    auto* node = static_cast<Node*>(t_nodes.allocate());
    // relaxed stores on the reused memory (its atomics are never accessed non-atomically);
    // relaxed: the node is published later by the queue's release CAS.
    node->next.store(nullptr, std::memory_order_relaxed);
    node->item.store(nullptr, std::memory_order_relaxed);
    // relaxed: a statistic; no other memory is published through the counter.
    g_nodes_live.fetch_add(1, std::memory_order_relaxed);
    return node;
}

// free_node — frees a node the caller owns (returned by acquire(), never a pooled one). Not
// inlined: it reaches t_nodes (see slot()).
COOP_TLS_ACCESSOR inline void free_node(Node* node) noexcept {
    COOP_TLS_OPAQUE();
    COOP_ASSERT(node != nullptr, "free_node(nullptr)");
    t_nodes.free(node);
    // relaxed: a statistic (see allocate_node).
    g_nodes_live.fetch_sub(1, std::memory_order_relaxed);
}

// acquire — Fig. 5 ACQUIRE. `node` is owned by the caller (an item's node, in no queue and
// no pool). Returns a node that no processor protects (the same one, or one swapped out of
// a pool), owned by the caller, or nullptr when a swap emptied a pool.
//
// Why the result is safe to reuse or free (Michael's argument, per processor): a processor
// dereferences a node only after publishing it in hp1/hp2 with a sequentially consistent
// exchange and then re-reading (seq_cst) the queue pointer it came from. The node we hold
// was unlinked by a seq_cst CAS that happens-before this scan (through the item handover).
// In the single total order of seq_cst operations either that processor's hazard store
// precedes our load of its slot (we see it and swap the node away), or our load precedes
// the store, and then its re-read follows the unlinking CAS and fails validation, so it
// never dereferences the node. For a hazard on a queue's *tail* the re-read is of tail_;
// the dequeue that unlinks a node first sees (seq_cst) tail_ moved past it, so that move
// also precedes the unlinking CAS and the scan. The loads below are seq_cst for that
// argument; on x86 a seq_cst load is a plain mov, so the scan has no locked instruction.
//
// Why it terminates: each swap leaves a node that is hazardous for p.hpK in p.poolK, and
// pool entries are pairwise different and different from the held node, so while the
// hazard pointers stand still at most 2N swaps happen (the paper's wait-freedom argument);
// in practice nearly every call finds no hazard at all and swaps nothing. After a swap
// the scan restarts at 0: the node got from a pool may be protected by a processor that
// was already passed.
inline Node* acquire(Node* node) noexcept {
    if (node == nullptr)
        return nullptr;
    // seq_cst: orders the bound load after the unlinking CAS, so a processor bound later
    // publishes its hazards after that CAS and fails validation (see above).
    const unsigned bound = g_bound.load(std::memory_order_seq_cst);
    for (unsigned i = 0; i < bound; ++i) {
        ProcessorSlot& p = g_processors[i];
        std::atomic<Node*>* pool;
        // seq_cst loads: the Dekker pairing with the publishing exchange (see above); they
        // also acquire the owner's reads of the node that preceded its release-clear.
        if (node == p.hp1.load(std::memory_order_seq_cst))
            pool = &p.pool1;
        else if (node == p.hp2.load(std::memory_order_seq_cst))
            pool = &p.pool2;
        else
            continue;
        // acq_rel: release hands our node to the next taker of the pool slot; acquire takes
        // the previous putter's writes, so that freeing or reusing the node we get is ordered
        // after them (what TSan checks).
        node = pool->exchange(node, std::memory_order_acq_rel);
        if (node == nullptr)
            return nullptr;
        i = ~0u;  // restart the scan at 0 (++i wraps it)
    }
    return node;
}

}  // namespace detail

// bind_processor — the calling OS thread becomes processor `index` (< kMaxProcessors) for
// hazard pointers and pools. Every thread that touches a queue calls it once first. Two
// threads must never be bound to the same index at the same time (they would overwrite
// each other's hazard pointers). A thread may re-bind (tests do, to act as another
// processor), but only between queue operations.
inline void bind_processor(unsigned index) {
    if (index >= kMaxProcessors) {
        std::fprintf(stderr, "coop: bind_processor(%u): the limit is %u processors\n", index,
                     kMaxProcessors);
        std::abort();
    }
    detail::t_index = index;
    // seq_cst: raising the bound precedes (in the seq_cst order) every hazard store this
    // processor makes afterwards; see detail::acquire.
    unsigned bound = detail::g_bound.load(std::memory_order_seq_cst);
    while (bound <= index &&
           !detail::g_bound.compare_exchange_weak(bound, index + 1, std::memory_order_seq_cst)) {
    }
}

// processor_index — the calling thread's processor index (detail::kUnbound if unbound). Not
// inlined, so it is right after a migration too (see detail::slot()).
COOP_TLS_ACCESSOR inline unsigned processor_index() noexcept {
    COOP_TLS_OPAQUE();
    return detail::t_index;
}

// release — Fig. 5 RELEASE: gives the item's node back before the item is freed. The
// caller owns the item (it is in no queue). Frees the node, or a pooled one if the item's
// node is still hazardous (then the hazardous node stays pooled). Wait-free.
inline void release(QueueItem* item) noexcept {
    Node* node = detail::acquire(item->node);
    item->node = nullptr;
    if (node != nullptr)
        detail::free_node(node);
}

// nodes_live — nodes currently allocated by all queues (dummies, queued, carried by items,
// pooled); for tests of the "items + 2N" bound.
inline std::size_t nodes_live() noexcept {
    // relaxed: a statistic read; callers that need an exact figure call it when quiescent.
    return static_cast<std::size_t>(detail::g_nodes_live.load(std::memory_order_relaxed));
}

// fill_pools — gives every empty pool of processors [0, slots) a fresh node (throws
// std::bad_alloc). A runtime calls it when it starts: acquire() returns nullptr only when it
// swapped its node into an EMPTY pool, and pools are emptied only by drain_pools(); with
// every pool that a processor of the runtime can use filled, an enqueue of an item that holds
// its node never allocates (Queue::prepare), so the scheduler's noexcept enqueues cannot fail
// for lack of memory. A fresh node protects nothing and no processor
// protects it, so handing it out of a pool later is as safe as handing out any pooled node.
inline void fill_pools(unsigned slots) {
    for (unsigned i = 0; i < slots; ++i) {
        for (auto* pool : {&detail::g_processors[i].pool1, &detail::g_processors[i].pool2}) {
            // relaxed: a hint; the CAS below decides.
            if (pool->load(std::memory_order_relaxed) != nullptr) continue;
            Node* fresh = detail::allocate_node();
            Node* expected = nullptr;
            // release: the fresh node's initialised fields go with it to the next taker, whose
            // exchange (acq_rel, acquire()) reads this value.
            if (!pool->compare_exchange_strong(expected, fresh, std::memory_order_release,
                                               std::memory_order_relaxed))
                detail::free_node(fresh);  // filled meanwhile
        }
    }
}

// drain_pools — frees every pooled node that no processor protects; the ones still
// protected go back to a pool. Safe at any time (each node is taken by exchange); meant for
// tests and shutdown, so that nodes_live() counts only nodes in queues and items.
inline void drain_pools() noexcept {
    const unsigned bound = detail::g_bound.load(std::memory_order_seq_cst);
    for (unsigned i = 0; i < bound; ++i) {
        for (auto* pool : {&detail::g_processors[i].pool1, &detail::g_processors[i].pool2}) {
            // acq_rel: as in acquire(); the node taken is then owned by this call.
            Node* node = detail::acquire(pool->exchange(nullptr, std::memory_order_acq_rel));
            if (node != nullptr)
                detail::free_node(node);
        }
    }
}

}  // namespace coop
