// queues_example.cpp — the header examples of coop's queues, compiled and run
// (tests/docs/check_examples.py finds each block here, line for line): coop/include/coop/queue.hpp,
// hazard.hpp, ws/local_queue.hpp and ws/parasail_queue.hpp. Exit 0 when every example did
// what its comment says.
#include <cstdio>
#include <thread>
#include <vector>

#include "coop/hazard.hpp"
#include "coop/queue.hpp"
#include "coop/src/ws/local_queue.hpp"
#include "coop/src/ws/parasail_queue.hpp"

namespace {

int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        std::fprintf(stderr, "queues_example: %s\n", what);
        ++failures;
    }
}

// coop/include/coop/queue.hpp
void queue_example() {
    struct Job : coop::QueueItem { int id; };
    coop::bind_processor(0);
    coop::Queue<Job> q;
    Job a;
    q.enqueue(&a);
    Job* j = q.dequeue();        // &a; a.node now holds the old dummy
    coop::release(j);            // before `a` is destroyed
    check(j == &a, "queue.hpp: dequeue gave another item");
}

// coop/include/coop/hazard.hpp
void hazard_example() {
    coop::bind_processor(0);             // once per OS thread that touches queues
    struct Job : coop::QueueItem { int x; };
    Job job;  coop::Queue<Job> q;  q.enqueue(&job);  Job* j = q.dequeue();
    coop::release(j);                    // before the item is freed: gives its node back
    check(j == &job, "hazard.hpp: dequeue gave another item");
}

// coop/src/ws/local_queue.hpp
void local_queue_example() {
    struct Job { int id; };
    coop::ws::LocalQueue<Job, 256> mine, theirs;         // one per processor
    std::vector<Job*> global;
    Job job{1};
    mine.push(&job, [&](Job* j) { global.push_back(j); });  // owner
    auto [next, inherits] = mine.pick();                    // owner
    Job* stolen = theirs.stealer().steal_into(mine, true, [] {});  // the thief (owner of `mine`)
    check(next == &job && global.empty(), "local_queue.hpp: pick did not give the pushed job");
    check(stolen == nullptr, "local_queue.hpp: stole from an empty ring");
    (void)inherits;
}

// coop/src/ws/parasail_queue.hpp
void parasail_queue_example() {
    struct Job { int id; };
    Job a{1}, b{2};
    coop::ws::ParasailQueue<Job> q;            // owned by one worker
    q.push_back(&a); q.push_front(&b);         // owner
    Job* mine = q.pop_back();                  // owner: &a (LIFO)
    Job* theirs = q.stealer().steal();         // another worker: &b (FIFO end)
    check(mine == &a && theirs == &b, "parasail_queue.hpp: not LIFO for the owner, FIFO for a thief");
}

}  // namespace

int main() {
    // Each on its own OS thread, as coop binds one processor index per thread.
    for (auto* f : {queue_example, hazard_example, local_queue_example, parasail_queue_example}) std::thread(f).join();
    if (failures == 0) std::puts("queues_example: ok");
    return failures == 0 ? 0 : 1;
}
