// start.hpp — starting an application's threads all-or-nothing.
//
// The apps' threads depend on each other (a house waits for the power plant, a player for
// its neighbour), so if the backend refuses a thread half-way through spawning, the threads
// already running could block forever. Every app therefore spawns its threads behind a
// StartGate: each thread's body first calls gate.wait(), which blocks (through the
// backend's Mutex/CondVar, never spinning, so cooperative backends run other threads) until
// the spawner calls go() — every thread was created, run the program — or abort() — a spawn
// failed, return at once without touching the shared state. Either way Group::join_all()
// then joins everything, so a failed point leaves nothing behind.
//
// Ownership: the gate lives in the workload's run() and outlives the threads it gates
// (they are joined before run() returns).
#pragma once

#include <cstddef>
#include <string>

#include "runtimes/concept.hpp"
#include "workloads/common.hpp"

namespace coopbench::apps {

// StartGate — a one-shot blocking gate with an abort outcome.
template <Backend B>
class StartGate {
  public:
    // wait — block until go() or abort(); true means run, false means return at once.
    bool wait() {
        mutex_.lock();
        while (state_ == State::closed) opened_.wait(mutex_);
        const bool run = state_ == State::go;
        mutex_.unlock();
        return run;
    }
    // go — release every waiter (and later caller of wait) to run.
    void go() { open(State::go); }
    // abort — release every waiter to return without running.
    void abort() { open(State::aborted); }

  private:
    enum class State { closed, go, aborted };
    void open(State s) {
        mutex_.lock();
        state_ = s;
        opened_.notify_all();
        mutex_.unlock();
    }
    typename B::Mutex mutex_;
    typename B::CondVar opened_;
    State state_ = State::closed;  // guarded by mutex_
};

// spawn_gated — spawn `n` threads running body(i) for i in [0, n) behind `gate`; on success
// open the gate (go) and return true; on a refused spawn abort the gate, join what was
// spawned and return false (group.error() says why).
template <Backend B, class Body>
bool spawn_gated(Group<B>& group, StartGate<B>& gate, std::size_t n, Body body) {
    for (std::size_t i = 0; i < n; ++i) {
        if (!group.spawn([&gate, body, i]() mutable {
                if (gate.wait()) body(i);
            })) {
            gate.abort();
            group.join_all();
            return false;
        }
    }
    gate.go();
    return true;
}

}  // namespace coopbench::apps
