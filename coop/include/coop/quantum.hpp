// quantum.hpp — coop's quantum: the paper's implicit switch check (Negele et al. 2017,
// Sect. 3.1: "sub [rcx+88], 10; jge skip; call Switch").
//
// Design summary
// - The quantum lives in one initial-exec thread-local counter per OS thread,
//   `coop_quantum_left`, not in the activity descriptor: an activity runs on one OS thread
//   between two switches, and every switch-in resets the counter to kDefaultQuantum
//   (switch_to, Fig. 1 "activity->quantum <- Default"), so the counter always belongs to
//   the activity that is running. The check is then the paper's three instructions with
//   no descriptor pointer to load first (x86-64: `subl $k, %fs:coop_quantum_left@tpoff;
//   jns skip; call coop_quantum_expired`), and no descriptor cache line is written on
//   every check (descriptors of different processors may share a line).
// - coop_quantum_expired() (out of line, cold) is the slow path: on a coop activity
//   outside an uncooperative scope it yields (Fig. 2 SWITCH; the switch-in resets the
//   counter, and so does a yield that finds nobody to run); inside an uncooperative scope
//   it sets the counter to 0 so that the end of the outermost scope switches (coop.hpp
//   ~uncooperative); anywhere else (a non-worker thread, a processor's idle loop) it just
//   resets the counter.
// - The names are extern "C" and the declarations plain __thread (no C++ dynamic TLS
//   initialisation, so no TLS wrapper call): the clang pass plugin (plugin/) emits exactly
//   these symbols into instrumented code, and coop::check() uses them by hand.
//
// Migration: an activity may resume on another OS thread after coop_quantum_expired()
// switched. The counter is addressed %fs-relative at every access (initial-exec TLS: a
// thread-independent offset plus the segment base), so no stale thread's counter is used.
#pragma once

#include <cstdint>

#include "config.hpp"

extern "C" {
// coop_quantum_left — check() units the running activity may still use on this OS thread.
extern __thread std::int32_t coop_quantum_left __attribute__((tls_model("initial-exec")));

// coop_quantum_default — the quantum every switch-in grants: kDefaultQuantum, or the
// environment variable COOP_QUANTUM (a positive integer) read when the program starts.
extern std::int32_t coop_quantum_default;

// coop_quantum_expired — the check's slow path (see the file comment).
[[gnu::noinline, gnu::cold]] void coop_quantum_expired() noexcept;

// coop_os_lock_taken / coop_os_lock_released — called by instrumented code (plugin/) after
// each pthread mutex, rwlock or spin lock call with its result: while the running activity
// holds an OS lock taken in instrumented code it is uncooperative (a check does not switch:
// the next activity on the worker could block the worker in that lock, with one worker
// forever); the last release switches if the quantum ran out meanwhile, as the end of a
// coop::uncooperative scope does. Outside an activity, or on failure (rc != 0), nothing.
void coop_os_lock_taken(int rc) noexcept;
void coop_os_lock_released(int rc) noexcept;
}

namespace coop::internal {

// reset_quantum — a fresh quantum for whatever runs next on this OS thread.
inline void reset_quantum() noexcept { coop_quantum_left = coop_quantum_default; }

}  // namespace coop::internal
