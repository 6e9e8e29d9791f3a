// callgrind_ring.cpp — a loop program for counting the instructions of the work-stealing
// ring's operations on one thread, beside coop's global Queue (not a test: the machine has
// no hardware counters; tests/native_queue/callgrind_pair.cpp is the Queue's own).
//
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/release/tests/native_ws/native_ws_callgrind
//   callgrind_annotate --inclusive=yes cg.out | grep ' one_'
//
// Inclusive counts of one_* divided by kOps are the cost of one operation. Locked
// instructions are counted by reading the disassembly of the same functions
// (objdump -d --no-show-raw-insn ... | grep -E 'lock|xchg'), printed by scripts/ring_callgrind.sh.
#include "coop/queue.hpp"
#include "coop/src/ws/local_queue.hpp"

namespace {

struct Job : coop::QueueItem {
    int id = 0;
};

using Ring = coop::ws::LocalQueue<Job, 256>;
Ring* g_ring = nullptr;
Ring* g_thief = nullptr;
coop::Queue<Job>* g_queue = nullptr;

auto no_overflow = [](Job*) {};

// The ring: push + pop (a yield that picks the oldest ready activity).
[[gnu::noinline]] Job* one_ring_push_pop(Job* j) {
    g_ring->push(j, no_overflow);
    return g_ring->pop();
}
// The ring: push_next + pick (a wake-up handed off through runnext).
[[gnu::noinline]] Job* one_ring_next_pick(Job* j) {
    g_ring->push_next(j, no_overflow);
    return g_ring->pick().item;
}
// A steal of half of a 4-item ring (2 items: one into the thief's ring, one returned).
[[gnu::noinline]] Job* one_ring_steal() { return g_ring->stealer().steal_into(*g_thief, false, [] {}); }
// The global queue: enqueue + dequeue (what `native` does per switch).
[[gnu::noinline]] Job* one_queue_pair(Job* j) {
    g_queue->enqueue(j);
    return g_queue->dequeue();
}

}  // namespace

int main() {
    constexpr int kOps = 100'000;
    coop::bind_processor(0);
    Ring ring, thief;
    coop::Queue<Job> q;
    g_ring = &ring;
    g_thief = &thief;
    g_queue = &q;
    Job jobs[4];
    for (auto& j : jobs) ring.push(&j, no_overflow);  // 4 ready activities
    for (int i = 0; i < kOps; ++i) {
        Job* j = ring.pop();
        ring.push(one_ring_push_pop(j), no_overflow);
    }
    for (int i = 0; i < kOps; ++i) {
        Job* j = ring.pop();
        ring.push(one_ring_next_pick(j), no_overflow);
    }
    for (int i = 0; i < kOps; ++i) {
        Job* a = one_ring_steal();             // takes 2 of 4
        Job* b = thief.pop();
        ring.push(a, no_overflow);
        ring.push(b, no_overflow);
    }
    for (auto& j : jobs) {
        ring.pop();
        q.enqueue(&j);
    }
    for (int i = 0; i < kOps; ++i) {
        Job* j = q.dequeue();
        q.enqueue(one_queue_pair(j));
    }
    for (int i = 0; i < 4; ++i) coop::release(q.dequeue());
    return 0;
}
