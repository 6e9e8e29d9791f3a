// descriptors.cpp — activity descriptors: pooled blocks from slab.hpp's allocator (one
// cache per processor, DescriptorTraits in processor.hpp), larger ones from operator new.
#include "coop/src/runtime_internal.hpp"

namespace coop::internal {

void* allocate_descriptor(std::size_t size, Node** node) {
    *node = nullptr;
    if (size > kDescriptorBlock) return ::operator new(size);
    Processor* p = this_processor();
    bool recycled = false;
    auto* a = static_cast<Activity*>(p != nullptr ? p->descriptors.allocate(recycled)
                                                  : BlockCache<DescriptorTraits>::allocate_shared(recycled));
    // A recycled block still carries its queue node (free() keeps the first 16 bytes).
    if (recycled) *node = a->node;
    return a;
}

void free_descriptor(Activity* a) noexcept {
    if (!a->pooled) {
        release(a);  // its queue node
        ::operator delete(static_cast<void*>(a));
        return;
    }
    if (Processor* p = this_processor())
        p->descriptors.free(a);
    else
        BlockCache<DescriptorTraits>::free_shared(a);
}

}  // namespace coop::internal
