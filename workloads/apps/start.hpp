// start.hpp — the apps' names for the one start gate (workloads/common.hpp: StartGate,
// spawn_gated). The apps' threads depend on each other (a house waits for the power plant, a
// player for its neighbour), so they start all-or-nothing behind a blocking StartGate: a
// refused spawn aborts the gate, the threads already running return at once, and the point
// fails with the backend's reason.
#pragma once

#include "workloads/common.hpp"

namespace coopbench::apps {

using coopbench::spawn_gated;
using coopbench::StartGate;

}  // namespace coopbench::apps
