// switch.cpp — an activity's first frame (trampoline) and first run (its stack and
// continuation); the switch itself is inline in switch.hpp.
#include "coop/src/switch.hpp"
#include "coop/src/thread_pointer.hpp"

namespace coop::internal {

std::ptrdiff_t g_errno_tp_offset = 0;

namespace {
// measure_errno_offset — sets g_errno_tp_offset when the library is loaded: a constructor
// runs before main and before every C++ static initialiser of the program (priority 101, the
// first user priority), so even a runtime started by a static object finds it set.
[[gnu::constructor(101)]] void measure_errno_offset() noexcept {
    g_errno_tp_offset = thread_pointer_offset(__errno_location());
}

// trampoline — the first frame of every activity.
void trampoline(Transfer t) noexcept {
#if COOP_ASAN
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    after_switch(t);
    Processor* p = this_processor();
    // A fresh activity handles no exception and has none in flight: the worker's globals
    // still hold those of the activity that switched here (switch.hpp, ExceptionState).
    store_exception_state(*p, ExceptionState{nullptr, 0});
    Activity* self = p->current;  // on a worker, not its idle loop
    self->body(self);
    finish(self);
}
}  // namespace

// first_run — gives a never-run activity its stack and continuation.
void first_run(Processor& p, Activity* a) noexcept {
    Stack* s = p.stacks.get();
    if (s == nullptr) [[unlikely]] {
        // No stack (stack.hpp): the activity runs on a reserve stack only to destroy its
        // closure and finish; its joiner sees start_failed (Thread::join returns false).
        s = p.runtime->stack_pool.take_reserve();
        a->start_failed = true;
    }
    a->stack = s;
    a->stack_guarded = s->guarded;
    // Colouring: the hot top frames of activities would otherwise all sit at the same
    // offset modulo 4 KiB and compete for the same L1 sets (8 ways); stack.hpp kStackColours
    // (COOP_STACK_COLOURS=1 turns it off, to measure it).
    const std::size_t color = (p.color++ & p.runtime->stack_pool.colour_mask()) * kStackColourStep;
    a->context = make_context(static_cast<char*>(s->top()) - color, s->size - color, &trampoline);
#if COOP_TSAN
    a->tsan_fiber = __tsan_create_fiber(0);
#endif
}

}  // namespace coop::internal
