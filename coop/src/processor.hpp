// processor.hpp — coop's processors (worker OS threads) and the state of a running runtime.
//
// Design summary
// - A Processor is one OS thread bound to one hazard-pointer slot (queue.hpp's
//   bind_processor(index), declared in hazard.hpp), optionally pinned to one CPU. Its
//   processor-local storage: the
//   running activity, its own idle activity (the OS thread's context: the idle loop runs
//   there and is switched to when an activity blocks with nothing else ready), its stack
//   and descriptor caches and a switch counter for timer polls.
// - RuntimeState holds what all processors share: the Scheduler<A> (the scheduling
//   algorithm's ready queues, parking), the stack pool, the live-activity count that Runtime::run waits on, the inbox
//   through which non-worker threads hand in activities (they have no hazard-pointer slot,
//   so they must not touch the lock-free queues), and the timers of sleep_for.
//
// Ownership rules
// - A Processor's fields are touched only by its own OS thread, except `thread` (the
//   runtime's constructor/destructor) and the read-only `runtime`/`index`.
// - At most one runtime is active in a process at a time (the processors' hazard-pointer
//   slots are process-wide); runtimes may follow one another.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "coop/activity.hpp"
#include "coop/src/io_poller.hpp"
#include "coop/src/scheduler.hpp"
#include "coop/slab.hpp"
#include "coop/src/stack.hpp"

namespace coop::internal {

// DescriptorTraits — pooled descriptors (kDescriptorBlock bytes) in slab.hpp's allocator. A
// free block keeps its first 16 bytes: the queue node a recycled descriptor carries
// (QueueItem::node) and the free-list link (in Activity::context). Slabs grow from 64 KiB to
// 2 MiB per processor, so a runtime that spawns a thousand activities does not commit a
// megabyte, while a burst of creates pays one madvise per slab rather than a page fault per
// 64 descriptors (~11 us each on the reference KVM guest, docs/native-runtime.md).
struct DescriptorTraits {
    static constexpr std::size_t kBlock = kDescriptorBlock;
    static constexpr std::size_t kLinkOffset = sizeof(QueueItem);  // Activity::context
    static constexpr std::size_t kKeep = 16;
    static constexpr std::size_t kSlabFirst = std::size_t{64} << 10;
    static constexpr std::size_t kSlabMax = std::size_t{2} << 20;
    static constexpr std::size_t kCacheMax = 4096;
    static constexpr std::size_t kBatch = 1024;
    static SlabShared& shared() {
        static auto* s = new SlabShared;  // outlives every thread
        return *s;
    }
};
// The base QueueItem (the node) comes first, then `context`, Activity's first member (offsetof
// is not allowed on Activity: not standard-layout).
static_assert(sizeof(QueueItem) == sizeof(void*) && DescriptorTraits::kKeep == 2 * sizeof(void*),
              "DescriptorTraits::kKeep covers the node and the link");
static_assert(kDescriptorBlock == kCacheLine, "one descriptor per cache line");

struct RuntimeState;

// TimerEntry — a sleeping activity; lives on that activity's stack while it sleeps.
struct TimerEntry {
    Activity* activity;
    std::int64_t deadline_ns;  // CLOCK_MONOTONIC
    TimerEntry* next = nullptr;     // in the pushed list (RuntimeState::timers)
    TimerEntry* child = nullptr;    // in the heap (timers.cpp: a pairing heap, no allocation)
    TimerEntry* sibling = nullptr;
    // fire — set for an I/O deadline (io.cpp): called instead of waking `activity` when the
    // deadline passes (expired true) or, by drop_timers, to free it unexpired (expired false);
    // the entry is heap-allocated and fire frees it.
    void (*fire)(TimerEntry*, bool expired) = nullptr;
};

// Processor — one worker.
struct Processor {
    Processor(RuntimeState& rt, unsigned i);

    RuntimeState* runtime;
    unsigned index;
    Activity* current = nullptr;  // the running activity (idle when in the idle loop)
    Activity idle;                // this OS thread's own context
    void* idle_stack_bottom = nullptr;  // for ASan: the OS thread's stack
    std::size_t idle_stack_size = 0;
    // This OS thread's C++ exception globals (__cxa_get_globals(), set when the worker
    // starts): what switch_to saves and restores (switch.hpp, ExceptionState).
    void* eh_globals = nullptr;
    StackCache stacks;
    // Activities started / finished on this processor (only this processor writes them).
    alignas(kCacheLine) std::atomic<std::uint64_t> started{0};
    std::atomic<std::uint64_t> finished{0};
    unsigned ticks = 0;  // yields and blocks, for timer and I/O polls
    io::IoClock io_clock;  // which ticks read the clock (io_poller.hpp)
    bool keep_quantum = false;  // the next switch_to keeps the quantum (runnext, Go's inheritTime)
    unsigned color = 0;  // stack colouring (first_run)
    // Descriptor cache (slab.hpp; flushed when the worker ends).
    BlockCache<DescriptorTraits> descriptors;
    std::thread thread;
};

// RuntimeState — one running runtime.
struct RuntimeState {
    RuntimeState(unsigned processors, std::size_t stack_size, bool guard, bool pin,
                 Scheduling scheduling = Scheduling::global);

    unsigned processor_count;
    bool pin;
    // scheduler — the Scheduler<A> of the algorithm chosen by Options::scheduling
    // (scheduler.hpp: the algorithm, parking, spinning); with_scheduler reaches its type.
    const std::unique_ptr<SchedulerCore> scheduler;
    StackPool stack_pool;
    std::vector<std::unique_ptr<Processor>> processors;

    // Quiescence (Runtime::run returns when every started activity has finished): per-
    // processor monotonic counters, written only by their owner (no locked instruction on
    // spawn or finish), plus one for starts by non-worker threads. See quiescent().
    alignas(kCacheLine) std::atomic<std::uint64_t> external_started{0};
    alignas(kCacheLine) std::atomic<std::uint32_t> quiescent_epoch{0};  // futex word
    alignas(kCacheLine) std::atomic<bool> stopping{false};

    // Inbox for activities started or made ready by threads that are not workers (inbox.cpp):
    // a queue of the activities' own nodes (no allocation: Runtime fills the hazard pools and
    // every descriptor holds its node), entered through the hazard-pointer slot kept for such
    // threads (index processor_count) while holding external_slot, which dequeue_waiter
    // (api.cpp) borrows the same way.
    alignas(kCacheLine) std::atomic<bool> inbox_ready{false};
    std::mutex external_slot;
    Queue<Activity> inbox;

    // Timers (timers.cpp): pushed entries (a lock-free stack: push CAS, take-all exchange),
    // a lower bound of every pending deadline (INT64_MAX: none), and the min-heap of the
    // entries a poller took (intrusive: the root), under timer_mutex.
    alignas(kCacheLine) std::atomic<TimerEntry*> timers{nullptr};
    std::atomic<std::int64_t> earliest_ns{INT64_MAX};
    std::mutex timer_mutex;
    TimerEntry* timer_heap = nullptr;
};

}  // namespace coop::internal
