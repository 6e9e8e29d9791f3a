// register.cpp — the boostfiber variants: one name per Boost.Fiber scheduling algorithm,
// sharing one type and the stack options.
#include <string>
#include <vector>

#include "harness/register_backend.hpp"
#include "runtimes/boostfiber/boostfiber.hpp"

static_assert(coopbench::Backend<coopbench::BoostFiberBackend>,
              "coopbench::BoostFiberBackend does not satisfy coopbench::Backend");

namespace {
std::vector<coopbench::OptionSpec> boostfiber_options() {
    return {
        coopbench::OptionSpec{"stack", "pooled",
                              "fiber stack allocator: pooled (pooled_fixedsize_stack, recycled), fixed (Boost's "
                              "default fixedsize_stack, malloc), protected (mmap + guard page)",
                              {"pooled", "fixed", "protected"}},
        coopbench::OptionSpec{"channel", "boost",
                              "the workloads' channels: boost (Boost.Fiber's unbuffered_channel at C=0, "
                              "buffered_channel holding the 2^k-1 nearest C otherwise), generic (fiber mutex + "
                              "condition variables, exactly C)",
                              {"boost", "generic"}},
        coopbench::OptionSpec{"idle", "auto",
                              "an idle worker thread (shared_work, work_stealing): spin (Boost's default "
                              "suspend=false, as its examples: polls the queues, a CPU per idle thread), sleep "
                              "(suspend=true, woken when work is queued), or auto: spin while the P threads fit "
                              "the CPUs the run may use, sleep when they outnumber them",
                              {"auto", "sleep", "spin"}},
        coopbench::OptionSpec{"stack_kib", std::to_string(coopbench::boostfiber::kDefaultStackKib),
                              "KiB per fiber stack (a non-zero --stack-size wins)"},
    };
}
}  // namespace

COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::BoostFiberBackend, "boostfiber/round_robin",
                                   "Boost.Fiber, round_robin: one thread's own ready queue (processors=1 only)",
                                   {{"algorithm", "round_robin"}, {"max_processors", "1"}},
                                   boostfiber_options());
COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::BoostFiberBackend, "boostfiber/shared_work",
                                   "Boost.Fiber, shared_work: P threads share one global ready queue",
                                   {{"algorithm", "shared_work"}}, boostfiber_options());
COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::BoostFiberBackend, "boostfiber/work_stealing",
                                   "Boost.Fiber, work_stealing: a ready queue per thread, idle threads steal "
                                   "(once per process: point isolation required)",
                                   {{"algorithm", "work_stealing"}}, boostfiber_options());
