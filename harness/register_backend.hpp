// register_backend.hpp — what a backend's register.cpp includes: the registration macros,
// which instantiate every workload of workloads/all.hpp for the backend. The registry
// itself (harness/registry.hpp) depends on no workload; this header is where the workload
// list meets the backends.
//
//   COOPBENCH_REGISTER_BACKEND(Type, "name", "description" [, {options}])
//   COOPBENCH_REGISTER_BACKEND_VARIANT(Type, "family/variant", "description", {fixed} [, {options}])
//
// Each static_asserts the Backend concept first, so a missing member is named by the
// concept rather than deep inside a workload. See harness/registry.hpp for the meaning of
// the fixed options (e.g. max_processors) and docs/adding-a-backend.md for a walk-through.
#pragma once

#include <string>

#include "harness/registry.hpp"
#include "workloads/all.hpp"
#include "runtimes/channel.hpp"  // channel_kind: the backend's channel, for context.json

#define COOPBENCH_CAT2(a, b) a##b
#define COOPBENCH_CAT(a, b) COOPBENCH_CAT2(a, b)

// COOPBENCH_REGISTER_BACKEND(Type, "name", "description" [, options]) — one line per backend.
#define COOPBENCH_REGISTER_BACKEND(Type, name, description, ...)                                     \
    static_assert(::coopbench::Backend<Type>, #Type " does not satisfy coopbench::Backend");          \
    [[maybe_unused]] static const bool COOPBENCH_CAT(coopbench_registered_, __LINE__) =               \
        ::coopbench::register_backend<Type, ::coopbench::AllWorkloads>(                                  \
            name, description, __FILE__, std::string(::coopbench::channel_kind<Type>()), {} __VA_OPT__(, ) __VA_ARGS__)

// COOPBENCH_REGISTER_BACKEND_VARIANT(Type, "family/variant", "description", {fixed}, {options})
#define COOPBENCH_REGISTER_BACKEND_VARIANT(Type, name, description, fixed, ...)                      \
    static_assert(::coopbench::Backend<Type>, #Type " does not satisfy coopbench::Backend");          \
    [[maybe_unused]] static const bool COOPBENCH_CAT(coopbench_registered_, __LINE__) =               \
        ::coopbench::register_backend<Type, ::coopbench::AllWorkloads>(                                  \
            name, description, __FILE__, std::string(::coopbench::channel_kind<Type>()), fixed __VA_OPT__(, ) __VA_ARGS__)
