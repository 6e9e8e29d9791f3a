// register.cpp — backend `native`: coop with the paper's global queues, its hot path typed
// (NativeBackendOf<Scheduling::global>: no run-time branch on the algorithm). The other two
// algorithms register in register_ws.cpp and register_parasail.cpp: one translation unit per
// backend, since each instantiates every workload for its own type.
#include "harness/register_backend.hpp"
#include "runtimes/native/native.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::NativeBackendOf<coop::Scheduling::global>, "native",
                           "coop: cooperative lock-free user-level threads (Negele et al. 2017) on "
                           "Boost.Context, global lock-free ready queues, finalizer-based sync",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
