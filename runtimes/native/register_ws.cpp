// register_ws.cpp — backend `native-ws`: coop with processor-local ready rings
// (coop/src/ws/), typed (NativeBackendOf<Scheduling::work_stealing>); the option
// scheduling=work_stealing is recorded with every row, as before the backends were typed.
#include "harness/register_backend.hpp"
#include "runtimes/native/native.hpp"

COOPBENCH_REGISTER_BACKEND_VARIANT(coopbench::NativeBackendOf<coop::Scheduling::work_stealing>, "native-ws",
                                   "coop with per-processor ready rings, runnext and steal-half work stealing "
                                   "(Go's design; global lock-free queue for overflow and fairness)",
                                   {{"scheduling", "work_stealing"}},
                                   {{"guard", "on", "guard page below each activity stack", {"on", "off"}}});
