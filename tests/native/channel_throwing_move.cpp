// channel_throwing_move.cpp — compiled by CTest, never linked: coop::Channel<T> with a T whose
// move may throw must fail to compile with channel.hpp's static_assert (a throwing move
// would leave the channel's lock held or a dequeued peer never woken; the reason is in
// channel.hpp). With -DCOOPBENCH_NOTHROW_MOVE the same T's moves are noexcept and the file
// must compile (so the failure is the throwing move, nothing else).
#include <stdexcept>

#include "coop/channel.hpp"

#ifdef COOPBENCH_NOTHROW_MOVE
#define MAYBE_NOEXCEPT noexcept
#define MAYBE_THROW(cond)
#else
#define MAYBE_NOEXCEPT
#define MAYBE_THROW(cond) \
    if (cond) throw std::runtime_error("move failed")
#endif

struct Fragile {
    int v = 0;
    Fragile() = default;
    Fragile(Fragile&& o) MAYBE_NOEXCEPT : v(o.v) {
        MAYBE_THROW(v < 0);
    }
    Fragile& operator=(Fragile&& o) MAYBE_NOEXCEPT {
        MAYBE_THROW(o.v < 0);
        v = o.v;
        return *this;
    }
};

void use(coop::Channel<Fragile>& ch) {
    ch.send(Fragile{});
    (void)ch.recv();
}
