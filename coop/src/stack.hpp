// stack.hpp — activity stacks: allocation, overflow protection and recycling through
// bounded per-processor caches backed by one shared pool (errata item 4: stacks freed on
// another processor than the one that allocated them must not pile up locally).
//
// Two kinds of stacks, so that millions can be alive at once:
// - guarded: a mapping of its own with a PROT_NONE guard page below the stack (an overflow
//   faults at once). Each costs two kernel mappings (VMAs), and vm.max_map_count (65,530 by
//   default) limits a process's mappings, so guarded stacks are made only while a budget
//   allows: half of the mappings left when the runtime starts (max_map_count minus the
//   lines of /proc/self/maps), two per stack (~16,000 by default);
// - carved: slots of large regions (kRegionSlots stacks per mmap) with a canary word just
//   below each stack's bottom: the last word of the slot below, in a room at the top of
//   that slot that its own activity never uses (or of the region's canary page). An
//   overflow is not stopped but found: the canary is checked when the activity switches
//   away and when it ends (check_canary), and a changed canary ends the process with a
//   message naming the stack size (a clear failure, not silent corruption). An overflow
//   runs downwards over its canary and that room, then the top frames of the slot below
//   (the neighbour's, which it corrupts: what "not stopped" costs); it never reaches a Stack
//   header: a region keeps its slots' headers in a block above its last slot, out of every
//   overflow's path, and starts with a PROT_NONE page, so that its first slot's overflow
//   faults instead of running into the header block of the region mapped below (two
//   mappings per region). So every check reads an intact header, also while a
//   neighbour's overflow is under way on another processor. With guard=off every stack is
//   carved (the paper's "micro stacks with a granularity finer than a page size", Negele
//   et al. 2017, "On the Design and Implementation of an Efficient Lock-Free Scheduler",
//   Sect. 6, thread creation: no page of protection per stack).
// When no stack can be had (a region's mmap fails, or the stack memory limit of
// COOP_STACK_MEMORY_LIMIT is reached) allocate() returns nullptr with the reason kept in
// the pool (failure()); the activity's first run then runs it on one of the pool's reserve
// stacks (two per processor, mapped when the runtime starts), where it only destroys its
// closure and finishes, and its joiner learns that it never ran (switch.cpp first_run,
// Thread::join). No abort for lack of memory.
//
// Ownership rules
// - A Stack is owned by exactly one of: a running or suspended activity, one processor's
//   StackCache, the StackPool's free list, or the StackPool's reserve list. It moves between
//   them only through these calls.
// - StackCache is touched only by its processor's OS thread; StackPool is shared (a mutex:
//   it is entered once per kBatch stacks, at each allocation and on the failure path). The
//   cache is on the switch path only at an activity's first run (first_run inside switch_to
//   takes a stack) and end (fin_recycle puts it back); an ordinary switch only reads the
//   canary of the activity that switches away (check_canary), if its stack is unguarded
//   (Activity::stack_guarded, copied from `guarded` at the first run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "coop/config.hpp"

namespace coop::internal {

// kStackCanary — the word at the bottom of every unguarded stack.
inline constexpr std::uint64_t kStackCanary = 0xC00DC0DEDEADBEEFull;

// kStackColours / kStackColourStep — an activity's initial frame starts this many offsets
// of this step below its stack's top (first_run, switch.cpp), so that the hot top frames
// of many activities do not all fall into the same L1 sets (they would sit at the same
// offset modulo 4 KiB). 16 x 128 B: 2 KiB of spread (32 of a 32 KiB 8-way L1's 64 sets),
// which leaves ~2 KiB of the top page for the frames of a small activity, so that it
// touches one page of stack, not two (16 x 256 B put one in two over the page boundary).
// The number of offsets is the pool's (StackPool::colour_mask): kStackColours unless the
// environment variable COOP_STACK_COLOURS names another power of two up to kMaxStackColours
// (1: no colouring; for measuring it, docs/scheduler-roadmap.md).
inline constexpr std::size_t kStackColours = 16;
inline constexpr std::size_t kMaxStackColours = 32;
inline constexpr std::size_t kStackColourStep = 128;

// Stack — a stack's header: at the top of its own mapping (guarded and reserve stacks), or
// in its region's header block (carved ones); the usable stack is [bottom, top).
struct Stack {
    Stack* next = nullptr;       // link in a cache or the pool
    void* mapping = nullptr;     // guarded/reserve: its own mapping; carved: nullptr
    std::size_t mapped = 0;      // that mapping's size
    void* bottom = nullptr;      // lowest usable address (above the guard page, if any)
    void* top_ = nullptr;        // highest usable address + 1 (the initial frame starts below)
    std::size_t size = 0;        // usable bytes, from bottom up to top_
    bool guarded = false;        // a guard page below bottom; else a canary at bottom
    bool reserve = false;        // one of the pool's reserve stacks (failure path)
#if COOP_TSAN
    void* tsan_fiber = nullptr;  // the finished activity's TSan fiber, destroyed on recycle
#endif
    void* top() const noexcept { return top_; }
};

// kStackHeaderBytes — a header's room: at the top of a stack's own mapping, one entry of a
// region's header block, and the room left free at the top of a carved slot (where its
// header once was; its last word is the canary of the slot above).
inline constexpr std::size_t kStackHeaderBytes = 64;
static_assert(sizeof(Stack) <= kStackHeaderBytes, "a header fits its room");

// canary_of — where an unguarded stack's canary lives: the word just below its bottom, the
// first one an overflow writes. For a carved stack that is the last word of the slot below
// (in the free room at its top, a page that is resident anyway) or of its region's canary
// page, so the canary costs no page of its own: a small activity touches one page of stack.
// For a reserve stack, the last word of the page below its bottom (its own mapping).
inline volatile std::uint64_t* canary_of(const Stack* s) noexcept {
    return reinterpret_cast<volatile std::uint64_t*>(static_cast<char*>(s->bottom) - sizeof(std::uint64_t));
}

// stack_overflow — a changed canary: one line on stderr, abort (memory is corrupt).
[[noreturn, gnu::cold, gnu::noinline]] void stack_overflow(const Stack* s) noexcept;

// check_canary — an unguarded stack's canary is intact (or the process ends).
inline void check_canary(const Stack* s) noexcept {
    if (!s->guarded && *canary_of(s) != kStackCanary) [[unlikely]]
        stack_overflow(s);
}

// StackPool — the runtime's shared pool and the stacks' geometry.
class StackPool {
  public:
    // StackPool — stacks of `size` usable bytes (rounded up to pages); guarded while the
    // mapping budget allows when `guard`, carved otherwise. Reads vm.max_map_count and
    // /proc/self/maps once (the guard budget) and the environment variables
    // COOP_STACK_MEMORY_LIMIT (bytes of stack mappings, suffix K, M or G; default: none) and
    // COOP_MAX_MAP_COUNT (replaces vm.max_map_count; tests).
    StackPool(std::size_t size, bool guard);
    ~StackPool();  // frees every stack; precondition: all were given back
    StackPool(const StackPool&) = delete;
    StackPool& operator=(const StackPool&) = delete;

    // allocate — a fresh stack, or nullptr when none can be had (failure() says why). After
    // the kernel refused a mapping, the next requests fail at once without asking it again:
    // 1, then 2, 4, ... up to kMapBackoffMax of them after each further refusal, none after
    // a mapping succeeds. Retried for every request, a refused mapping cost two failed mmaps
    // per activity (and malloc's own failing arena reservations), with the pool's mutex
    // held: 10^6 activities under `ulimit -v 300000` made no progress for minutes.
    Stack* allocate() noexcept;
    // take — up to `n` pooled stacks as a list (nullptr if none).
    Stack* take(std::size_t n);
    // give — returns a list of stacks to the pool, kept for reuse until the runtime ends
    // (the memory a burst of activities touched stays with the runtime, as descriptors do);
    // reserve ones go back to the reserve list.
    void give(Stack* list);

    // add_reserve — maps one more reserve stack (throws std::bad_alloc when refused).
    void add_reserve();
    // take_reserve — a reserve stack for an activity that could not get one; records the
    // failure. Aborts only when every reserve is in use (closures destroyed on the failure
    // path that block, e.g. by joining a coop::Thread they hold, on every processor at once).
    Stack* take_reserve() noexcept;

    // failures — activities that got no stack so far; failure — why the first did not.
    std::uint64_t failures() const;
    std::string failure() const;
    // failed_maps — mappings (a guarded stack's, a region's) the kernel refused so far.
    std::uint64_t failed_maps() const;

    std::size_t stack_size() const noexcept { return size_; }
    // colour_mask — the number of colouring offsets minus one (a power of two minus one;
    // first_run, switch.cpp): kStackColours, or COOP_STACK_COLOURS when it is a power of two
    // from 1 to kMaxStackColours (read once, by the constructor).
    std::size_t colour_mask() const noexcept { return colour_mask_; }
    std::size_t guard_budget() const noexcept { return guard_budget_; }

    static constexpr std::size_t kBatch = 16;         // stacks moved per pool visit
    static constexpr std::size_t kRegionSlots = 256;  // carved stacks per region mapping
    static constexpr std::size_t kMapBackoffMax = 1024;  // see allocate()

  private:
    Stack* allocate_guarded();  // mutex_ held
    Stack* allocate_carved();   // mutex_ held
    Stack* map_single(bool guard);
    // fail — keeps the first failure's reason (printf-style; formatted into failure_, so
    // the failure path allocates nothing: the heap may be exhausted too). mutex_ held.
    [[gnu::format(printf, 2, 3)]] void fail(const char* format, ...) noexcept;
    // map_refused — counts a mapping the kernel refused (allocate() then backs off). mutex_ held.
    void map_refused() noexcept;

    std::size_t size_;    // usable bytes (page multiple)
    std::size_t slot_;    // bytes per carved slot: size_ + a page (the free room at its top)
    bool guard_;
    std::size_t guard_budget_ = 0;  // guarded stacks allowed alive at once
    std::size_t colour_mask_ = kStackColours - 1;  // see colour_mask()
    std::size_t limit_ = 0;         // bytes of stack mappings allowed (0: no limit)
    mutable std::mutex mutex_;
    Stack* head_ = nullptr;  // free list
    std::size_t guarded_live_ = 0;   // guarded stacks mapped (anywhere)
    std::size_t mapped_bytes_ = 0;   // bytes of guarded stacks and regions mapped
    std::vector<std::pair<void*, std::size_t>> regions_;
    char* cursor_ = nullptr;  // next free slot of the newest region
    char* region_end_ = nullptr;  // end of the newest region's slots: its header block
    char* next_header_ = nullptr;  // the newest region's next free header (kStackHeaderBytes each)
    Stack* reserve_ = nullptr;  // free reserve stacks
    std::vector<Stack*> reserves_;  // every reserve stack (unmapped by the destructor)
    std::uint64_t failures_ = 0;
    std::uint64_t failed_maps_ = 0;
    std::size_t map_backoff_ = 0;  // requests to fail without a mapping after the next refusal
    std::size_t map_skip_ = 0;     // requests left to fail so, before mapping again
    char failure_[256] = {};       // the first failure's reason ("" if none)
};

// StackCache — one processor's stacks (bounded: 2 * kBatch).
class StackCache {
  public:
    // StackCache — also maps this processor's two reserve stacks into the pool (may throw):
    // a failed activity's reserve is still in use while the processor's next activity gets
    // its first run (its finish switches before fin_recycle gives the reserve back), and that
    // one may fail too.
    explicit StackCache(StackPool& pool) : pool_(&pool) {
        pool.add_reserve();
        pool.add_reserve();
    }
    ~StackCache() { flush(); }
    StackCache(const StackCache&) = delete;
    StackCache& operator=(const StackCache&) = delete;

    // get — a stack for an activity's first run, or nullptr when none can be had.
    Stack* get() {
        if (head_ == nullptr) refill();
        if (head_ == nullptr) return pool_->allocate();
        Stack* s = head_;
        head_ = s->next;
        --count_;
        return s;
    }
    // put — a finished activity's stack (its canary checked first).
    void put(Stack* s) {
        check_canary(s);
        if (s->reserve) [[unlikely]] {
            s->next = nullptr;  // a list of one
            pool_->give(s);     // back to the reserve list
            return;
        }
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
