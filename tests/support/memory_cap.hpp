// memory_cap.hpp — the tests' means to run code with no memory left: the address space
// capped (RLIMIT_AS) and every byte the heap can still give taken. For the tests that a
// late first use of a thread_local, a failed stack or a refused spawn ends as documented (an
// exception, a failed activity), never as an abort. Use inside a forked child (child.hpp):
// the cap and the hoard are the process's. Not under the sanitizers: their shadow memory
// needs far more address space and their allocators replace malloc.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <string>

namespace coopbench::test {

// vm_size — the process's address space now (bytes; /proc/self/status VmSize).
inline std::size_t vm_size() {
    std::ifstream f("/proc/self/status");
    std::string key;
    while (f >> key) {
        std::size_t kb = 0;
        if (key == "VmSize:" && f >> kb) return kb << 10;
    }
    return 0;
}

// AddressSpaceCap — RLIMIT_AS at `more` bytes beyond what is mapped now (0: no new mapping
// from here on), restored by the destructor.
class AddressSpaceCap {
  public:
    explicit AddressSpaceCap(std::size_t more) {
        getrlimit(RLIMIT_AS, &old_);
        rlimit r = old_;
        r.rlim_cur = vm_size() + more;
        ok_ = setrlimit(RLIMIT_AS, &r) == 0;
    }
    ~AddressSpaceCap() { setrlimit(RLIMIT_AS, &old_); }
    AddressSpaceCap(const AddressSpaceCap&) = delete;
    AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;
    bool ok() const { return ok_; }

  private:
    rlimit old_{};
    bool ok_ = false;
};

// Hoard — every block malloc still gives, kept in a list through the blocks themselves (so
// holding them allocates nothing), given back by release() or the destructor.
struct Hoard {
    struct Block {
        Block* next;
    };
    Block* head = nullptr;
    std::size_t bytes = 0;
    Hoard() = default;
    Hoard(const Hoard&) = delete;
    Hoard& operator=(const Hoard&) = delete;
    ~Hoard() { release(); }
    void take_all() {
        for (std::size_t size = std::size_t{1} << 20; size >= sizeof(Block); size /= 2) {
            while (void* p = std::malloc(size)) {
                auto* b = static_cast<Block*>(p);
                b->next = head;
                head = b;
                bytes += size;
            }
        }
    }
    void release() {
        while (head != nullptr) {
            Block* b = head;
            head = b->next;
            std::free(b);
        }
    }
};

}  // namespace coopbench::test
