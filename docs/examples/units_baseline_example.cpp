// units_baseline_example.cpp — units/baseline.hpp's example, compiled and run (tests/docs,
// which expects it to print 10): the same program as units_example.cpp on the conventional
// baseline (a thread per message, a mutex per unit), here over the pthreads backend.
#include <cstdio>

#include "runtimes/pthreads/pthreads.hpp"
#include "units/baseline.hpp"

using B = coopbench::PthreadsBackend;
namespace baseline = units::baseline;
struct Account { long balance = 0; };

int main() {
    coopbench::RuntimeOptions options;
    options.processors = 2;
    B::Runtime rt(options);
    rt.run([] {
        baseline::System<B> sys;                            // inside B::Runtime::run
        baseline::Unit<B, Account> acct;
        auto f = sys.send(acct, [](Account& a, long x) { return a.balance += x; }, 5L);
        auto g = sys.send([](baseline::Future<B, long> v) { return v.get() * 2; }, f);  // free op
        long r = g.get();                                   // main: mutex + condition wait
        sys.join_all();                                     // every message thread
        std::printf("%ld\n", r);                            // 10
    });
}
