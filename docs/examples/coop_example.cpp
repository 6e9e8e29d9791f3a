// coop_example.cpp — coop on its own (no harness): a bounded buffer between a producer and
// consumers, with coop::Mutex and coop::CondVar, on all cores.
//
//   cmake --build build --target coop_example && build/coop/coop_example
#include <cstdio>
#include <deque>
#include <vector>

#include <coop/coop.hpp>

int main() {
    coop::Runtime runtime;  // one worker per core
    long total = 0;
    runtime.run([&] {
        coop::Mutex m;
        coop::CondVar not_empty, not_full;
        std::deque<long> buffer;
        constexpr std::size_t kCapacity = 8;
        constexpr long kItems = 100000;
        constexpr int kConsumers = 4;

        coop::Thread producer = coop::spawn([&] {
            for (long i = 1; i <= kItems + kConsumers; ++i) {
                std::lock_guard<coop::Mutex> lock(m);
                not_full.wait(m, [&] { return buffer.size() < kCapacity; });
                buffer.push_back(i <= kItems ? i : 0);  // 0: stop
                not_empty.notify_one();
            }
        });
        std::vector<coop::Thread> consumers;
        std::vector<long> sums(kConsumers);
        for (int c = 0; c < kConsumers; ++c)
            consumers.push_back(coop::spawn([&, c] {
                for (;;) {
                    long v;
                    {
                        std::lock_guard<coop::Mutex> lock(m);
                        not_empty.wait(m, [&] { return !buffer.empty(); });
                        v = buffer.front();
                        buffer.pop_front();
                        not_full.notify_one();
                    }
                    if (v == 0) return;
                    sums[c] += v;
                    coop::check();  // an explicit "implicit" switch point
                }
            }));
        producer.join();
        for (auto& t : consumers) t.join();
        for (long s : sums) total += s;
    });
    const long want = 100000L * 100001L / 2;
    std::printf("%s: sum %ld (expected %ld) on %u processors\n", total == want ? "ok" : "WRONG", total, want,
                runtime.processors());
    return total == want ? 0 : 1;
}
