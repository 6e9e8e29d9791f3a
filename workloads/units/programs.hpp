// programs.hpp — Quirk's two benchmark programs (2008, section 9), written once over a
// "system" Sys and run on two: UnitsSys (units.hpp: lock-free units, OwnerQueue, futures
// on coop) and MutexSys<B> (baseline.hpp: one mutex per unit, mutex+condition futures,
// thread per message, on any backend B). The program text is the same for both.
//
// fib: free `fib` operations, each spawning two recursive fib sends and a `plus` that
// receives both futures; `work` iterations of extra work in every fib and plus.
// ddb: 4 server units own disjoint key sets (by a hash of the key) and offer put, get and
// increment; 28 client units each run `rounds` steps: increment a counter key (the hot key
// 0 with probability hot_pct %, else one of the other counters), get a data key, and take
// action on the value the previous get returned (an odd value is put back, plus one); the
// next step receives this step's get future, so it starts when that is resolved.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "units/baseline.hpp"
#include "units/units.hpp"

namespace coopbench::unitsprog {

// spin — `n` iterations of work the compiler cannot remove (the paper's "counting to ten
// thousand").
inline void spin(std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) asm volatile("" ::: "memory");
}

// UnitsSys — the lock-free units of units.hpp.
struct UnitsSys {
    template <class R>
    using Future = units::Future<R>;
    template <class S>
    using Unit = units::Unit<S>;
    template <class... A>
    static auto send(A&&... a) {
        return units::send(std::forward<A>(a)...);
    }
    template <class R>
    static auto ready(R&& v) {
        return units::make_ready_future(std::forward<R>(v));
    }
};

// MutexSys — the baseline on backend B (one System at a time: `system`).
template <class B>
struct MutexSys {
    template <class R>
    using Future = units::baseline::Future<B, R>;
    template <class S>
    using Unit = units::baseline::Unit<B, S>;
    static inline units::baseline::System<B>* system = nullptr;
    template <class... A>
    static auto send(A&&... a) {
        return system->send(std::forward<A>(a)...);
    }
    template <class R>
    static auto ready(R&& v) {
        return units::baseline::make_ready_future<B>(std::forward<R>(v));
    }
};

// ---- fib ----------------------------------------------------------------------------

template <class Sys>
typename Sys::template Future<long> fib(long k, std::int64_t work) {
    spin(work);
    if (k < 2) return Sys::ready(k);
    auto a = Sys::send(&fib<Sys>, k - 1, work);
    auto b = Sys::send(&fib<Sys>, k - 2, work);
    return Sys::send(
        [work](typename Sys::template Future<long> x, typename Sys::template Future<long> y) {
            spin(work);
            return x.get() + y.get();
        },
        std::move(a), std::move(b));
}

// fib_expected — fib(k) iteratively; fib_messages — the messages fib(k) sends (the root
// included): m(k) = 1 for k < 2, m(k) = 2 + m(k-1) + m(k-2) (two fib sends and a plus).
inline long fib_expected(long k) {
    long a = 0, b = 1;
    for (long i = 0; i < k; ++i) {
        long c = a + b;
        a = b;
        b = c;
    }
    return a;
}
inline long fib_messages(long k) {
    long m0 = 1, m1 = 1;  // m(0), m(1)
    if (k < 2) return 1;
    for (long i = 2; i <= k; ++i) {
        long m = 2 + m1 + m0;
        m0 = m1;
        m1 = m;
    }
    return m1;
}

// ---- ddb ----------------------------------------------------------------------------

struct DdbParams {
    long clients = 28, servers = 4, rounds = 500, counters = 64, data_keys = 1024, hot_pct = 50;
    std::int64_t work = 50;
};

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser: the key hash
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

struct Server {
    std::unordered_map<long, long> kv;
};

template <class Sys>
struct Ddb {
    using ServerUnit = typename Sys::template Unit<Server>;
    struct Client;
    using ClientUnit = typename Sys::template Unit<Client>;
    struct Client {
        Ddb* db = nullptr;
        ClientUnit* self = nullptr;
        std::uint64_t rng = 1;
        long left = 0;
        std::vector<long> increments;  // per counter key, sent by this client
        std::uint64_t next() { return rng = mix(rng); }
    };

    DdbParams p;
    std::vector<std::unique_ptr<ServerUnit>> servers;
    std::vector<std::unique_ptr<ClientUnit>> clients;

    explicit Ddb(const DdbParams& params) : p(params) {
        for (long s = 0; s < p.servers; ++s) servers.push_back(std::make_unique<ServerUnit>());
        for (long c = 0; c < p.clients; ++c) {
            clients.push_back(std::make_unique<ClientUnit>());
            Client& st = clients.back()->state();
            st.db = this;
            st.self = clients.back().get();
            st.rng = static_cast<std::uint64_t>(c) + 1;
            st.left = p.rounds;
            st.increments.assign(static_cast<std::size_t>(p.counters), 0);
        }
    }

    // Keys: counters are 0 .. counters-1 (0 is hot), data keys follow them.
    ServerUnit& server_of(long key) { return *servers[mix(static_cast<std::uint64_t>(key)) % servers.size()]; }

    static long op_increment(Server& s, long key, std::int64_t work) {
        spin(work);
        return ++s.kv[key];
    }
    static long op_get(Server& s, long key, std::int64_t work) {
        spin(work);
        auto it = s.kv.find(key);
        return it == s.kv.end() ? 0 : it->second;
    }
    static long op_put(Server& s, long key, long value, std::int64_t work) {
        spin(work);
        s.kv[key] = value;
        return value;
    }

    // step — one round of a client; returns the future of its last get (flattened through
    // the remaining rounds), so a client's first send resolves when it has finished.
    static typename Sys::template Future<long> step(Client& c, long index, typename Sys::template Future<long> last) {
        Ddb& db = *c.db;
        const DdbParams& p = db.p;
        const long prev = last.get();
        const long data_base = p.counters;
        if (prev % 2 != 0) {  // action on the value: put it back, plus one
            const long key = data_base + static_cast<long>(c.next() % static_cast<std::uint64_t>(p.data_keys));
            (void)Sys::send(db.server_of(key), &Ddb::op_put, key, prev + 1, p.work);
        }
        const bool hot = static_cast<long>(c.next() % 100) < p.hot_pct;
        const long counter = hot || p.counters == 1
                                 ? 0
                                 : 1 + static_cast<long>(c.next() % static_cast<std::uint64_t>(p.counters - 1));
        ++c.increments[static_cast<std::size_t>(counter)];
        (void)Sys::send(db.server_of(counter), &Ddb::op_increment, counter, p.work);
        const long key = data_base + static_cast<long>(c.next() % static_cast<std::uint64_t>(p.data_keys));
        auto got = Sys::send(db.server_of(key), &Ddb::op_get, key, p.work);
        if (--c.left <= 0) return got;
        return Sys::send(*c.self, &Ddb::step, index, std::move(got));
    }

    // start — every client's first step; the futures resolve when the clients finished.
    std::vector<typename Sys::template Future<long>> start() {
        std::vector<typename Sys::template Future<long>> fs;
        for (long c = 0; c < p.clients; ++c)
            fs.push_back(Sys::send(*clients[static_cast<std::size_t>(c)], &Ddb::step, c, Sys::ready(0L)));
        return fs;
    }

    // check — after everything ran: each counter's value equals the increments sent to it.
    std::string check(bool inject_fault) {
        for (long k = 0; k < p.counters; ++k) {
            long sent = 0;
            for (auto& c : clients) sent += c->state().increments[static_cast<std::size_t>(k)];
            auto& kv = server_of(k).state().kv;
            auto it = kv.find(k);
            long got = it == kv.end() ? 0 : it->second;
            if (inject_fault && k == 0) got -= 1;
            if (got != sent)
                return "self-check failed: counter key " + std::to_string(k) + " = " + std::to_string(got) +
                       ", increments sent " + std::to_string(sent);
        }
        return {};
    }

    // hot_server — the index of the server that holds the hot key 0.
    std::size_t hot_server() const { return mix(0) % servers.size(); }

    // messages — operations run: per step 1 increment + 1 get + 1 step, plus the puts.
    std::uint64_t operations() const {
        std::uint64_t n = 0;
        for (auto& s : servers) n += s->operations();
        for (auto& c : clients) n += c->operations();
        return n;
    }
};

}  // namespace coopbench::unitsprog
