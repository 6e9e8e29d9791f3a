#include "harness/registry.hpp"
#include "runtimes/native/native.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::NativeBackend, "native",
                           "coop: cooperative lock-free user-level threads (Negele et al. 2017) on "
                           "Boost.Context, global lock-free ready queues, finalizer-based sync",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
