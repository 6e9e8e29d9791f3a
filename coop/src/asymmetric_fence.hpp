// asymmetric_fence.hpp — an asymmetric store–load fence: a compiler-only fence on the
// frequent (light) side, Linux membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) on the rare
// (heavy) side. Part of coop for its owner guard (owner_guard.hpp); locks/ includes it from
// here.
//
// Citation: the idea of folly's asymmetric thread fence (folly/synchronization/
// AsymmetricThreadFence.h, asymmetric_thread_fence_light/heavy); Linux membarrier(2).
// Written here from the man page, not copied.
//
// Design and why it is enough. membarrier(PRIVATE_EXPEDITED) returns only after every
// CPU running a thread of this process has executed a full memory barrier (by IPI), and
// it is itself a full barrier for the caller. So for a light side "store X; light();
// load Y" and a heavy side "store Y; heavy(); load X", either the light side's store X is
// visible to the heavy side's load, or the light side had not yet executed past that
// barrier point and so its load Y comes after the heavy side's store Y became globally
// visible — the Dekker guarantee, with no fence instruction on the light side. light()
// must still stop the compiler from reordering the store after the load: a signal fence.
// Ownership: none (functions). heavy_available() registers the process once.
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace coop {

// asymmetric_fence_light — the cheap side: a compiler-only fence.
inline void asymmetric_fence_light() { std::atomic_signal_fence(std::memory_order_seq_cst); }

namespace detail {
inline int membarrier_call(int cmd) { return static_cast<int>(syscall(SYS_membarrier, cmd, 0u, 0)); }

// MembarrierState — whether PRIVATE_EXPEDITED is usable, and why not.
struct MembarrierState {
    bool ok = false;
    std::string why;
    MembarrierState() {
        const int mask = membarrier_call(MEMBARRIER_CMD_QUERY);
        if (mask < 0) {
            why = std::string("membarrier(QUERY): ") + std::strerror(errno);
        } else if (!(mask & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) {
            why = "membarrier: kernel lacks MEMBARRIER_CMD_PRIVATE_EXPEDITED";
        } else if (membarrier_call(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0) {
            why = std::string("membarrier(REGISTER_PRIVATE_EXPEDITED): ") + std::strerror(errno);
        } else {
            ok = true;
        }
    }
};
inline const MembarrierState& membarrier_state() {
    static const MembarrierState s;  // registered once per process (thread-safe static init)
    return s;
}
}  // namespace detail

// asymmetric_fence_heavy_available — can asymmetric_fence_heavy() be used? Registers the
// process for private expedited membarrier on first call.
inline bool asymmetric_fence_heavy_available() { return detail::membarrier_state().ok; }

// asymmetric_fence_unavailable_reason — why not (empty when available).
inline const std::string& asymmetric_fence_unavailable_reason() { return detail::membarrier_state().why; }

// asymmetric_fence_heavy — the expensive side (precondition: available(), so the call
// cannot fail with EPERM). Should the kernel still refuse, this is a fatal error: a plain
// fence here would not order the light side, which has no fence instruction.
inline void asymmetric_fence_heavy() {
    if (detail::membarrier_call(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0) {
        std::fprintf(stderr, "asymmetric_fence_heavy: membarrier failed: %s\n", std::strerror(errno));
        std::abort();
    }
}

}  // namespace coop
