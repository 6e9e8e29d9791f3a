// implicit.hpp — backend `native-implicit`: coop (the `native` backend) with the workloads
// compiled by clang++ with the CoopQuantum pass plugin (plugin/), which inserts the
// paper's quantum checks at function entries and loop latches (Negele et al. 2017,
// Sect. 3.1: implicit cooperative multitasking). The runtime is the same libcoop, compiled
// without the plugin. A distinct type, so that every workload is instantiated for it in
// register.cpp, the one translation unit compiled with the plugin.
#pragma once

#include <string_view>

#include "runtimes/native/native.hpp"

namespace coopbench {

struct NativeImplicitBackend : NativeBackend {
    static constexpr std::string_view name = "native-implicit";
};

// NativeClangBackend — `native-clang`: the same translation unit compiled by the same clang++
// with the plugin's short-loop unrolling and no check: the baseline that separates the
// checks' cost from the compiler's and the unrolling's (g++ builds `native`).
struct NativeClangBackend : NativeBackend {
    static constexpr std::string_view name = "native-clang";
};

static_assert(Backend<NativeImplicitBackend>, "NativeImplicitBackend does not satisfy coopbench::Backend");
static_assert(Backend<NativeClangBackend>, "NativeClangBackend does not satisfy coopbench::Backend");

}  // namespace coopbench
