"""test_go.py COOPBENCH — the `go` backend (runtimes/go) through the real binary: every
workload at its tiny plan with its self-check passing, at 1 and 2 processors, and
--inject-fault caught by every workload's self-check (as tests/apps does for C++); the apps
that pass values in both variants of their parameter via (monitor: sync.Mutex/sync.Cond
buffers as the C++ programs; channel: Go's chan). Exits
77 (CTest: skipped) with one line saying why when the go backend is absent."""
import json
import unittest

import program_backend as pb
from program_backend import params, rows, run

WORKLOADS = {"create", "switch", "lock-local", "lock-global", "city", "eratosthenes", "mandelbrot", "matrix",
             "news", "producer", "tokenring", "skynet", "channel", "echo", "echo-open", "http-hello",
             "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle", "echo-hogs"}
# The I/O workloads (io.go): served by the program, measured by the harness's load generator,
# whose counters they carry (not the program's gomaxprocs).
IO_WORKLOADS = {"echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle", "echo-hogs"}
# The apps with the parameter via, each run in both variants by the tiny plan.
VIA_APPS = {(w, v) for w in ("city", "eratosthenes", "producer", "tokenring") for v in ("monitor", "channel")}


def vias(got):
    return {(r["workload"], r["param.via"]) for r in got if r.get("param.via")}


class Go(unittest.TestCase):
    def run_go(self, *extra):
        return run("-b", "go", "--plan", "tiny", "-P", "1,2", *extra, prefix="coopbench-go-test.")

    def test_every_workload_at_tiny_passes_its_self_check(self):
        out = self.run_go()
        got = rows(out)
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        self.assertEqual(vias(got), VIA_APPS)
        bad = [(r["point"], r["reason"]) for r in got if r["status"] != "ok"]
        self.assertEqual(bad, [])
        for r in got:
            if r["workload"] in IO_WORKLOADS:
                continue
            c = json.loads(r["counters"])
            self.assertEqual(c["gomaxprocs"], float(r["processors"]), r["point"])  # GOMAXPROCS = P
        ctx = json.loads(open(out + "/context.json").read())
        self.assertTrue(ctx["backend.go.go_version"].startswith("go"))
        self.assertIn("backend.go.GOGC", ctx)

    def test_a_point_that_cannot_fit_is_refused_not_failed(self):
        pb.check_refuses_what_cannot_fit(self, "go")

    def test_warmup_and_iterations_run_in_one_process(self):
        # The program declares "iterations" in --list, so a fork is W warm-up + I timed runs of
        # the workload inside one Go process; each reply says which run of its process it was.
        pb.check_runs_in_one_process(self, rows(run("-b", "go", "-w", "create,tokenring", "--plan", "tiny", "-P", "1",
                                                    "-r", "2", "-W", "2", "-I", "3", prefix="coopbench-go-test.")))

    def test_the_monitor_variant_loses_no_wake_up_under_stress(self):
        # The sync.Cond buffers and semaphore mailboxes at capacity 1 with many waiters, on more
        # processors than cores: a lost wake-up hangs the point until --timeout fails it.
        for w, ps in (("producer", ["N=16", "C=1", "K=2000"]), ("eratosthenes", ["N=3000", "C=1"]),
                      ("city", ["N=100", "K=50", "C=1"]), ("tokenring", ["N=50", "K=200"])):
            got = rows(run("-b", "go", "-w", w, "-P", "2,4", "-W", "0", "-I", "5", *params("via=monitor", *ps),
                           point_timeout=30, prefix="coopbench-go-test."))
            self.assertEqual(len(got), 2 * 5, w)
            self.assertEqual([(r["point"], r["reason"]) for r in got if r["status"] != "ok"], [], w)

    def test_an_injected_fault_is_caught_by_every_workload(self):
        got = rows(self.run_go("--inject-fault"))
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        self.assertEqual(vias(got), VIA_APPS)
        missed = [r["point"] for r in got if r["status"] != "failed" or "self-check failed" not in r["reason"]]
        self.assertEqual(missed, [])


if __name__ == "__main__":
    pb.main("go", "no Go >= 1.18 at configure time; apt-get install golang-go")
