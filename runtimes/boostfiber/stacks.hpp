// stacks.hpp — the fiber stack allocators the boostfiber backend offers, behind one
// copyable handle that Boost.Fiber stores with each fiber (the StackAllocator concept:
// allocate() -> stack_context, deallocate(stack_context&)).
//
//   pooled    boost::context::pooled_fixedsize_stack (a boost::pool of fixed-size chunks,
//             recycled, never returned to the system while the run lasts). Boost's pool is
//             not thread-safe, and with P > 1 a fiber's stack is freed on whichever thread
//             released the fiber last, so the pool sits behind a mutex here; with one
//             thread it is used as Boost's examples use it, unlocked.
//   fixed     boost::context::fixedsize_stack — Boost.Fiber's default_stack: one malloc per
//             fiber (128 KiB by default: above glibc's mmap threshold, so an mmap+munmap).
//   protected boost::context::protected_fixedsize_stack — mmap with a guard page.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/pooled_fixedsize_stack.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define COOPBENCH_BOOSTFIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define COOPBENCH_BOOSTFIBER_ASAN 1
#endif
#endif
#ifdef COOPBENCH_BOOSTFIBER_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace coopbench::boostfiber {

// StackKind — which allocator a run uses.
enum class StackKind { pooled, fixed, protected_ };

// parse_stack_kind — "pooled" | "fixed" | "protected"; throws std::invalid_argument otherwise.
inline StackKind parse_stack_kind(const std::string& s) {
    if (s == "pooled") return StackKind::pooled;
    if (s == "fixed") return StackKind::fixed;
    if (s == "protected") return StackKind::protected_;
    throw std::invalid_argument("boostfiber: unknown stack allocator '" + s + "' (pooled, fixed, protected)");
}

// StackSource — one run's stacks: the allocator kind, the size, and the pool if pooled.
class StackSource {
  public:
    // StackSource — `bytes` per stack (at least Boost's minimum); `pool_block` stacks per
    // pool growth step at most (caps the pool's doubling so one block stays reasonable).
    // `shared`: more than one thread may allocate or free at a time (P > 1), so the pool is
    // locked; false for a runtime of one worker thread, whose fibers all start and end on
    // it (successive runs' threads are ordered by the join of the one before): the lock
    // then cost two uncontended lock/unlock pairs per fiber, about a tenth of a P = 1
    // create beside Boost's own program (scripts/crosscheck_peers.py), which locks only at
    // P > 1.
    StackSource(StackKind kind, std::size_t bytes, bool shared = true, std::size_t pool_block = 1024)
        : kind_(kind), bytes_(bytes), shared_(shared), fixed_(bytes), protected_(bytes), pool_(bytes, 32, pool_block) {}

    // allocate — a stack of bytes() bytes; thread-safe; throws std::bad_alloc.
    boost::context::stack_context allocate() {
        // relaxed: a statistic (live()); a read from another thread may lag its frees, no more.
        live_.fetch_add(1, std::memory_order_relaxed);
        switch (kind_) {
            case StackKind::fixed:
                return fixed_.allocate();
            case StackKind::protected_:
                return protected_.allocate();
            case StackKind::pooled:
                break;
        }
        const auto g = pool_lock();
        return fresh(pool_.allocate());
    }

    // deallocate — give back a stack from allocate(), from any thread.
    void deallocate(boost::context::stack_context& sctx) noexcept {
        live_.fetch_sub(1, std::memory_order_relaxed);  // relaxed: as in allocate()
        switch (kind_) {
            case StackKind::fixed:
                fixed_.deallocate(sctx);
                return;
            case StackKind::protected_:
                protected_.deallocate(sctx);
                return;
            case StackKind::pooled:
                break;
        }
        const auto g = pool_lock();
        pool_.deallocate(sctx);
    }

    // live — stacks handed out and not yet given back: a fiber's stack comes back only when
    // Boost releases its terminated context (its dispatcher's release_terminated), not when
    // it is joined.
    long long live() const noexcept { return live_.load(std::memory_order_relaxed); }

    // kind, bytes — the allocator and the size per stack.
    StackKind kind() const { return kind_; }
    std::size_t bytes() const { return bytes_; }

  private:
    // pool_lock — the pool's mutex held when the pool is shared, nothing held otherwise.
    std::unique_lock<std::mutex> pool_lock() {
        return shared_ ? std::unique_lock<std::mutex>(pool_mutex_) : std::unique_lock<std::mutex>();
    }

    // fresh — a recycled pool chunk handed out again. A fiber that ended by switching away
    // leaves its frames' ASan redzones poisoned on its stack, and Boost's pool recycles the
    // chunk without ASan knowing (one malloc'd block carved by boost::pool): unpoison it,
    // or the next fiber on it reports a false stack-buffer-overflow (seen on the second
    // iteration of a fork once iterations ran in one process). No-op without ASan.
    static boost::context::stack_context fresh(boost::context::stack_context sctx) noexcept {
#ifdef COOPBENCH_BOOSTFIBER_ASAN
        ASAN_UNPOISON_MEMORY_REGION(static_cast<char*>(sctx.sp) - sctx.size, sctx.size);
#endif
        return sctx;
    }

    StackKind kind_;
    std::size_t bytes_;
    bool shared_;
    std::atomic<long long> live_{0};
    boost::context::fixedsize_stack fixed_;
    boost::context::protected_fixedsize_stack protected_;
    std::mutex pool_mutex_;
    boost::context::pooled_fixedsize_stack pool_;
};

// StackHandle — what each fiber keeps (Boost copies the allocator into the fiber's
// control block); shares ownership of the source so the pool outlives every stack.
class StackHandle {
  public:
    // StackHandle — a handle on `s`; allocate/deallocate forward to it.
    explicit StackHandle(std::shared_ptr<StackSource> s) : source_(std::move(s)) {}
    boost::context::stack_context allocate() { return source_->allocate(); }
    void deallocate(boost::context::stack_context& sctx) noexcept { source_->deallocate(sctx); }

  private:
    std::shared_ptr<StackSource> source_;
};

}  // namespace coopbench::boostfiber
