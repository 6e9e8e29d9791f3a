// register.cpp — registers `native-implicit`: compiled by clang++ -fpass-plugin=libCoopQuantum.so
// (CMakeLists.txt here), so every workload instantiated for NativeImplicitBackend below
// carries the quantum checks. Compiled a second time with the plugin's unrolling only
// (-mllvm -coop-quantum-unroll-only) and COOP_NATIVE_CLANG defined, it registers
// `native-clang`, the baseline without checks.
#include "harness/register_backend.hpp"
#include "runtimes/native_implicit/implicit.hpp"

#if !defined(__clang__)
#error "native_implicit/register.cpp must be compiled by clang++ with the CoopQuantum plugin"
#endif

#if defined(COOP_NATIVE_CLANG)
COOPBENCH_REGISTER_BACKEND(coopbench::NativeClangBackend, "native-clang",
                           "coop with the workloads compiled by clang with the CoopQuantum plugin's short-loop "
                           "unrolling and no check (the baseline of native-implicit)",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
#else
COOPBENCH_REGISTER_BACKEND(coopbench::NativeImplicitBackend, "native-implicit",
                           "coop with the workloads compiled by clang + the CoopQuantum plugin: quantum "
                           "checks at function entries and loop latches (implicit cooperative multitasking, "
                           "Sect. 3.1)",
                           {{"guard", "on", "guard page below each activity stack (off: the paper's micro stacks)",
                             {"on", "off"}}});
#endif
