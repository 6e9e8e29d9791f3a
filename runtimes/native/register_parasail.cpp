// register_parasail.cpp — backend `native-parasail`: coop with owner-guarded LIFO deques,
// typed (NativeBackendOf<Scheduling::parasail>); scheduling=parasail recorded with every row.
#include "harness/register_backend.hpp"
#include "runtimes/native/native.hpp"

COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::NativeBackendOf<coop::Scheduling::parasail>, "native-parasail",
                                   "coop with per-processor LIFO deques stolen FIFO under the asymmetric "
                                   "owner guard (ParaSail, Taft 2012)",
                                   {{"scheduling", "parasail"}},
                                   {{"guard", "on", "guard page below each activity stack", {"on", "off"}}});
