// coop_sketch.cpp — the sketch at the top of coop/include/coop/coop.hpp, compiled and run
// (tests/docs/check_examples.py finds it here line for line). Exit 0 when the 100 activities
// each counted once under the mutex.
#include <cstdio>
#include <mutex>
#include <vector>

#include <coop/coop.hpp>

int main() {
    long total = -1;
    coop::Runtime rt({.processors = 2});
    rt.run([] {                                  // main runs as an activity
        coop::Mutex m;  long n = 0;
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 100; ++i)
            ts.push_back(coop::spawn([&] { std::lock_guard g(m); ++n; }));
        for (auto& t : ts) t.join();             // blocks the activity, not the worker
    });                                          // returns when everything has finished
    // The sketch's count stays inside its lambda; count again, reporting it out.
    rt.run([&] {
        coop::Mutex m;  long n = 0;
        std::vector<coop::Thread> ts;
        for (int i = 0; i < 100; ++i)
            ts.push_back(coop::spawn([&] { std::lock_guard g(m); ++n; }));
        for (auto& t : ts) t.join();
        total = n;
    });
    std::printf("coop_sketch: %ld\n", total);
    return total == 100 ? 0 : 1;
}
