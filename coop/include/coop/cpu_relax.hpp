// cpu_relax.hpp — coop::cpu_relax(), the spin-wait hint every busy-wait loop of the project
// uses (coop's, locks/, the OS-thread backends'): one definition, so a port to another
// architecture changes one line.
//
// What it does: x86 PAUSE (tells the core a spin loop runs: the sibling hyperthread gets the
// pipeline, and leaving the loop does not pay a memory-order mis-speculation flush; about
// 10 cycles before Skylake, about 140 from Skylake on), aarch64 YIELD (the same hint to an SMT core);
// elsewhere nothing. It is not a fence and orders nothing: the loops that call it re-read
// their atomics with the order they need.
//
// Boost.Fiber's detail/cpu_relax.hpp defines a function-like macro of the same name; a file
// that includes Boost.Fiber before this header must #undef it (runtimes/boostfiber does).
#pragma once

namespace coop {

// cpu_relax — a spin-wait hint (see the file comment). Can be called by any thread.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    // "memory": a compiler barrier as well, so no access of the loop moves across the hint
    // (the hint itself needs no ordering; the loop's atomics carry it).
    asm volatile("yield" ::: "memory");
#endif
}

}  // namespace coop
