// stack.cpp — see stack.hpp.
#include "coop/src/stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "coop/config.hpp"
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
    // Colouring (stack.hpp kStackColours): another number of offsets only when it is a power of
    // two up to kMaxStackColours whose spread takes at most half the stack; anything else keeps
    // the default, silently (a measuring knob).
    if (const std::size_t colours = env_bytes("COOP_STACK_COLOURS");
        colours >= 1 && colours <= kMaxStackColours && (colours & (colours - 1)) == 0 &&
        colours * kStackColourStep <= size_ / 2)
        colour_mask_ = colours - 1;
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

void StackPool::fail(const char* format, ...) noexcept {
    if (failure_[0] != '\0') return;
    va_list args;
    va_start(args, format);
    std::vsnprintf(failure_, sizeof failure_, format, args);
    va_end(args);
}

void StackPool::map_refused() noexcept { ++failed_maps_; }

Stack* StackPool::map_single(bool guard) {
    const std::size_t page = page_size();
    // The header takes the top of the mapping (slot_ = size_ + a page, so `size_` stays
    // usable); below the stack one more page: the guard page, or the page of the canary.
    const std::size_t mapped = slot_ + page;
    void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        const int err = errno;
        map_refused();
        fail("mmap of a %zu-byte stack failed (%s) with %zu bytes of stacks mapped", mapped, std::strerror(err),
             mapped_bytes_);
        return nullptr;
    }
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
            fail("the stack memory limit (COOP_STACK_MEMORY_LIMIT = %zu bytes) is reached: %zu bytes of %zu-byte "
                 "stacks are mapped",
                 limit_, mapped_bytes_, size_);
            return nullptr;
        }
        void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) {
            const int err = errno;
            map_refused();
            fail("mmap of a %zu-byte stack region failed (%s) with %zu bytes of stacks mapped", bytes,
                 std::strerror(err), mapped_bytes_);
            return nullptr;
        }
        if (mprotect(m, page, PROT_NONE) != 0) {
            const int err = errno;
            munmap(m, bytes);
            map_refused();
            fail("mprotect of a stack region's first page failed (%s) with %zu bytes of stacks mapped",
                 std::strerror(err), mapped_bytes_);
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
    // After a refusal, no new mapping for map_skip_ requests (a region's free slots are
    // still handed out): see stack.hpp.
    const bool skip = map_skip_ > 0;
    if (skip) --map_skip_;
    const std::uint64_t refused_before = failed_maps_;
    Stack* s = nullptr;
    try {
        if (!skip && guard_ && guarded_live_ < guard_budget_) s = allocate_guarded();
        // Beyond the mapping budget (or when a guarded mapping was refused): carved.
        if (s == nullptr && (!skip || cursor_ != region_end_)) s = allocate_carved();
    } catch (const std::bad_alloc&) {  // regions_ could not grow (counted by take_reserve)
        s = nullptr;
    }
    if (failed_maps_ != refused_before) {
        map_backoff_ = map_backoff_ == 0 ? 1 : std::min(2 * map_backoff_, kMapBackoffMax);
        map_skip_ = map_backoff_;
    } else if (s != nullptr && !skip) {
        map_backoff_ = 0;
    }
    if (s == nullptr && failure_[0] == '\0') fail("no stack could be had (its mapping was not retried)");
    return s;
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
    fail("no stack could be had");  // kept only if no reason was
    Stack* s = reserve_;
    if (s == nullptr) {
        std::fprintf(stderr, "coop: no stack for an activity (%s) and every reserve stack is in use\n",
                     failure_);
        std::abort();
    }
    reserve_ = s->next;
    return s;
}

std::uint64_t StackPool::failures() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failures_;
}

std::uint64_t StackPool::failed_maps() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return failed_maps_;
}

std::string StackPool::failure() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::string(failure_);
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
