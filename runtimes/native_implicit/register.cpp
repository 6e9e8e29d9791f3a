// register.cpp — registers `native-implicit`. Compiled by clang++ -fpass-plugin=libCoopQuantum.so
// (CMakeLists.txt here), so every workload instantiated for NativeImplicitBackend below
// carries the quantum checks.
#include "harness/registry.hpp"
#include "runtimes/native_implicit/implicit.hpp"

#if !defined(__clang__)
#error "native_implicit/register.cpp must be compiled by clang++ with the CoopQuantum plugin"
#endif

COOPBENCH_REGISTER_BACKEND(coopbench::NativeImplicitBackend, "native-implicit",
                           "coop with the workloads compiled by clang + the CoopQuantum plugin: quantum "
                           "checks at function entries and loop latches (implicit cooperative multitasking, "
                           "Sect. 3.1)",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
