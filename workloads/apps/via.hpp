// via.hpp — the workload parameter `via` of the apps that pass values between threads
// (City, Eratosthenes, Producer, TokenRing), and the two kinds of buffer it chooses.
//
//   via=monitor  the paper's program (Negele et al. 2017, section 5): a bounded buffer is a
//                BoundedBuffer (one B::Mutex, two B::CondVars), a one-slot mailbox a
//                Mailbox (two B::Semaphores) — workloads/apps/channel.hpp. The default.
//   via=channel  the same program over apps::channel_t<B, T>: the backend's own channel when
//                it brings one (runtimes/concept.hpp, HasChannel), else GenericChannel; a
//                bounded buffer of capacity C is a channel of capacity C, a mailbox a channel
//                of capacity 1.
//
// Both variants are the same computation: the same threads put and take the same values
// in the same order, and a pipeline's end is the same terminator value (channels are never
// closed, so send never throws ChannelClosed and recv always returns a value; a recv that
// returns nothing would be a broken channel and throws ChannelBroken).
//
// Pipe<B, T, via> has put/take for both, so an app's run() is written once as a template
// over its buffer type and instantiated for each variant.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/workload.hpp"
#include "workloads/apps/channel.hpp"

namespace coopbench::apps {

// Via — which buffers an app passes its values through (see the file comment).
enum class Via { monitor, channel };

// via_param — the parameter's declaration, for WorkloadInfo::params.
inline ParamSpec via_param() {
    return {"via", "monitor",
            "the buffers: monitor = the paper's program (mutex + condition variables, semaphores); "
            "channel = the same program over the backend's channel",
            1,
            {"monitor", "channel"}};
}

// both_vias — both values, for plans.
inline std::vector<std::string> both_vias() { return {"monitor", "channel"}; }

// via_of — the point's variant (monitor when the parameter is absent: a caller that sets
// only the paper's parameters gets the paper's program).
inline Via via_of(const Context& ctx) {
    const auto it = ctx.params.find("via");
    if (it == ctx.params.end() || it->second == "monitor") return Via::monitor;
    if (it->second == "channel") return Via::channel;
    throw std::invalid_argument("parameter via: \"" + it->second + "\" is not monitor or channel");
}

// ChannelBroken — a channel's recv returned nothing although no one closed it.
class ChannelBroken : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

// Pipe — a blocking FIFO of capacity C (>= 1) with put/take, as the variant says.
template <Backend B, class T, Via via>
class Pipe;

template <Backend B, class T>
class Pipe<B, T, Via::monitor> {
  public:
    explicit Pipe(std::size_t capacity) : buffer_(capacity) {}
    void put(T v) { buffer_.put(std::move(v)); }
    T take() { return buffer_.take(); }

  private:
    BoundedBuffer<B, T> buffer_;
};

template <Backend B, class T>
class Pipe<B, T, Via::channel> {
  public:
    // Never closed (see the file comment), so a backend may use its channel without close.
    explicit Pipe(std::size_t capacity) : channel_(never_closed_channel<channel_t<B, T>>(capacity)) {}
    void put(T v) { channel_.send(std::move(v)); }
    T take() {
        auto v = channel_.recv();
        if (!v) throw ChannelBroken("recv found the channel closed, which no one closed");
        return std::move(*v);
    }

  private:
    channel_t<B, T> channel_;
};

// Box — a blocking one-slot mailbox (default-constructible, for arrays of them).
template <Backend B, class T, Via via>
class Box;

template <Backend B, class T>
class Box<B, T, Via::monitor> : public Mailbox<B, T> {};

template <Backend B, class T>
class Box<B, T, Via::channel> : public Pipe<B, T, Via::channel> {
  public:
    Box() : Pipe<B, T, Via::channel>(1) {}
};

}  // namespace coopbench::apps
