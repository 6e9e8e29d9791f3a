// queue.hpp — CONTRACT (to be implemented): the paper's unbounded lock-free queue.
// Negele et al. 2017, Figs. 4-6, with the errata of shared/papers/negele-errata.md.
//
// The API below is fixed (the scheduler is written against it); the implementation
// replaces this comment block with the citation, design summary, ownership rules, example.
#pragma once

namespace coop {

struct Node;

// QueueItem — base of anything that is enqueued (activities, waiters). An item is in at
// most one queue at a time; it carries the node it will use for its next enqueue.
struct QueueItem {
    Node* node = nullptr;
};

// bind_processor — the calling OS thread is processor `index` (< kMaxProcessors) for the
// hazard pointers and node pools; every thread that touches a queue calls it once first.
// unsigned processor_index();   // the calling thread's processor

// template <class T> class Queue {   // T derives from QueueItem
//   void enqueue(T* item);    // FIFO; no switch may happen during the call
//   T* dequeue();             // nullptr when empty
// };
// void release(QueueItem* item);   // Fig. 5 RELEASE: the item gives its node back

}  // namespace coop
