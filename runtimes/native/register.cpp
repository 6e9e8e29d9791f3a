#include "harness/register_backend.hpp"
#include "runtimes/native/native.hpp"

COOPBENCH_REGISTER_BACKEND(coopbench::NativeBackend, "native",
                           "coop: cooperative lock-free user-level threads (Negele et al. 2017) on "
                           "Boost.Context, global lock-free ready queues, finalizer-based sync",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
// The same runtime with processor-local ready queues (runtimes/native/ws/): one
// type, the policy fixed per name (coop::Options::scheduling).
COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::NativeBackend, "native-ws",
                                   "coop with per-processor ready rings, runnext and steal-half work stealing "
                                   "(Go's design; global lock-free queue for overflow and fairness)",
                                   {{"scheduling", "work_stealing"}},
                                   {{"guard", "on", "guard page below each activity stack", {"on", "off"}}});
COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::NativeBackend, "native-parasail",
                                   "coop with per-processor LIFO deques stolen FIFO under the asymmetric "
                                   "owner guard (ParaSail, Taft 2012)",
                                   {{"scheduling", "parasail"}},
                                   {{"guard", "on", "guard page below each activity stack", {"on", "off"}}});
