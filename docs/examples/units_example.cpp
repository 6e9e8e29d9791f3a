// units_example.cpp — units/README.md's example, compiled and run (tests/docs, which expects
// it to print 10): a unit's operation, a free operation receiving its future, and main
// waiting for the result. `acct` is declared after the Scope, so it is destroyed right after
// wait(g), before the Scope stops: allowed, since its last result was seen (the carrier
// publishes a result only after its last access to the unit).
#include <cstdio>

#include "coop/coop.hpp"
#include "units/units.hpp"

int main() {
    coop::Runtime rt({.processors = 2});
    rt.run([] {
        units::Scope scope(2);                              // carriers: one per processor
        struct Account { long balance = 0; };
        units::Unit<Account> acct;
        auto f = units::send(acct, [](Account& a, long x) { return a.balance += x; }, 5L);
        auto g = units::send([](units::Future<long> v) { return v.get() * 2; }, f);  // free op,
        long r = units::wait(g);                            // starts when f is resolved; main waits
        std::printf("%ld\n", r);                            // 10
    });
}
