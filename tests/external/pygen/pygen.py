#!/usr/bin/python3
"""pygen.py — an external coopbench backend in plain Python 3: user-level threads as
generators on one OS thread, a round-robin scheduler, a mutex and one-slot mailboxes that
block by leaving the run queue. Written from docs/adding-a-backend.md ("A backend in another
language") alone; it implements create, switch, lock-local, lock-global and tokenring.

A thread is a generator: `yield` switches to the next runnable thread; `yield from` a
blocking operation (Mutex.lock, Mailbox.take/put, join) parks it until another thread wakes
it. One OS thread runs them all: the manifest declares max_processors 1.
"""
import collections
import json
import sys
import time

BLOCK = object()  # yielded by a thread that has parked itself (it is not put back in the queue)


class Thread:
    __slots__ = ("gen", "done", "joiners")

    def __init__(self, gen):
        self.gen = gen
        self.done = False
        self.joiners = []


class Scheduler:
    def __init__(self):
        self.ready = collections.deque()
        self.current = None

    def spawn(self, gen):
        t = Thread(gen)
        self.ready.append(t)
        return t

    def wake(self, t):
        self.ready.append(t)

    def join(self, t):
        """A generator: wait until thread t has finished."""
        while not t.done:
            t.joiners.append(self.current)
            yield BLOCK

    def run(self):
        ready = self.ready
        while ready:
            t = ready.popleft()
            self.current = t
            try:
                what = next(t.gen)
            except StopIteration:
                t.done = True
                for j in t.joiners:
                    ready.append(j)
                t.joiners = []
                continue
            if what is not BLOCK:
                ready.append(t)  # a plain yield: to the back of the queue


class Mutex:
    def __init__(self, sched):
        self.sched = sched
        self.held = False
        self.waiters = collections.deque()

    def lock(self):
        while self.held:
            self.waiters.append(self.sched.current)
            yield BLOCK
        self.held = True

    def unlock(self):
        self.held = False
        if self.waiters:
            self.sched.wake(self.waiters.popleft())


class Mailbox:
    """One slot: put blocks while it is full, take while it is empty."""

    def __init__(self, sched):
        self.sched = sched
        self.full = False
        self.value = None
        self.takers = collections.deque()
        self.putters = collections.deque()

    def put(self, v):
        while self.full:
            self.putters.append(self.sched.current)
            yield BLOCK
        self.value, self.full = v, True
        if self.takers:
            self.sched.wake(self.takers.popleft())

    def take(self):
        while not self.full:
            self.takers.append(self.sched.current)
            yield BLOCK
        v, self.value, self.full = self.value, None, False
        if self.putters:
            self.sched.wake(self.putters.popleft())
        return v


def expect(what, got, want):
    """The self-check's verdict, worded as the C++ workloads word it."""
    return "passed" if got == want else f"self-check failed: {what} = {got}, expected {want}"


def create(p, fault):
    # Timed from before the first spawn to after the last join; each thread sets its flag.
    n = int(p["N"])
    s = Scheduler()
    ran = bytearray(n)
    out = {}

    def body(i):
        ran[i] = 1
        return
        yield  # a generator with an empty body

    def main():
        start = time.perf_counter()
        threads = [s.spawn(body(i)) for i in range(n)]
        for t in threads:
            yield from s.join(t)
        out["secs"] = time.perf_counter() - start

    s.spawn(main())
    s.run()
    if fault and n > 0:
        ran[n // 2] = 0
    secs = out["secs"]
    return secs, secs * 1e9 / max(n, 1), expect("threads that ran", sum(ran), n), {}


def gated(p, per_thread):
    """T threads behind a start gate: all exist before the clock starts; timed from opening
    the gate to after the last join."""
    t_count, k = int(p["T"]), int(p["K"])
    s = Scheduler()
    gate = {"open": False}
    out = {}

    def body(i):
        while not gate["open"]:  # the gate: wait, yielding, until the clock starts
            yield
        yield from per_thread(s, i, k)

    def main():
        threads = [s.spawn(body(i)) for i in range(t_count)]
        start = time.perf_counter()
        gate["open"] = True
        for t in threads:
            yield from s.join(t)
        out["secs"] = time.perf_counter() - start

    s.spawn(main())
    s.run()
    return out["secs"], t_count, k


def switch(p, fault):
    yields = collections.Counter()

    def per_thread(s, i, k):
        for _ in range(k):
            yield
            yields[i] += 1

    secs, t_count, k = gated(p, per_thread)
    total = sum(yields.values()) - (1 if fault else 0)
    return secs, secs * 1e9 / (t_count * k), expect("yields", total, t_count * k), {}


def lock(glob):
    def workload(p, fault):
        counters = collections.Counter()
        mutexes = {}

        def per_thread(s, i, k):
            slot = 0 if glob else i
            m = mutexes.setdefault(slot, Mutex(s))
            for _ in range(k):
                yield from m.lock()
                counters[slot] += 1
                m.unlock()

        secs, t_count, k = gated(p, per_thread)
        total = sum(counters.values()) + (1 if fault else 0)
        return secs, secs * 1e9 / (t_count * k), expect("critical sections", total, t_count * k), {}

    return workload


def tokenring(p, fault):
    # N players, each with a one-slot mailbox, pass a token K times around; timed from before
    # the first spawn to after the last join; all players exist before any works (the start
    # gate: the token enters the ring after the last spawn).
    n, k = int(p["N"]), int(p["K"])
    s = Scheduler()
    boxes = [Mailbox(s) for _ in range(n)]
    handoffs = [0] * n
    out_of_order = [0] * n
    out = {}

    def player(i):
        nxt = boxes[(i + 1) % n]
        for rnd in range(k):
            token = yield from boxes[i].take()
            if token != i + rnd * n:
                out_of_order[i] += 1
            yield from nxt.put(token + 1)
            handoffs[i] += 1

    def main():
        start = time.perf_counter()
        players = [s.spawn(player(i)) for i in range(n)]
        yield from boxes[0].put(0)
        for t in players:
            yield from s.join(t)
        out["secs"] = time.perf_counter() - start
        out["final"] = yield from boxes[0].take()

    s.spawn(main())
    s.run()
    final = out["final"] + (1 if fault else 0)
    check = expect("final token", final, n * k)
    if check == "passed":
        check = expect("hand-offs", sum(handoffs), n * k)
    if check == "passed":
        check = expect("hand-offs out of ring order", sum(out_of_order), 0)
    secs = out["secs"]
    return secs, secs * 1e3, check, {"handoffs": sum(handoffs)}


WORKLOADS = {"create": create, "switch": switch, "lock-local": lock(False), "lock-global": lock(True),
             "tokenring": tokenring}

if sys.argv[1:] == ["--list"]:
    print(json.dumps({"protocol": 1, "workloads": sorted(WORKLOADS), "iterations": True,
                      "context": {"python": sys.version.split()[0]}}))
    sys.exit(0)

req = json.loads(sys.stdin.readline())
work = WORKLOADS.get(req["workload"])
if work is None:
    print(json.dumps({"status": "unsupported", "reason": "pygen does not implement " + req["workload"]}))
    sys.exit(0)
runs = []
for run in range(req["warmup"] + req["iterations"]):
    try:
        secs, value, check, counters = work(req["params"], req["inject_fault"])
    except MemoryError:
        runs.append({"status": "failed", "reason": "out of memory (MemoryError)"})
        break
    counters["process_run"] = run
    runs.append({"status": "ok", "seconds": secs, "value": value, "check": check, "counters": counters})
    if check != "passed":
        break  # a failed run ends the fork, as in the C++ workloads
print(json.dumps({"runs": runs}))
