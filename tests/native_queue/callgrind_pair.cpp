// callgrind_pair.cpp — a loop program for counting the instructions of one enqueue+dequeue
// pair of coop::Queue on one thread (not a test: the machine has no hardware counters).
//
//   valgrind --tool=callgrind --callgrind-out-file=cg.out build/queue/tests/native_queue/native_queue_callgrind
//   callgrind_annotate --inclusive=yes cg.out | grep one_
//
// Inclusive counts of one_pair / one_enqueue / one_dequeue divided by kPairs are the cost of
// one pair / enqueue / dequeue. An argument N > 1 binds N processors first, to show the
// cost of the hazard scan (it grows with the highest bound processor index).
#include <cstdlib>

#include "coop/queue.hpp"

namespace {

struct Job : coop::QueueItem {
    int id = 0;
};

coop::Queue<Job>* g_queue = nullptr;

[[gnu::noinline]] void one_pair(Job* j) {
    g_queue->enqueue(j);
    Job* r = g_queue->dequeue();
    asm volatile("" : : "r"(r) : "memory");
}
[[gnu::noinline]] void one_enqueue(Job* j) { g_queue->enqueue(j); }
[[gnu::noinline]] Job* one_dequeue() { return g_queue->dequeue(); }

}  // namespace

int main(int argc, char** argv) {
    constexpr int kPairs = 100'000;
    const unsigned processors = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 1;
    if (processors > 1)
        coop::bind_processor(processors - 1);
    coop::bind_processor(0);
    coop::Queue<Job> q;
    g_queue = &q;
    Job jobs[4];
    for (auto& j : jobs)
        q.enqueue(&j);  // a ready queue with 4 activities
    for (int i = 0; i < kPairs; ++i) {
        Job* j = q.dequeue();
        one_pair(j);
        q.enqueue(j);
    }
    for (int i = 0; i < kPairs; ++i)
        one_enqueue(one_dequeue());
    for (int i = 0; i < 4; ++i)
        coop::release(q.dequeue());
    return 0;
}
