// stack.cpp — see stack.hpp.
#include "runtimes/native/stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "runtimes/native/config.hpp"
#if COOP_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace coop::internal {

namespace {
std::size_t page_size() {
    static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return page;
}
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// env_bytes — an environment variable as bytes ("64M", "1G", "4096"); 0 when unset or bad.
std::size_t env_bytes(const char* name) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return 0;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    std::size_t unit = 1;
    if (end != nullptr && (*end == 'K' || *end == 'k')) unit = std::size_t{1} << 10;
    else if (end != nullptr && (*end == 'M' || *end == 'm')) unit = std::size_t{1} << 20;
    else if (end != nullptr && (*end == 'G' || *end == 'g')) unit = std::size_t{1} << 30;
    return static_cast<std::size_t>(n) * unit;
}

// max_map_count — vm.max_map_count (or COOP_MAX_MAP_COUNT), 65530 when unreadable.
std::size_t max_map_count() {
    if (const std::size_t forced = env_bytes("COOP_MAX_MAP_COUNT")) return forced;
    std::ifstream f("/proc/sys/vm/max_map_count");
    std::size_t n = 0;
    if (f >> n && n > 0) return n;
    return 65530;
}

// mappings_in_use — the process's mappings now (lines of /proc/self/maps).
std::size_t mappings_in_use() {
    std::ifstream f("/proc/self/maps");
    std::size_t lines = 0;
    std::string line;
    while (std::getline(f, line)) ++lines;
    return lines;
}

// make_header — a Stack header at `at` for the usable range [bottom, top).
Stack* make_header(void* at, char* bottom, char* top) {
    auto* s = new (at) Stack;
    s->bottom = bottom;
    s->top_ = top;
    s->size = static_cast<std::size_t>(top - bottom);
    return s;
}

// populate_top — a new stack's top page, committed at once.
void populate_top(char* end) {
#ifdef MADV_POPULATE_WRITE
    // A new activity touches the top page at once (the header and, below it, the coloured
    // initial frame and the first frames of its body: kStackColourStep): commit it in the
    // allocating call rather than by a first-touch fault (~11 us on the reference KVM guest,
    // ~2-4 us per page when populated). Only the top page: a small activity (skynet's inner
    // threads, create's) fits in it, and a blocked one costs that page of RSS; a deeper one
    // faults its further pages in. A hint: on failure the page faults in as before.
    (void)madvise(end - page_size(), page_size(), MADV_POPULATE_WRITE);
#else
    (void)end;
#endif
}
}  // namespace

void stack_overflow(const Stack* s) noexcept {
    std::fprintf(stderr,
                 "coop: activity stack overflow: the canary at the bottom of a %zu-byte unguarded stack was "
                 "overwritten (the activity used more stack than it has: raise the stack size, "
                 "coop::Options::stack_size / --stack-size)\n",
                 s->size);
    std::abort();
}

StackPool::StackPool(std::size_t size, bool guard)
    : size_(round_up(size < kMinStackSize ? kMinStackSize : size, page_size())),
      slot_(size_ + page_size()),
      guard_(guard) {
    if (guard_) {
        // Half of the mappings left now, two per guarded stack: the other half stays for
        // the program (malloc arenas, the carved regions, libraries loaded later).
        const std::size_t limit = max_map_count(), used = mappings_in_use();
        guard_budget_ = limit > used ? (limit - used) / 2 / 2 : 0;
    }
    limit_ = env_bytes("COOP_STACK_MEMORY_LIMIT");
}

StackPool::~StackPool() {
    while (head_ != nullptr) {
        Stack* s = head_;
        head_ = s->next;
        if (s->mapping != nullptr) {
#if COOP_ASAN
            __asan_unpoison_memory_region(s->bottom, s->size);
#endif
            munmap(s->mapping, s->mapped);
        }
    }
    for (Stack* s : reserves_) {
#if COOP_ASAN
        __asan_unpoison_memory_region(s->bottom, s->size);
#endif
        munmap(s->mapping, s->mapped);
    }
    for (auto& [base, bytes] : regions_) {
#if COOP_ASAN
        // Frames that never returned leave poisoned redzones behind; the next mapping at
        // this address must not inherit them.
        __asan_unpoison_memory_region(base, bytes);
#endif
        munmap(base, bytes);
    }
}

void StackPool::fail(const std::string& why) {
    if (failure_.empty()) failure_ = why;
}

Stack* StackPool::map_single(bool guard) {
    const std::size_t page = page_size();
    // The header takes the top of the mapping (slot_ = size_ + a page, so `size_` stays
    // usable); below the stack one more page: the guard page, or the page of the canary.
    const std::size_t mapped = slot_ + page;
    void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    if (guard && mprotect(m, page, PROT_NONE) != 0) {
        munmap(m, mapped);
        return nullptr;
    }
    auto* base = static_cast<char*>(m);
    populate_top(base + mapped);
    // The header at the top of its own mapping: an overflow runs downwards, away from it.
    char* const header = base + mapped - kStackHeaderBytes;
    Stack* s = make_header(header, base + page, header);
    s->mapping = m;
    s->mapped = mapped;
    s->guarded = guard;
    if (!guard) *canary_of(s) = kStackCanary;
    return s;
}

Stack* StackPool::allocate_guarded() {
    const std::size_t mapped = slot_ + page_size();  // as map_single
    if (limit_ != 0 && mapped_bytes_ + mapped > limit_) return nullptr;
    Stack* s = map_single(true);
    if (s == nullptr) return nullptr;
    ++guarded_live_;
    mapped_bytes_ += mapped;
    return s;
}

Stack* StackPool::allocate_carved() {
    const std::size_t page = page_size();
    if (cursor_ == region_end_) {
        // A region: a PROT_NONE page, a page for the first slot's canary, the slots, then the
        // slots' header block. The PROT_NONE page stops the first slot's overflow from
        // running into whatever is mapped below (mmap places a new region just below the
        // previous one: its header block); the header block lies below no slot of its own.
        const std::size_t headers = round_up(kRegionSlots * kStackHeaderBytes, page);
        const std::size_t bytes = 2 * page + kRegionSlots * slot_ + headers;
        if (limit_ != 0 && mapped_bytes_ + bytes > limit_) {
            fail("the stack memory limit (COOP_STACK_MEMORY_LIMIT = " + std::to_string(limit_) +
                 " bytes) is reached: " + std::to_string(mapped_bytes_) + " bytes of " + std::to_string(size_) +
                 "-byte stacks are mapped");
            return nullptr;
        }
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            fail("mmap of a " + std::to_string(bytes) + "-byte stack region failed (" + std::strerror(errno) +
                 ") with " + std::to_string(mapped_bytes_) + " bytes of stacks mapped");
            return nullptr;
        }
        if (mprotect(m, page, PROT_NONE) != 0) {
            const int err = errno;
            munmap(m, bytes);
            fail(std::string("mprotect of a stack region's first page failed (") + std::strerror(err) + ") with " +
                 std::to_string(mapped_bytes_) + " bytes of stacks mapped");
            return nullptr;
        }
        try {
            regions_.emplace_back(m, bytes);
        } catch (const std::bad_alloc&) {
            munmap(m, bytes);
            fail("no memory for the stack pool's bookkeeping");
            throw;
        }
        mapped_bytes_ += bytes;
        cursor_ = static_cast<char*>(m) + 2 * page;
        region_end_ = cursor_ + kRegionSlots * slot_;
        next_header_ = region_end_;
    }
    char* base = cursor_;
    cursor_ += slot_;
    populate_top(base + slot_);
    // Usable: the slot but a header's room at its top, left free (where the header was once:
    // the initial frame sits as before). That room's last word is the canary of the slot
    // above, the first word its overflow writes; this slot's canary is the last word of the
    // slot below (or of the region's canary page), in a page that is resident anyway.
    static_assert(kStackHeaderBytes % alignof(Stack) == 0);
    Stack* s = make_header(next_header_, base, base + slot_ - kStackHeaderBytes);
    next_header_ += kStackHeaderBytes;
    *canary_of(s) = kStackCanary;
    return s;
}

Stack* StackPool::allocate() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
        if (guard_ && guarded_live_ < guard_budget_)
            if (Stack* s = allocate_guarded()) return s;
        // Beyond the mapping budget (or when a guarded mapping was refused): carved.
        return allocate_carved();
    } catch (const std::bad_alloc&) {  // regions_ or failure_ could not grow (counted by take_reserve)
        return nullptr;
    }
}

void StackPool::add_reserve() {
    std::lock_guard<std::mutex> lock(mutex_);
    reserves_.reserve(reserves_.size() + 1);  // may throw, before anything is mapped
    Stack* s = map_single(false);
    if (s == nullptr) throw std::bad_alloc();
    s->reserve = true;
    reserves_.push_back(s);
    s->next = reserve_;
    reserve_ = s;
}

Stack* StackPool::take_reserve() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    ++failures_;
    if (failure_.empty()) failure_ = "no stack could be had";
    Stack* s = reserve_;
    if (s == nullptr) {
        std::fprintf(stderr, "coop: no stack for an activity (%s) and every reserve stack is in use\n",
                     failure_.c_str());
        std::abort();
    }
    reserve_ = s->next;
    return s;
}

std::uint64_t StackPool::failures() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
}

std::string StackPool::failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failure_;
}

Stack* StackPool::take(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    Stack* list = nullptr;
    while (n-- > 0 && head_ != nullptr) {
        Stack* s = head_;
        head_ = s->next;
        s->next = list;
        list = s;
    }
    return list;
}

void StackPool::give(Stack* list) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (list != nullptr) {
        Stack* s = list;
        list = s->next;
        if (s->reserve) {
            s->next = reserve_;
            reserve_ = s;
        } else {
            // Kept for reuse until the runtime ends: unmapping a guarded stack and mapping
            // it again cost ~21 us per stack on the reference guest (skynet L=5: 300 ms
            // with guard pages, 65 ms without), and giving back a small activity's pages
            // would be a system call per stack for the one page it touched.
            s->next = head_;
            head_ = s;
        }
    }
}

void StackCache::refill() {
    Stack* list = pool_->take(StackPool::kBatch);
    while (list != nullptr) {
        Stack* s = list;
        list = s->next;
        s->next = head_;
        head_ = s;
        ++count_;
    }
}

void StackCache::spill() {
    Stack* list = nullptr;
    while (count_ > StackPool::kBatch) {
        Stack* s = head_;
        head_ = s->next;
        --count_;
        s->next = list;
        list = s;
    }
    pool_->give(list);
}

void StackCache::flush() {
    pool_->give(head_);
    head_ = nullptr;
    count_ = 0;
}

}  // namespace coop::internal
