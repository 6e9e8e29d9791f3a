// switch.hpp — coop's task switch (Fig. 1 SWITCHTO + Fig. 3 FINALIZESWITCH) and its
// sanitizer glue; internal to the runtime's .cpp files.
//
// Citation: Negele et al. 2017, Sect. 3.1-3.2, Fig. 1 (SWITCHTO: reset the quantum,
// forward finalizer and previous, restore the next context) and Fig. 3 (FINALIZESWITCH:
// the resumed side calls finalizer(previous, value)).
//
// Design summary
// - switch_to(p, previous, next, finalizer, value): resets the quantum and sets p.current,
//   gives `next` a stack and a fresh continuation if it never ran (stacks are allocated at
//   first run: first_run, switch.cpp), and makes ONE Boost.Context jump (jump_fcontext)
//   carrying &SwitchArgs. The resumed side (after_switch) stores the suspended continuation
//   into previous->context, then runs the finalizer; only finalizers publish `previous`
//   (ready queue, wait queue), so no processor can resume an activity before its context
//   is saved.
// - Sanitizers: every jump is bracketed by __sanitizer_start_switch_fiber /
//   __sanitizer_finish_switch_fiber (ASan: the target stack's bounds; a finishing activity
//   passes nullptr so its fake stack is freed) and preceded by __tsan_switch_to_fiber (TSan:
//   one fiber per activity, created at first run, destroyed by fin_recycle).
// - errno belongs to the activity, as it belongs to the thread under OS threads: its value
//   is kept on the switching activity's stack across the jump and written back to the errno
//   of the OS thread it resumes on (saved_errno / restore_errno).
// - So does the C++ exception state (ExceptionState: the stack of exceptions being handled
//   and the count of those in flight, kept by the C++ runtime per OS thread): kept on the
//   switching activity's stack beside errno and written back to the worker's after the jump;
//   a fresh activity starts with none (trampoline, switch.cpp).
// - A switch never crosses OS threads; code after a jump must not use values computed
//   before it that depend on the OS thread (the activity may have migrated): only SwitchArgs
//   and TLS re-read through this_processor().
//
// Where the Scheduler is used: api.cpp and worker.cpp (through with_scheduler, per
// algorithm), finalizers.cpp, runtime_internal.hpp (fin_yield, pick_next); inbox, timers,
// quiescence and the allocator only call SchedulerCore::awakened/notify.
#pragma once

#include <cxxabi.h>

#include <boost/context/detail/fcontext.hpp>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "coop/quantum.hpp"
#include "coop/src/runtime_internal.hpp"

#if COOP_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if COOP_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace coop::internal {

namespace ctx = boost::context::detail;

// SwitchArgs — what a switch hands to the resumed side (Fig. 1's finalizer, previous and
// value; on the switching stack, read by the resumed side before anything else).
struct SwitchArgs {
    Finalizer finalizer;
    Activity* previous;  // nullptr: the switching activity finished
    void* value;
};

// after_switch — Fig. 3 FINALIZESWITCH, on the resumed side. `Likely`: the finalizer the
// caller expects (nullptr: none): when the switcher passed that one it is called directly,
// so the compiler inlines it (a yield resumed by a yield runs fin_yield<A> without an
// indirect call); any other goes through the pointer.
// (`Likely` is an `auto` parameter tested by its type: GCC with -fsanitize=undefined does not
// take `&f != nullptr` as a constant expression.)
template <auto Likely = nullptr>
[[gnu::always_inline]] inline void after_switch(ctx::transfer_t t) noexcept {
    const auto* args = static_cast<const SwitchArgs*>(t.data);
    const Finalizer fin = args->finalizer;
    Activity* const prev = args->previous;
    void* const value = args->value;
    // `args` lives on prev's stack: copied out above, before the finalizer may publish prev.
    if (prev != nullptr) prev->context = t.fctx;
    if constexpr (!std::is_same_v<decltype(Likely), std::nullptr_t>) {
        if (fin == Likely) [[likely]] {
            Likely(prev, value);
            return;
        }
    }
    if (fin != nullptr) fin(prev, value);
}

// g_errno_tp_offset — where errno lives relative to the thread pointer (x86-64: the %fs
// base), the same for every thread: glibc's errno is an initial-exec TLS variable of libc
// (its __errno_location is `mov errno@gottpoff(%rip),%rax; add %fs:0,%rax`: one GOT word
// for all threads). Measured once when the library is loaded (switch.cpp), before any
// runtime, hence any switch, exists.
extern std::ptrdiff_t g_errno_tp_offset;

// saved_errno / restore_errno — the calling OS thread's errno, read and written as one
// %fs-relative access (x86-64) instead of a call to __errno_location each. The asm is
// volatile and reads %fs itself: after a jump the activity may run on another OS thread,
// and the compiler must neither reuse a value nor an address computed before it (it cannot
// see through the asm). Elsewhere: __errno_location, called through a pointer hidden by an
// empty asm, because it is declared const and its result from before a jump would be
// reused after it.
[[gnu::always_inline]] inline int saved_errno() noexcept {
#if defined(__x86_64__)
    int v;
    asm volatile("movl %%fs:(%1), %0" : "=r"(v) : "r"(g_errno_tp_offset) : "memory");
    return v;
#else
    int* (*where)() noexcept = &__errno_location;
    asm("" : "+r"(where));
    return *where();
#endif
}
[[gnu::always_inline]] inline void restore_errno(int v) noexcept {
#if defined(__x86_64__)
    asm volatile("movl %0, %%fs:(%1)" : : "r"(v), "r"(g_errno_tp_offset) : "memory");
#else
    int* (*where)() noexcept = &__errno_location;
    asm("" : "+r"(where));
    *where() = v;
#endif
}

// ExceptionState — the C++ runtime's per-thread exception globals, as libsupc++ (GCC's
// libstdc++, also what clang uses on Debian) lays them out: `struct __cxa_eh_globals {
// __cxa_exception* caughtExceptions; unsigned int uncaughtExceptions; }` (the Itanium C++
// ABI, Exception Handling, 2.2.2 "Caught Exception Stack"; libsupc++'s unwind-cxx.h;
// cxxabi.h declares the struct only). caughtExceptions is the top of the activity's stack of exceptions being
// handled (what `throw;`, std::current_exception() and the end of a handler use: the end pops
// and may free the top), uncaughtExceptions what std::uncaught_exceptions() returns. Both
// are the activity's, as under OS threads they are the thread's: an activity that switches
// in a handler or in a destructor run by unwinding, and another that throws or catches on
// the same worker, must not see each other's entries. ARM's EH ABI adds a third field, and
// other runtimes (libc++abi, libcxxrt) have layouts of their own: refused here, loudly,
// rather than copied wrong.
#if !defined(__GLIBCXX__)
#if defined(_LIBCPP_VERSION)
#error "coop: the C++ exception state is kept across a switch for libstdc++ (libsupc++) only; libc++ (libc++abi) is not supported: see ExceptionState in coop/src/switch.hpp"
#else
#error "coop: unknown C++ runtime: the C++ exception state is kept across a switch for libstdc++ (libsupc++) only: see ExceptionState in coop/src/switch.hpp"
#endif
#endif
#if defined(__arm__) || defined(__ARM_EABI__)
#error "coop: ARM's EH ABI adds propagatingExceptions to __cxa_eh_globals: see ExceptionState in coop/src/switch.hpp"
#endif
struct ExceptionState {
    void* caught;       // __cxa_exception* caughtExceptions
    unsigned uncaught;  // unsigned int uncaughtExceptions
};

// load_exception_state / store_exception_state — the exception globals of p's worker
// (Processor::eh_globals, from __cxa_get_globals() when the worker started: that function is
// declared const, so through it a compiler would reuse the address from before a jump after
// it, and each call costs a __tls_get_addr call in libstdc++.so). Copied with memcpy: the
// object is libsupc++'s, of its own type.
[[gnu::always_inline]] inline ExceptionState load_exception_state(const Processor& p) noexcept {
    ExceptionState s;
    std::memcpy(&s, p.eh_globals, sizeof s);
    return s;
}
[[gnu::always_inline]] inline void store_exception_state(const Processor& p, const ExceptionState& s) noexcept {
    std::memcpy(p.eh_globals, &s, sizeof s);
}

// first_run — gives a never-run activity its stack and continuation (switch.cpp).
[[gnu::noinline]] void first_run(Processor& p, Activity* a) noexcept;

// switch_to — Fig. 1 SWITCHTO followed (on the resumed side) by Fig. 3 FINALIZESWITCH;
// `Likely`: see after_switch. `PrevIsActivity`: the caller knows `prev` is a running
// activity (not null, not an idle loop: a yield), so its canary is checked without asking.
template <auto Likely = nullptr, bool PrevIsActivity = false>
[[gnu::always_inline]] inline void switch_to(Processor& p, Activity* prev, Activity* next,
                                             Finalizer fin, void* value) noexcept {
    // For `next`: the jump below stays on this OS thread (quantum.hpp). A runnext hand-off
    // (local algorithms, runtime_internal.hpp pick_next) keeps the running quantum: Go's inheritTime.
    if (p.keep_quantum) [[unlikely]]
        p.keep_quantum = false;
    else
        reset_quantum();
    p.current = next;
    // An unguarded stack's overflow is found here, when its activity switches away (stack.hpp).
    // A guarded one's faults at its guard page: its flag in the descriptor, which the switch
    // reads anyway, skips the header (one cache line less per switch: with 1,000 activities
    // yielding in turn their lines outgrow a 512 KiB L2, docs/scheduler-roadmap.md).
    if ((PrevIsActivity || (prev != nullptr && !prev->idle)) && !prev->stack_guarded) check_canary(prev->stack);
    if (next->context == nullptr) [[unlikely]]
        first_run(p, next);
    SwitchArgs args{fin, prev, value};
    const int errno_value = saved_errno();  // the switching activity's (see the file comment)
    const ExceptionState eh = load_exception_state(p);  // the same
#if COOP_ASAN
    void* fake_stack = nullptr;
    const void* bottom = next->idle ? p.idle_stack_bottom : next->stack->bottom;
    const std::size_t size = next->idle ? p.idle_stack_size : next->stack->size;
    __sanitizer_start_switch_fiber(prev != nullptr ? &fake_stack : nullptr, bottom, size);
#endif
#if COOP_TSAN
    __tsan_switch_to_fiber(next->tsan_fiber, 0);
#endif
    ctx::transfer_t t = ctx::jump_fcontext(next->context, &args);
    // Resumed, possibly on another processor: `p` is stale from here on.
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
    after_switch<Likely>(t);
    restore_errno(errno_value);  // after the finalizer: its system calls may have set errno
    store_exception_state(*this_processor(), eh);  // the worker it resumes on (p is stale)
}

}  // namespace coop::internal
