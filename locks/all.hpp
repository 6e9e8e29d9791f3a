// all.hpp — every abortable lock of the library, and AllLocks, their list in report order.
//
// AllLocks::with(name, fn) calls fn.template operator()<L>() for the lock type named `name`
// (a fold over the list, not a chain of string comparisons written by hand) and returns
// false when no lock has that name.
//
// Example (compiled: docs/examples/locks_example.cpp):
//   const bool found = locks::AllLocks::with("cal", [&]<class L>() {
//       L lock(locks::LockOptions{});
//       if (auto t = lock.try_lock_for(locks::Patience::infinite())) lock.unlock(t);
//   });
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "locks/abortable.hpp"
#include "locks/cal.hpp"
#include "locks/pthread_locks.hpp"
#include "locks/scott_clh_nb.hpp"
#include "locks/tas_backoff.hpp"

namespace locks {

// LockList — a list of lock types.
template <class... Ls>
struct LockList {
    // names — the locks' names, in order.
    static std::vector<std::string> names() { return {std::string(Ls::name)...}; }
    // with — call fn.template operator()<L>() for the lock named `name`; false if none.
    template <class F>
    static bool with(std::string_view name, F&& fn) {
        return ((Ls::name == name ? (fn.template operator()<Ls>(), true) : false) || ...);
    }
};

// AllLocks — the algorithms of Marathe, Moir and Shavit (IPDPS 2006) and the OS references.
using AllLocks = LockList<TasBackoff, ScottClhNbLock, ScottClhNbOptLock, CalLock, CalOptLock, PthreadTimedlock,
                          PthreadMutex>;

static_assert(AbortableLock<TasBackoff>);
static_assert(AbortableLock<ScottClhNbLock>);
static_assert(AbortableLock<ScottClhNbOptLock>);
static_assert(AbortableLock<CalLock>);
static_assert(AbortableLock<CalOptLock>);
static_assert(AbortableLock<PthreadTimedlock>);
static_assert(AbortableLock<PthreadMutex>);

}  // namespace locks
