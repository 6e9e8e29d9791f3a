"""test_tokio.py COOPBENCH — the `tokio`, `tokio-std-mutex` and `tokio/current_thread` backends (runtimes/tokio)
through the real binary: every workload at its tiny plan with its self-check passing, at 1
and 2 processors (worker_threads = P), warm-up and timed runs in one process,
--inject-fault caught by every workload's self-check, and stress points for the monitors'
wake-ups (capacity-1 buffers, many waiters; the driver's --timeout turns a lost wake-up, a
hang, into a failed point); the release profile (LTO, one codegen unit, panic = "abort") in the
context, and a panicking run still replying the runs before it. Exits 77 (CTest: skipped) with one line saying why when the
tokio backend is absent."""
import json
import os
import subprocess
import tempfile
import unittest

import program_backend as pb
from program_backend import params, rows

WORKLOADS = {"create", "switch", "lock-local", "lock-global", "city", "eratosthenes", "mandelbrot", "matrix",
             "news", "producer", "tokenring", "echo", "echo-open", "http-hello", "http-hello-open", "rpc",
             "rpc-open", "churn", "echo-idle", "echo-hogs"}
# The I/O workloads (src/io.rs): served by the program, measured by the harness's load
# generator, whose counters they carry (not the program's worker_threads).
IO_WORKLOADS = {"echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle", "echo-hogs"}
# tokio-std-mutex lists only the workloads that lock a mutex (runtimes/tokio/src/main.rs).
STD_MUTEX_WORKLOADS = {"lock-local", "lock-global", "city", "eratosthenes", "news", "producer"}
VIAS = {"monitor", "channel"}


def run(*args, point_timeout=120):
    return pb.run(*args, point_timeout=point_timeout, prefix="coopbench-tokio-test.")


class Tokio(unittest.TestCase):
    def test_every_workload_at_tiny_passes_its_self_check(self):
        out = run("-b", "tokio,tokio-std-mutex", "--plan", "tiny", "-P", "1,2")
        got = rows(out)
        self.assertEqual({r["workload"] for r in got if r["backend"] == "tokio"}, WORKLOADS)
        self.assertEqual({r["workload"] for r in got if r["backend"] == "tokio-std-mutex"}, STD_MUTEX_WORKLOADS)
        bad = [(r["backend"], r["point"], r["reason"]) for r in got if r["status"] != "ok"]
        self.assertEqual(bad, [])
        for r in got:
            if r["workload"] in IO_WORKLOADS:
                continue
            c = json.loads(r["counters"])
            self.assertEqual(c["worker_threads"], float(r["processors"]), r["point"])  # worker_threads = P
        with open(out + "/context.json") as f:
            ctx = json.load(f)
        self.assertTrue(ctx["backend.tokio.tokio_version"].startswith("1."), ctx["backend.tokio.tokio_version"])
        self.assertIn("rt-multi-thread", ctx["backend.tokio.tokio_features"])
        self.assertEqual(ctx["backend.tokio.mutex"], "tokio::sync::Mutex")
        self.assertEqual(ctx["backend.tokio-std-mutex.mutex"], "std::sync::Mutex")

    def test_the_build_is_the_release_profile_tokio_users_build(self):
        # Cargo.toml's [profile.release]: fat LTO, one codegen unit, panic = "abort", recorded
        # in --list's context as backend.<name>.build (and .profile).
        out = run("-b", "tokio", "-w", "create", "--plan", "tiny", "-P", "1")
        with open(out + "/context.json") as f:
            ctx = json.load(f)
        for key in ("lto=fat", "codegen-units=1", "panic=abort", "opt-level=3"):
            self.assertIn(key, ctx["backend.tokio.build"])
        self.assertTrue(ctx["backend.tokio.build"].startswith("rustc 1."), ctx["backend.tokio.build"])

    def test_current_thread_runs_every_workload_at_one_processor(self):
        # tokio/current_thread: Builder::new_current_thread, every workload tokio runs, both
        # vias; a request for P=2 runs at P=1 (max_processors, as boostfiber/round_robin).
        out = run("-b", "tokio/current_thread", "--plan", "tiny", "-P", "1,2")
        got = rows(out)
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        self.assertEqual({r["processors"] for r in got}, {"1"})
        self.assertEqual([(r["point"], r["reason"]) for r in got if r["status"] != "ok"], [])
        apps = {"city", "eratosthenes", "producer", "tokenring"}
        self.assertEqual({(r["workload"], r["param.via"]) for r in got if r["workload"] in apps},
                         {(w, v) for w in apps for v in VIAS})
        for r in got:
            if r["workload"] not in IO_WORKLOADS:
                self.assertEqual(json.loads(r["counters"])["worker_threads"], 1.0, r["point"])
        with open(out + "/context.json") as f:
            ctx = json.load(f)
        self.assertEqual(ctx["backend.tokio/current_thread.runtime"], "tokio::runtime::Builder::new_current_thread")
        got = rows(run("-b", "tokio/current_thread", "--plan", "tiny", "-P", "1", "--inject-fault"))
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        self.assertEqual([r["point"] for r in got if r["status"] != "failed" or "self-check failed" not in r["reason"]],
                         [])

    def test_current_thread_refuses_more_processors_itself(self):
        # The program too refuses P > 1 (the harness never asks, max_processors): one line.
        manifest = json.loads(subprocess.run([pb.BIN, "list", "--json"], capture_output=True, text=True,
                                             check=True).stdout)
        names = {b["name"] for b in manifest["backends"]}
        self.assertIn("tokio/current_thread", names)
        program = self.program()
        req = {"protocol": 1, "workload": "create", "params": {"N": "10"}, "processors": 2, "warmup": 0,
               "iterations": 1}
        p = subprocess.run([program, "--runtime=current_thread"], input=json.dumps(req) + "\n", capture_output=True,
                           text=True, timeout=60)
        reply = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(reply["status"], "unsupported", reply)
        self.assertIn("processors must be 1", reply["reason"])

    def program(self):
        """program — the tokio program, from the context of a tiny run."""
        out = run("-b", "tokio", "-w", "create", "-p", "N=3", "-P", "1")
        with open(out + "/context.json") as f:
            return json.load(f)["backend.tokio.program"]

    def test_a_panicking_run_still_replies_the_runs_before_it(self):
        # panic = "abort" ends the process at a panic; the panic hook first replies the runs
        # measured before it and the panic as the failed run (as the JoinHandle's error did
        # with unwinding), so nothing measured is lost. COOPBENCH_TOKIO_TEST_PANIC=2: run 2 panics.
        d = tempfile.mkdtemp(prefix="coopbench-tokio-test.")
        for backend in ("tokio", "tokio/current_thread"):
            env = dict(os.environ, COOPBENCH_TOKIO_TEST_PANIC="2")
            p = subprocess.run([pb.BIN, "run", "-b", backend, "-w", "create", "-p", "N=10", "-P", "1", "-r", "1",
                                "-W", "1", "-I", "3", "-o", f"{d}/{backend.replace('/', '_')}", "-q"],
                               env=env, capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 3, p.stderr)  # the run ended with a failed point
            got = rows(f"{d}/{backend.replace('/', '_')}")
            # Each fork (the driver may retry a failed point) replies the warm-up and the first timed run,
            # then the panic.
            statuses = [r["status"] for r in got]
            self.assertTrue(statuses and len(statuses) % 3 == 0, (backend, statuses))
            self.assertEqual(statuses, ["ok", "ok", "failed"] * (len(statuses) // 3), backend)
            for r in got:
                if r["status"] == "failed":
                    self.assertIn("panicked: COOPBENCH_TOKIO_TEST_PANIC", r["reason"])

    def test_both_variants_of_via_pass_and_catch_a_fault(self):
        # The parameter via of the apps that pass values: monitor = apps.rs (the C++ programs),
        # channel = mpsc/oneshot (src/channels.rs); News has one program (no via).
        apps = ["city", "eratosthenes", "producer", "tokenring"]
        out = run("-b", "tokio", "-w", ",".join(apps), "--plan", "tiny", "-P", "1,2")
        got = rows(out)
        self.assertEqual({r["workload"] for r in got}, set(apps))
        self.assertEqual({(r["workload"], r["param.via"]) for r in got}, {(w, v) for w in apps for v in VIAS})
        self.assertEqual([(r["point"], r["reason"]) for r in got if r["status"] != "ok"], [])
        got = rows(run("-b", "tokio", "-w", ",".join(apps), "--plan", "tiny", "-P", "1,2", "--inject-fault"))
        self.assertEqual({(r["workload"], r["param.via"]) for r in got}, {(w, v) for w in apps for v in VIAS})
        missed = [r["point"] for r in got if r["status"] != "failed" or "self-check failed" not in r["reason"]]
        self.assertEqual(missed, [])

    def test_a_point_that_cannot_fit_is_refused_not_failed(self):
        pb.check_refuses_what_cannot_fit(self, "tokio")

    def test_warmup_and_iterations_run_in_one_process(self):
        # --list declares "iterations", so a fork is W warm-up + I timed runs in one runtime.
        got = rows(run("-b", "tokio", "-w", "create,tokenring", "--plan", "tiny", "-P", "1", "-r", "2",
                       "-W", "2", "-I", "3"))
        pb.check_runs_in_one_process(self, got)

    def test_an_injected_fault_is_caught_by_every_workload(self):
        got = rows(run("-b", "tokio,tokio-std-mutex", "--plan", "tiny", "-P", "1,2", "--inject-fault"))
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        missed = [(r["backend"], r["point"]) for r in got
                  if r["status"] != "failed" or "self-check failed" not in r["reason"]]
        self.assertEqual(missed, [])

    def test_monitors_lose_no_wake_up_under_stress(self):
        # Capacity-1 buffers with many producers and consumers (every put and take waits),
        # the sieve's chain of capacity-1 buffers, a board with many waiting readers, on two
        # workers and on more workers than cores, repeated: a lost wake-up hangs a point until
        # the driver's timeout fails it.
        for backend, via in (("tokio", "monitor"), ("tokio-std-mutex", "monitor"), ("tokio", "channel")):
            for w, ps in (("producer", ["N=16", "C=1", "K=2000", "via=" + via]),
                          ("eratosthenes", ["N=3000", "C=1", "via=" + via]),
                          ("news", ["N=200", "M=8", "K=50"]), ("city", ["N=100", "K=50", "C=1", "via=" + via])):
                got = rows(run("-b", backend, "-w", w, "-P", "2,4", "-r", "2", "-W", "0", "-I", "5", *params(*ps),
                               point_timeout=20))
                self.assertEqual(len(got), 2 * 2 * 5, (backend, w))
                bad = [(r["point"], r["reason"]) for r in got if r["status"] != "ok"]
                self.assertEqual(bad, [], (backend, w))


if __name__ == "__main__":
    pb.main("tokio", "no Debian cargo/rustc >= 1.63 or no librust-tokio-dev at configure time; apt-get install cargo "
                     "librust-tokio-dev librust-serde-json-dev librust-serde-derive-dev")
