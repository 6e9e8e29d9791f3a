#!/usr/bin/python3
"""fake_backend.py MODE — an external backend for the tests of the protocol
(harness/external.hpp). It "implements" create and switch (not lock-local etc., which must
then be skipped) and, per MODE, answers:

  good      a correct measurement (value from params, self-check passed)
  built     as good, and its --list context says how it was built ("build")
  crash     dies of SIGSEGV after reading the request
  hang      sleeps (in a child process too, which the harness must also kill)
  garbage   prints a line that is not JSON
  badcheck  a measurement whose self-check failed
  failed    status "failed" with a reason
  exit3     a correct line, then exit status 3
  silent    exits 0 without printing anything
  panic     a Go-style panic: "panic: ..." then a stack trace on stderr, exit status 2
  flood     FAKE_FLOOD_MIB (default 64) MiB on one stdout line (and as much on stderr), in
            1 MiB writes: the driver must read it with a bound
  deep-list      a --list answer whose context nests FAKE_DEPTH (default 100000) levels
  deep-reply     a reply nesting FAKE_DEPTH levels ({"runs": [[[...]]]}, about 200 KB)
  value-neg, seconds-neg, seconds-zero, value-inf-string
                 an "ok" reply with value -5, seconds -1, seconds 0
  it-many        iterates ("iterations": true in --list) and replies 50 runs, whatever was asked
  refused        status "refused": a limit known before the run (FAKE_REASON, or none given)
  it-refused     iterates, and its first run is refused
  grandchild     replies at once and exits, leaving a child in its process group and a setsid
                 grandchild, both holding stdout open and sleeping FAKE_SLEEP seconds
  tree           sleeps with a child in its group and a setsid grandchild (never replies)
  (grandchild, tree: the pids of the program and of each descendant go to $FAKE_PIDS, one a line)
"""
import json
import os
import signal
import subprocess
import sys
import time

mode = sys.argv[1]
depth = int(os.environ.get("FAKE_DEPTH", "100000"))
if sys.argv[2:] == ["--list"]:
    if mode == "deep-list":
        print('{"protocol": 1, "workloads": ["create"], "context": {"x": ' + "[" * depth + "]" * depth + '}}')
        sys.exit(0)
    context = {"fake_mode": mode}
    if mode == "built":
        context["build"] = "fakecc 1.0 -O2 -flto"
    print(json.dumps({"protocol": 1, "workloads": ["create", "switch", "no-such-workload"],
                      "context": context, "iterations": mode.startswith("it-")}))
    sys.exit(0)


def note_pid(pid):
    if "FAKE_PIDS" in os.environ:
        with open(os.environ["FAKE_PIDS"], "a") as f:
            f.write(f"{pid}\n")


def descendants(reply):
    """A child in the program's process group and a setsid grandchild (through a child that
    exits), each sleeping with stdout open; then the program replies (or sleeps: tree)."""
    note_pid(os.getpid())
    secs = float(os.environ.get("FAKE_SLEEP", "300"))
    if os.fork() == 0:
        note_pid(os.getpid())
        time.sleep(secs)
        os._exit(0)
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            note_pid(os.getpid())
            os.write(w, b"x")
            time.sleep(secs)
            os._exit(0)
        os._exit(0)
    os.read(r, 1)  # its pid is noted
    if reply is None:
        time.sleep(secs)
    print(json.dumps(reply))
    sys.stdout.flush()
    os._exit(0)


req = json.loads(sys.stdin.readline())
n = int(req["params"].get("N", req["params"].get("T", "1")))
good = {"status": "ok", "seconds": 0.001 * n, "value": 1000.0, "check": "passed",
        "counters": {"processors_seen": req["processors"], "inject_fault": int(req["inject_fault"])}}
if req["inject_fault"]:
    good["check"] = "self-check failed: threads that ran = %d, expected %d" % (n - 1, n)
if mode in ("good", "built"):
    print("some chatter before the result line")
    print(json.dumps(good))
elif mode == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
elif mode == "hang":
    subprocess.Popen(["sleep", os.environ.get("FAKE_SLEEP", "300")])
    signal.pause()
elif mode == "garbage":
    print("this is not { json")
elif mode == "badcheck":
    good["check"] = "threads that ran = 7, expected 8"
    print(json.dumps(good))
elif mode == "failed":
    print(json.dumps({"status": "failed", "reason": "fake refused the point"}))
elif mode == "exit3":
    print(json.dumps(good))
    sys.exit(3)
elif mode == "silent":
    sys.exit(0)
elif mode == "flood":
    chunk = b"x" * (1 << 20)
    for _ in range(int(os.environ.get("FAKE_FLOOD_MIB", "64"))):
        sys.stdout.buffer.write(chunk)
        sys.stderr.buffer.write(chunk)
    sys.stdout.buffer.write(b"\n")
    sys.stdout.flush()
elif mode == "deep-reply":
    print('{"runs": ' + "[" * depth + "]" * depth + '}')
elif mode in ("value-neg", "seconds-neg", "seconds-zero"):
    good.update({"value-neg": {"value": -5.0}, "seconds-neg": {"seconds": -1.0},
                 "seconds-zero": {"seconds": 0.0}}[mode])
    print(json.dumps(good))
elif mode == "it-many":
    print(json.dumps({"runs": [good] * 50}))
elif mode == "refused":
    reply = {"status": "refused"}
    if "FAKE_REASON" in os.environ:
        reply["reason"] = os.environ["FAKE_REASON"]
    print(json.dumps(reply))
elif mode == "it-refused":
    print(json.dumps({"runs": [{"status": "refused", "reason": "%d threads do not fit" % n}]}))
elif mode == "grandchild":
    descendants(good)
elif mode == "tree":
    descendants(None)
elif mode == "panic":
    sys.stderr.write("panic: fake ran out of patience\n\ngoroutine 1 [running]:\nmain.main()\n"
                     "\t/src/main.go:12 +0x1d\nexit status 2\n")
    sys.exit(2)
