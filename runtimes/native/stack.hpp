// stack.hpp — activity stacks: allocation (optionally with a guard page) and recycling
// through bounded per-processor caches backed by one shared pool (errata item 4: stacks
// freed on another processor than the one that allocated them must not pile up locally).
//
// Ownership rules
// - A Stack is owned by exactly one of: a running or suspended activity, one processor's
//   StackCache, or the StackPool. It moves between them only through these calls.
// - StackCache is touched only by its processor's OS thread; StackPool is shared (a mutex:
//   it is entered once per kBatch stacks). The cache is on the switch path only at an
//   activity's first run (first_run inside switch_to takes a stack) and end (fin_recycle
//   puts it back); an ordinary switch does not touch it.
#pragma once

#include <cstddef>
#include <mutex>

#include "runtimes/native/config.hpp"

namespace coop::internal {

// Stack — the header at the top of a stack's mapping; the usable stack lies below it.
struct Stack {
    Stack* next = nullptr;       // link in a cache or the pool
    void* mapping = nullptr;     // what was mapped/allocated
    std::size_t mapped = 0;      // its size
    void* bottom = nullptr;      // lowest usable address (above the guard page)
    std::size_t size = 0;        // usable bytes, from bottom up to this header
    bool guarded = false;
#if COOP_TSAN
    void* tsan_fiber = nullptr;  // the finished activity's TSan fiber, destroyed on recycle
#endif
    void* top() noexcept { return this; }
};

// StackPool — the runtime's shared pool and the stacks' geometry.
class StackPool {
  public:
    // StackPool — stacks of `size` usable bytes (rounded up to pages), with a PROT_NONE
    // guard page below each when `guard`.
    StackPool(std::size_t size, bool guard);
    ~StackPool();  // frees every pooled stack; precondition: all others were given back
    StackPool(const StackPool&) = delete;
    StackPool& operator=(const StackPool&) = delete;

    // allocate — a fresh stack; aborts with a message when the system refuses it (a
    // stack is needed at an activity's first run, where nothing can be thrown to).
    Stack* allocate();
    // take — up to `n` pooled stacks as a list (nullptr if none).
    Stack* take(std::size_t n);
    // give — returns a list of `n` stacks to the pool (frees beyond kPoolLimit).
    void give(Stack* list, std::size_t n);
    static void free_stack(Stack* s) noexcept;

    std::size_t stack_size() const noexcept { return size_; }

    static constexpr std::size_t kBatch = 16;        // stacks moved per pool visit
    static constexpr std::size_t kPoolLimit = 1024;  // stacks kept in the pool

  private:
    std::size_t size_;
    bool guard_;
    std::mutex mutex_;
    Stack* head_ = nullptr;
    std::size_t count_ = 0;
};

// StackCache — one processor's stacks (bounded: 2 * kBatch).
class StackCache {
  public:
    explicit StackCache(StackPool& pool) : pool_(&pool) {}
    ~StackCache() { flush(); }
    StackCache(const StackCache&) = delete;
    StackCache& operator=(const StackCache&) = delete;

    // get — a stack for an activity's first run.
    Stack* get() {
        if (head_ == nullptr) refill();
        if (head_ == nullptr) return pool_->allocate();
        Stack* s = head_;
        head_ = s->next;
        --count_;
        return s;
    }
    // put — a finished activity's stack.
    void put(Stack* s) {
        s->next = head_;
        head_ = s;
        if (++count_ > 2 * StackPool::kBatch) spill();
    }
    // flush — gives every cached stack back to the pool (when the processor stops).
    void flush();

  private:
    void refill();
    void spill();

    StackPool* pool_;
    Stack* head_ = nullptr;
    std::size_t count_ = 0;
};

}  // namespace coop::internal
