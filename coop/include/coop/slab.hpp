// slab.hpp — coop's one allocator of fixed-size blocks (queue nodes, activity descriptors):
// 64-byte aligned slabs, a per-owner cache (a bump slab and a free list) and a shared list
// for the surplus, never returned to the OS.
//
// Why: a fresh node or descriptor from glibc malloc was ~200 instructions and a first-touch
// page fault per 64-128 blocks, most of a create in a fresh process (errata item 5,
// docs/native-runtime.md). Slabs grow from kSlabFirst to kSlabMax bytes (doubling per owner)
// and each one's pages are committed with one madvise (memory.hpp populate()).
//
// Design summary
// - Traits give the block size, where the free-list link lives in a free block
//   (kLinkOffset) and how many leading bytes stay valid while the block is free (kKeep: the
//   link, and for descriptors the queue node a recycled descriptor keeps).
// - BlockCache (one per owner: a thread for nodes, a processor for descriptors, touched only
//   by that owner): allocate() pops the free list, else takes a batch from the shared list,
//   else bumps the slab, else starts a new slab; free() pushes, and beyond kCacheMax gives
//   all but kCacheMax - kBatch to the shared list. Threads without a cache use the shared
//   list directly (allocate_shared/free_shared).
// - Slabs are ::operator new(bytes, align 64): a 64-byte block never straddles two cache
//   lines, so two descriptors on two processors never share one (false sharing).
// - Sanitizers see the slabs (a use after free of a pooled block is reported): the same code runs under ASan and TSan; ASan
//   builds poison a free block except its first kKeep bytes (a use after free is reported)
//   and unpoison it when it is handed out; COOP_ASSERT (config.hpp) checks the contract
//   there too. The link is accessed with relaxed atomic builtins: in a node it is the
//   std::atomic `next`, which is never accessed non-atomically.
//
// Ownership rules
// - A block in a cache's free list or bump range belongs to that cache's owner; in the shared
//   list to whoever takes the mutex; handed out, to the caller.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>
#include <vector>

#include "config.hpp"
#include "memory.hpp"

#if COOP_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace coop::internal {

// kSlabAlign — slabs start on a cache line (64 bytes; static_asserted in hazard.hpp).
inline constexpr std::size_t kSlabAlign = 64;

// poison / unpoison — ASan's view of a free block (no-ops elsewhere).
inline void poison(void* p, std::size_t n) noexcept {
#if COOP_ASAN
    ASAN_POISON_MEMORY_REGION(p, n);
#else
    (void)p, (void)n;
#endif
}
inline void unpoison(void* p, std::size_t n) noexcept {
#if COOP_ASAN
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
    (void)p, (void)n;
#endif
}

// SlabShared — the shared list and every slab of one block kind (slabs listed so that leak
// checkers see them).
struct SlabShared {
    std::mutex mutex;
    void* free = nullptr;                   // under the mutex
    std::atomic<std::size_t> count{0};      // written under the mutex; read as a hint
    std::vector<void*> slabs;               // under the mutex
};

template <class Traits>
class BlockCache {
    static_assert(Traits::kBlock % alignof(void*) == 0 && Traits::kLinkOffset + sizeof(void*) <= Traits::kKeep &&
                  Traits::kKeep <= Traits::kBlock);
    static_assert(kSlabAlign % Traits::kBlock == 0 || Traits::kBlock % kSlabAlign == 0,
                  "a block must not straddle a cache line");

  public:
    BlockCache() = default;
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    // allocate — a block; `recycled` tells whether it was freed before (then its first kKeep
    // bytes are as free() left them) or is fresh slab memory (contents unspecified).
    void* allocate(bool& recycled) {
        if (free_ == nullptr && next_ == end_) refill();
        if (void* b = free_) {
            unpoison(b, Traits::kBlock);
            free_ = link(b);
            --free_count_;
            recycled = true;
            return b;
        }
        void* b = next_;
        next_ += Traits::kBlock;
        recycled = false;
        return b;
    }
    void* allocate() {
        bool recycled;
        return allocate(recycled);
    }

    // free — gives back a block this cache or another one handed out.
    void free(void* b) noexcept {
        set_link(b, free_);
        poison(static_cast<char*>(b) + Traits::kKeep, Traits::kBlock - Traits::kKeep);
        free_ = b;
        if (++free_count_ > Traits::kCacheMax) flush(Traits::kCacheMax - Traits::kBatch);
    }

    // flush — moves the free blocks beyond `keep` to the shared list (keep 0: at the
    // owner's end, e.g. thread exit). The bump range stays (slabs are never freed).
    void flush(std::size_t keep) noexcept {
        if (free_count_ <= keep) return;
        void* first = free_;
        void* last = free_;
        std::size_t n = free_count_ - keep;
        for (std::size_t i = 1; i < n; ++i) last = link(last);
        free_ = link(last);
        free_count_ = keep;
        SlabShared& sh = Traits::shared();
        std::lock_guard<std::mutex> lock(sh.mutex);
        set_link(last, sh.free);
        sh.free = first;
        // A plain load + store, not fetch_add: every writer holds the mutex; relaxed: readers
        // outside the mutex use it only as a hint.
        sh.count.store(sh.count.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }

    // allocate_shared / free_shared — for threads without a cache (under the mutex).
    static void* allocate_shared(bool& recycled) {
        SlabShared& sh = Traits::shared();
        std::lock_guard<std::mutex> lock(sh.mutex);
        if (void* b = sh.free) {
            unpoison(b, Traits::kBlock);
            sh.free = link(b);
            sh.count.store(sh.count.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
            recycled = true;
            return b;
        }
        void* b = ::operator new(Traits::kBlock, std::align_val_t{kSlabAlign});
        sh.slabs.push_back(b);
        recycled = false;
        return b;
    }
    static void free_shared(void* b) noexcept {
        SlabShared& sh = Traits::shared();
        std::lock_guard<std::mutex> lock(sh.mutex);
        set_link(b, sh.free);
        poison(static_cast<char*>(b) + Traits::kKeep, Traits::kBlock - Traits::kKeep);
        sh.free = b;
        sh.count.store(sh.count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }

  private:
    // link / set_link — the free-list link inside a free block (relaxed atomic builtins: see
    // the header; relaxed: the block is ours, nothing is published through the link).
    static void* link(void* b) noexcept {
        return __atomic_load_n(reinterpret_cast<void**>(static_cast<char*>(b) + Traits::kLinkOffset), __ATOMIC_RELAXED);
    }
    static void set_link(void* b, void* to) noexcept {
        __atomic_store_n(reinterpret_cast<void**>(static_cast<char*>(b) + Traits::kLinkOffset), to, __ATOMIC_RELAXED);
    }

    // refill — takes up to kBatch blocks from the shared list, else starts a new slab.
    [[gnu::noinline]] void refill() {
        SlabShared& sh = Traits::shared();
        // relaxed: a hint; the mutex decides.
        if (sh.count.load(std::memory_order_relaxed) > 0) {
            std::lock_guard<std::mutex> lock(sh.mutex);
            std::size_t i = 0;
            for (; i < Traits::kBatch && sh.free != nullptr; ++i) {
                void* b = sh.free;
                sh.free = link(b);
                set_link(b, free_);
                free_ = b;
            }
            free_count_ += i;
            sh.count.store(sh.count.load(std::memory_order_relaxed) - i, std::memory_order_relaxed);
            if (i > 0) return;
        }
        const std::size_t bytes = slab_bytes_ = slab_bytes_ == 0 ? Traits::kSlabFirst : std::min(2 * slab_bytes_, Traits::kSlabMax);
        auto* slab = static_cast<char*>(::operator new(bytes, std::align_val_t{kSlabAlign}));
        COOP_ASSERT(reinterpret_cast<std::uintptr_t>(slab) % kSlabAlign == 0, "slab not 64-byte aligned");
        populate(slab, bytes);
        {
            std::lock_guard<std::mutex> lock(sh.mutex);
            sh.slabs.push_back(slab);
        }
        next_ = slab;
        end_ = slab + bytes - bytes % Traits::kBlock;
    }

    char* next_ = nullptr;  // bump range [next_, end_)
    char* end_ = nullptr;
    void* free_ = nullptr;
    std::size_t free_count_ = 0;
    std::size_t slab_bytes_ = 0;  // the last slab's size (they grow)
};

}  // namespace coop::internal
