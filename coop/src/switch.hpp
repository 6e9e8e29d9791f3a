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
//   first run: first_run, switch.cpp), and makes ONE jump (`jump`, below) carrying
//   &SwitchArgs. The resumed side (after_switch) stores the suspended continuation into
//   previous->context, then runs the finalizer; only finalizers publish `previous` (ready
//   queue, wait queue), so no processor can resume an activity before its context is saved.
// - The jump: on x86-64 with COOP_CACS (the CMake option of that name, default ON), coop's own
//   context-aware switch (CACS, after Li, Du, Lin, Hsu, "Stackful Coroutine Made Fast",
//   PhotonLibOS, Sect. "context-aware context switching"): an inline asm at the switch site
//   that saves only the stack pointer, the resume address and %rbp, and declares every other
//   register clobbered, so the compiler keeps across it only what is live there, where it
//   would keep it across any call. Elsewhere, and with COOP_CACS=OFF: Boost.Context's
//   jump_fcontext, which saves the six callee-saved registers and the MXCSR and x87 control
//   words for any caller. The two differ in one thing an activity can see: the floating-point
//   control state (rounding mode, exception masks) is carried per activity by jump_fcontext
//   and is the worker's under CACS (jump, below; docs/native-runtime.md).
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
#include <cstdint>
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

// COOP_CACS — set by coop/CMakeLists.txt (option COOP_CACS); the context-aware switch is
// used where it is written for: x86-64 without the CET shadow stack (a jump between stacks
// whose calls and returns do not pair up would fault under it: -fcf-protection=return or
// full defines bit 1 of __CET__). Everywhere else, Boost.Context.
#ifndef COOP_CACS
#define COOP_CACS 0
#endif
#if COOP_CACS && defined(__x86_64__) && !(defined(__CET__) && (__CET__ & 2))
#define COOP_CACS_ACTIVE 1
#else
#define COOP_CACS_ACTIVE 0
#endif

// Transfer — what a jump hands to the side it resumes: the context of the side that jumped
// (fctx, to resume it later) and that side's `data`; Boost.Context's transfer_t, so that
// after_switch and the trampoline read one type in both builds.
using Transfer = ctx::transfer_t;
// ContextEntry — the first function of a fresh context: called with the first jump's Transfer;
// never returns.
using ContextEntry = void (*)(Transfer);

#if COOP_CACS_ACTIVE
// SwitchFrame — what a suspended context is under CACS: its stack pointer, the address it
// resumes at and its %rbp, on its own stack (a local of the function that jumped, or the top
// of a fresh stack: make_context). The context's handle (Activity::context) is the frame's
// address; the resumer reads it in the jump, before anything else runs on either stack.
struct SwitchFrame {
    void* sp;
    void* pc;
    void* fp;
};

// The registers the jump leaves to the compiler (jump, below): every general-purpose register
// but %rsp and %rbp (saved in the frame) and the three operands (%rdi, %rsi, %rax: outputs),
// every vector register (all are caller-saved in the System V x86-64 ABI, 3.2.1, Fig. 3.4;
// with AVX-512 also %xmm16-31 and the mask registers), the x87 and MMX registers, the x87
// status word, the flags, and memory. tests/mutants/cacs_clobber_r12.patch drops %r12.
#if defined(__AVX512F__)
#define COOP_CACS_AVX512_CLOBBERS                                                                              \
    , "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26",    \
        "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7"
#else
#define COOP_CACS_AVX512_CLOBBERS
#endif
#define COOP_CACS_CLOBBERS                                                                                     \
    "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2", "xmm3", \
        "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15",   \
        "st", "st(1)", "st(2)", "st(3)", "st(4)", "st(5)", "st(6)", "st(7)", "mm0", "mm1", "mm2", "mm3", "mm4", \
        "mm5", "mm6", "mm7", "fpsr", "cc", "memory" COOP_CACS_AVX512_CLOBBERS
// An indirect jump's target under Indirect Branch Tracking (-fcf-protection=branch) starts
// with endbr64; the compiler puts one at the entry of a function whose address is taken (a
// fresh context's ContextEntry), the asm one at its resume address.
#if defined(__CET__) && (__CET__ & 1)
#define COOP_CACS_LANDING "endbr64\n\t"
#else
#define COOP_CACS_LANDING ""
#endif

// jump — suspends the caller into a SwitchFrame of its own frame and resumes the context
// `to` (a SwitchFrame*), handing it {the caller's context, data}; returns when another jump
// resumes the caller, with what that one handed over. Seven instructions: the resume
// address, three stores into the frame, the resumed side's %rbp and %rsp, the jump. The
// asm's operands are fixed registers: %rdi holds the caller's frame going in and the
// resumer's coming out (Transfer::fctx), %rsi the data both ways (Transfer::data), %rax the
// target; a fresh context's entry finds the first two where a function's first two
// arguments are (System V: a struct of two pointers is passed in %rdi, %rsi), so
// make_context's frame resumes straight into it.
// Why only these three are saved:
// - %rsp is the context; the resume address is where the asm continues (label 1);
// - %rbp: it may be the frame pointer (the sanitizer builds' -fno-omit-frame-pointer), which
//   an asm may not clobber, so it is saved and restored explicitly in both builds;
// - everything else the compiler may keep in a register across a call is declared clobbered
//   (COOP_CACS_CLOBBERS): what is live across the jump is spilled by the compiler into the
//   caller's frame (and %rbx, %r12-%r15 are saved by its prologue for its own caller) —
//   which it does anyway around a call — instead of jump_fcontext's six saves and six loads
//   of its own. A register missing from the list is one the compiler believes preserved:
//   a value it keeps there comes back holding another context's
//   (tests/native/test_switch_registers.cpp);
// - the MXCSR and x87 control words are not saved: the ABI makes their control bits
//   callee-saved, jump_fcontext keeps them per context, and reading MXCSR (stmxcsr) alone
//   took 6 ns per switch on the 2026-12 machine (AMD family 25), more than the rest of the
//   jump (docs/native-runtime.md, Task switch). Under CACS the floating-point control state
//   is the worker's, as a thread_local is: an activity that changes it restores it before a
//   call that may switch.
// No red-zone concern: the asm writes only the frame (a local the compiler placed) and moves
// %rsp only to another stack; a suspended stack is touched by nobody until it is resumed.
[[gnu::always_inline]] inline Transfer jump(void* to, void* data) noexcept {
    SwitchFrame frame;
    void* from = &frame;
    asm volatile(
        "leaq 1f(%%rip), %%rcx\n\t"
        "movq %%rsp, 0(%%rdi)\n\t"
        "movq %%rcx, 8(%%rdi)\n\t"
        "movq %%rbp, 16(%%rdi)\n\t"
        "movq 16(%%rax), %%rbp\n\t"
        "movq 0(%%rax), %%rsp\n\t"
        "jmpq *8(%%rax)\n"
        "1:\n\t" COOP_CACS_LANDING
        : "+D"(from), "+S"(data), "+a"(to)
        :
        : COOP_CACS_CLOBBERS);
    return Transfer{from, data};
}

// make_context — a fresh context on the stack whose highest usable address + 1 is `top`:
// `entry` is called with the first jump's Transfer, %rsp aligned as at a function's entry
// (System V 3.2.2: %rsp + 8 a multiple of 16) and a null return address above it, which
// ends a backtrace's frame walk there, as %rbp = 0 ends a frame-pointer walk. The frame goes
// just below the return address: the entry's own frames overwrite it after the jump that
// read it. `size`: unused (Boost.Context's make_fcontext takes it).
inline void* make_context(void* top, std::size_t size, ContextEntry entry) noexcept {
    (void)size;
    void** ret = reinterpret_cast<void**>(reinterpret_cast<std::uintptr_t>(top) & ~std::uintptr_t{15}) - 1;
    *ret = nullptr;
    auto* f = reinterpret_cast<SwitchFrame*>(ret) - 1;
    f->sp = ret;
    f->pc = reinterpret_cast<void*>(entry);
    f->fp = nullptr;
    return f;
}
#else
// jump / make_context — Boost.Context's (see above).
[[gnu::always_inline]] inline Transfer jump(void* to, void* data) noexcept { return ctx::jump_fcontext(to, data); }
inline void* make_context(void* top, std::size_t size, ContextEntry entry) noexcept {
    return ctx::make_fcontext(top, size, entry);
}
#endif

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
[[gnu::always_inline]] inline void after_switch(Transfer t) noexcept {
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
    const Transfer t = jump(next->context, &args);
    // Resumed, possibly on another processor: `p` is stale from here on.
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
    after_switch<Likely>(t);
    restore_errno(errno_value);  // after the finalizer: its system calls may have set errno
    store_exception_state(*this_processor(), eh);  // the worker it resumes on (p is stale)
}

}  // namespace coop::internal
