// locks_example.cpp — the locks/ library's examples (locks/README.md, the header comments
// of locks/abortable.hpp, locks/all.hpp and locks/owner_guard.hpp), compiled and run by
// tests/docs. tests/docs/check_examples.py fails when an example there is not in here.
#include <cstdio>
#include <thread>

#include "locks/all.hpp"
#include "locks/owner_guard.hpp"

namespace {
int shared = 0;
void use() { ++shared; }
}  // namespace

int main() {
    {  // locks/README.md, locks/abortable.hpp
        locks::CalLock lock(locks::LockOptions{.nodes = 4});
        if (auto t = lock.try_lock_for(locks::Patience::micros(512))) {   // acquired
            /* critical section */
            lock.unlock(t);                                                // t: what release needs
        } else { /* timed out */ }
    }
    {  // locks/all.hpp
        const bool found = locks::AllLocks::with("cal", [&]<class L>() {
            L lock(locks::LockOptions{});
            if (auto t = lock.try_lock_for(locks::Patience::infinite())) lock.unlock(t);
        });
        if (!found) return 1;
    }
    {  // locks/owner_guard.hpp
        locks::OwnerGuard g;
        std::thread other([&] {
            g.nonowner_lock(); use(); g.nonowner_unlock();             // any other thread
        });
        bool slow = g.owner_lock(); use(); g.owner_unlock(slow);   // owner
        other.join();
        if (shared != 2) return 1;
    }
    std::puts("locks examples ok");
    return 0;
}
