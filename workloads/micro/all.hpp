// all.hpp — the paper's microbenchmarks (Negele et al. 2017, section 6).
#pragma once

#include "harness/typelist.hpp"
#include "workloads/micro/channel.hpp"
#include "workloads/micro/create.hpp"
#include "workloads/micro/lock.hpp"
#include "workloads/micro/share.hpp"
#include "workloads/micro/skynet.hpp"
#include "workloads/micro/switch.hpp"

namespace coopbench {

using MicroWorkloads = TypeList<Create, Switch, LockLocal, LockGlobal, Share, Skynet, ChannelPingPong>;

}  // namespace coopbench
