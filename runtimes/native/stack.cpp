// stack.cpp — see stack.hpp.
#include "runtimes/native/stack.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

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
}  // namespace

StackPool::StackPool(std::size_t size, bool guard)
    : size_(round_up(size < kMinStackSize ? kMinStackSize : size, page_size())), guard_(guard) {}

StackPool::~StackPool() {
    while (head_ != nullptr) {
        Stack* s = head_;
        head_ = s->next;
        free_stack(s);
    }
}

Stack* StackPool::allocate() {
    const std::size_t page = page_size();
    // The header takes the top of the mapping: one more page, so `size_` stays usable.
    const std::size_t mapped = size_ + page + (guard_ ? page : 0);
    void* m = nullptr;
    if (guard_) {
        m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
        if (m == MAP_FAILED) m = nullptr;
        if (m != nullptr && mprotect(m, page, PROT_NONE) != 0) {
            munmap(m, mapped);
            m = nullptr;
        }
    } else {
        m = std::aligned_alloc(page, mapped);
    }
    if (m == nullptr) {
        std::fprintf(stderr,
                     "coop: cannot allocate a %zu-byte activity stack (%s); too many live "
                     "activities for this stack size (see vm.max_map_count, or guard=off)\n",
                     mapped, std::strerror(errno));
        std::abort();
    }
    auto* base = static_cast<char*>(m);
#ifdef MADV_POPULATE_WRITE
    // A new activity touches the top two pages at once (the header and, below it, the
    // coloured initial frame and the first frames of its body): commit them in one call
    // rather than two first-touch faults (~11 us each on the reference KVM guest, ~2-4 us
    // per page when populated). A hint: on failure they fault in as before.
    (void)madvise(base + mapped - 2 * page, 2 * page, MADV_POPULATE_WRITE);
#endif
    char* bottom = base + (guard_ ? page : 0);
    // The header sits at the top, 64-byte aligned; the stack grows down from it.
    auto* header = reinterpret_cast<Stack*>(base + mapped - round_up(sizeof(Stack), 64));
    auto* s = new (header) Stack;
    s->mapping = m;
    s->mapped = mapped;
    s->bottom = bottom;
    s->size = static_cast<std::size_t>(reinterpret_cast<char*>(header) - bottom);
    s->guarded = guard_;
    return s;
}

void StackPool::free_stack(Stack* s) noexcept {
    void* m = s->mapping;
    const std::size_t mapped = s->mapped;
    const bool guarded = s->guarded;
#if COOP_ASAN
    // Frames that never returned leave poisoned redzones behind; the next mapping at this
    // address must not inherit them.
    __asan_unpoison_memory_region(s->bottom, s->size);
#endif
    s->~Stack();
    if (guarded) munmap(m, mapped);
    else std::free(m);
}

Stack* StackPool::take(std::size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    Stack* list = nullptr;
    while (n-- > 0 && head_ != nullptr) {
        Stack* s = head_;
        head_ = s->next;
        --count_;
        s->next = list;
        list = s;
    }
    return list;
}

void StackPool::give(Stack* list, std::size_t n) {
    Stack* surplus = nullptr;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        while (list != nullptr) {
            Stack* s = list;
            list = s->next;
            if (count_ < kPoolLimit) {
                s->next = head_;
                head_ = s;
                ++count_;
            } else {
                s->next = surplus;
                surplus = s;
            }
        }
    }
    (void)n;
    while (surplus != nullptr) {  // unmapped outside the lock
        Stack* s = surplus;
        surplus = s->next;
        free_stack(s);
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
    std::size_t n = 0;
    while (count_ > StackPool::kBatch) {
        Stack* s = head_;
        head_ = s->next;
        --count_;
        s->next = list;
        list = s;
        ++n;
    }
    pool_->give(list, n);
}

void StackCache::flush() {
    pool_->give(head_, count_);
    head_ = nullptr;
    count_ = 0;
}

}  // namespace coop::internal
