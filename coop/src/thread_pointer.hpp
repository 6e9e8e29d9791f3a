// thread_pointer.hpp — the distance of a thread_local from the thread pointer, for the
// %fs-relative reads that keep a migrating activity from caching another OS thread's
// variable (this_processor() in activity.hpp, errno in switch.hpp). Included by the two
// files that measure such an offset at load time (api.cpp, switch.cpp) only.
#pragma once

#include <cstddef>

namespace coop::internal {

// thread_pointer_offset — p's address minus this thread's thread pointer (the TCB's self
// pointer at %fs:0 on x86-64), for p the address of a thread_local of the initial-exec model:
// the same for every thread of the process, so it is measured once, by a load-time
// constructor. 0 where the offset is not used (not x86-64: those builds read the
// thread_local through the compiler).
inline std::ptrdiff_t thread_pointer_offset(const void* p) noexcept {
#if defined(__x86_64__)
    const char* tp;
    asm("movq %%fs:0, %0" : "=r"(tp));  // the TCB's self pointer: the thread pointer
    return static_cast<const char*>(p) - tp;
#else
    (void)p;
    return 0;
#endif
}

}  // namespace coop::internal
