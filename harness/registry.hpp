// registry.hpp — the registry of backends and workloads, which the driver reads. It knows
// nothing of which workloads or backends exist (as google/benchmark's registry does not):
// a backend registers itself with one line in its own .cpp file, through the macros of
// harness/register_backend.hpp (which brings the workload list, workloads/all.hpp):
//
//   #include "harness/register_backend.hpp"
//   COOPBENCH_REGISTER_BACKEND(PthreadsBackend, "pthreads",
//                              "POSIX threads: pthread_mutex_t, pthread_cond_t, sem_t");
//
// That line instantiates every workload of workloads/all.hpp for the backend (so the hot
// paths are compiled for it) and records the (backend, workload) runners. Several names
// may share one type with fixed options (variants), e.g. "boostfiber/work_stealing":
//
//   COOPBENCH_REGISTER_BACKEND_VARIANT(BoostFiber, "boostfiber/work_stealing", "...",
//                                      {{"algorithm", "work_stealing"}}, {...options...});
//
// The fixed option "max_processors" is read by the driver: the variant's points run on at
// most that many processors (e.g. a scheduler that serves a single thread).
//
// Adding a workload: one header under workloads/<area>/ and one entry in that area's
// all.hpp list (docs/adding-a-workload.md). Nothing in the driver names a backend or a
// workload, and this header includes none.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>
#include <climits>
#include <pthread.h>

#include "harness/run_point.hpp"  // run_point, the runner each registration records
#include "harness/workload.hpp"
#include "harness/typelist.hpp"
#include "runtimes/concept.hpp"

namespace coopbench {

// OptionSpec — a backend-specific option (--backend-opt key=value).
struct OptionSpec {
    std::string name;
    std::string default_value;
    std::string help;
    std::vector<std::string> choices = {};  // empty: free-form
};

using RunFn = Outcome (*)(const Context&);

// min_stack_size — the smallest --stack-size B takes: B::min_stack_size() when B declares
// it, else PTHREAD_STACK_MIN for a preemptive (OS-thread) backend, else one 4 KiB page. A
// smaller --stack-size is rejected by the driver (harness/plan.cpp) with this minimum.
template <Backend B>
std::size_t min_stack_size() {
    if constexpr (requires { { B::min_stack_size() } -> std::convertible_to<std::size_t>; })
        return B::min_stack_size();
    else if constexpr (is_preemptive<B>())
        return static_cast<std::size_t>(PTHREAD_STACK_MIN);
    else
        return 4096;
}

struct BackendEntry {
    std::string name;         // as users type it, e.g. "pthreads", "boostfiber/work_stealing"
    std::string family;       // the part before '/', e.g. "boostfiber"
    std::string description;  // one line
    std::string origin;       // the file that registered it
    bool preemptive = false;
    std::map<std::string, std::string> fixed;  // options fixed by this variant
    std::vector<OptionSpec> options;           // options users may set
    std::function<std::optional<std::string>(const RuntimeOptions&, std::size_t)> capacity;
    std::size_t min_stack_size = 0;            // the smallest --stack-size it takes (bytes)
    std::string channel;                       // what its channel is, in words (context.json)
    std::map<std::string, RunFn> runners;      // workload name -> runner
};

struct WorkloadEntry {
    std::function<WorkloadInfo(const Machine&)> info;
};

class Registry {
  public:
    static Registry& instance() {
        static Registry r;
        return r;
    }
    // add_backend — a second registration of the same name is ignored (the first stays).
    void add_backend(BackendEntry e) {
        if (backend(e.name)) return;
        backends_.push_back(std::move(e));
    }
    void add_workload(const std::string& name, WorkloadEntry e) { workloads_.emplace(name, std::move(e)); }

    const std::vector<BackendEntry>& backends() const { return backends_; }
    const std::map<std::string, WorkloadEntry>& workloads() const { return workloads_; }
    const BackendEntry* backend(const std::string& name) const {
        for (auto& b : backends_)
            if (b.name == name) return &b;
        return nullptr;
    }

  private:
    std::vector<BackendEntry> backends_;
    std::map<std::string, WorkloadEntry> workloads_;
};

template <class W, class B>
constexpr bool workload_supports() {
    if constexpr (requires { W::template supports<B>(); }) return W::template supports<B>();
    else return true;
}

namespace detail {
template <Backend B, class... Ws>
void add_runners(BackendEntry& e, TypeList<Ws...>) {
    Machine m;
    (
        [&] {
            if constexpr (workload_supports<Ws, B>()) e.runners[Ws::info(m).name] = &run_point<B, Ws>;
        }(),
        ...);
}
template <class... Ws>
void add_workloads(TypeList<Ws...>) {
    auto& r = Registry::instance();
    Machine m;
    ((r.workloads().count(Ws::info(m).name)
          ? void()
          : r.add_workload(Ws::info(m).name, WorkloadEntry{[](const Machine& mm) { return Ws::info(mm); }})),
     ...);
}
}  // namespace detail

// register_backend — what the macros of harness/register_backend.hpp expand to: B's
// runners for every workload of the list Ws (a TypeList) that supports B, and the entries of
// those workloads (a workload registered by an earlier backend stays as it was).
// `channel`: what B's channel is, in words (channel_kind<B>(), runtimes/channel.hpp, passed by the macros:
// this header includes no workload), recorded in context.json as backend.<name>.channel.
template <Backend B, class Ws>
bool register_backend(std::string name, std::string description, std::string origin, std::string channel,
                      std::map<std::string, std::string> fixed = {}, std::vector<OptionSpec> options = {}) {
    detail::add_workloads(Ws{});
    BackendEntry e;
    e.family = name.substr(0, name.find('/'));
    e.name = std::move(name);
    e.description = std::move(description);
    e.origin = std::move(origin);
    e.preemptive = is_preemptive<B>();
    e.fixed = std::move(fixed);
    e.options = std::move(options);
    e.capacity = [](const RuntimeOptions& o, std::size_t n) { return capacity_problem<B>(o, n); };
    e.min_stack_size = min_stack_size<B>();
    e.channel = std::move(channel);
    detail::add_runners<B>(e, Ws{});
    Registry::instance().add_backend(std::move(e));
    return true;
}

}  // namespace coopbench
