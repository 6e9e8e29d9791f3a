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

static_assert(Backend<NativeImplicitBackend>, "NativeImplicitBackend does not satisfy coopbench::Backend");

}  // namespace coopbench
