"""test_io.py COOPBENCH — the I/O workloads (workloads/io/: echo.hpp, http.hpp, rpc.hpp, churn.hpp, idle.hpp, hogs.hpp) through
the real binary: the tiny plan of echo, http-hello and rpc, closed and open loop, on every
backend that serves them in this build (C++ backends
with their in-process server, external programs through coopbench-loadgen host), every point ok
with its latency and CPU counters; then with --inject-fault every server's corrupted byte is
caught by the load generator's byte check."""
import csv
import json
import subprocess
import sys
import tempfile
import unittest

BIN = None
IO = {"echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle", "echo-hogs"}
HTTP_RESPONSE = 78  # bytes (harness/loadgen/protocol.hpp; docs/io-workloads.md)


def rows(folder):
    with open(f"{folder}/results.csv") as f:
        return list(csv.DictReader(f))


def io_backends():
    listing = json.loads(subprocess.run([BIN, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    return sorted(b["name"] for b in listing["backends"] if IO <= set(b.get("workloads", [])))


def run(*args):
    d = tempfile.mkdtemp(prefix="coopbench-io-test.")
    p = subprocess.run([BIN, "run", "--timeout", "60", "-o", d + "/run", "-q", *args], capture_output=True, text=True,
                       timeout=600)
    want = 3 if "--inject-fault" in args else 0
    if p.returncode != want:
        raise AssertionError(f"coopbench run {' '.join(args)} exited {p.returncode}, not {want}:\n{p.stderr}")
    return rows(d + "/run")


class Io(unittest.TestCase):
    def test_tiny_plan_on_every_backend_that_serves_it(self):
        backends = io_backends()
        # The OS-thread backends, coop's three algorithms (coop/io.hpp) and the epoll ceiling are
        # always built; Go, tokio and Asio
        # when their tools are there (each counted where present).
        for must in ("pthreads", "stdthread", "epoll", "native", "native-ws", "native-parasail"):
            self.assertIn(must, backends)
        got = run("-b", ",".join(backends), "-w", ",".join(sorted(IO)), "--plan", "tiny", "-P", "1", "-W", "0", "-I", "1")
        self.assertEqual({(r["backend"], r["workload"]) for r in got}, {(b, w) for b in backends for w in IO})
        self.assertEqual([(r["point"], r["reason"]) for r in got if r["status"] != "ok"], [])
        for r in got:
            c = json.loads(r["counters"])
            self.assertGreater(c["requests"], 0, r["point"])
            per = {"http": HTTP_RESPONSE, "rpc": 128}.get(r["workload"].split("-")[0], 64)
            self.assertGreaterEqual(c["bytes_checked"], per * c["requests"], r["point"])
            self.assertLessEqual(c["p50_us"], c["p99_us"], r["point"])
            self.assertLessEqual(c["p99_us"], c["p999_us"], r["point"])
            self.assertLessEqual(c["p999_us"], c["max_us"], r["point"])
            self.assertIn("server_cpu_us_per_request", c, r["point"])
            self.assertIn(c["client_bound"], (0, 1))
            self.assertIn(c["cpus_shared"], (0, 1))
            if r["workload"].startswith("rpc"):
                self.assertGreater(c["work_us"], 0, r["point"])
            if r["workload"] == "echo-idle":
                # The tiny plan's 100 idle connections: the server's RSS read around them, each
                # held by the server (else the point would have failed) and costing it memory.
                self.assertEqual(c["idle"], float(r["param.idle"]), r["point"])
                self.assertGreater(c["rss_before_kib"], 0, r["point"])
                self.assertGreaterEqual(c["rss_after_kib"], c["rss_before_kib"], r["point"])
                self.assertAlmostEqual(c["rss_per_idle_kib"], (c["rss_after_kib"] - c["rss_before_kib"]) / c["idle"],
                                       delta=1e-9, msg=r["point"])
            if r["workload"] == "echo-hogs":
                # The hogs ran beside the server (else the point would have failed) and the
                # counters say how many and with what slice.
                self.assertEqual(c["hogs"], float(r["param.hogs"]), r["point"])
                self.assertGreater(c["hog_slices"], 0, r["point"])
                self.assertEqual(c["slice_us"], float(r["param.slice_us"]), r["point"])
                self.assertGreater(c["slice_timed_us"], 0, r["point"])
            if r["workload"] == "churn":
                self.assertEqual(r["unit"], "connections/s")
                self.assertAlmostEqual(float(r["value"]), c["rate_rps"], delta=1e-6 * c["rate_rps"] + 1e-9)
            elif r["workload"] in ("echo", "http-hello", "rpc"):
                self.assertEqual(r["unit"], "requests/s")
                self.assertAlmostEqual(float(r["value"]), c["rate_rps"], delta=1e-6 * c["rate_rps"] + 1e-9)
            else:
                self.assertEqual(r["unit"], "us (p99)")
                self.assertAlmostEqual(float(r["value"]), c["p99_us"], delta=1e-6)
                self.assertGreater(c["offered_rps"], 0)

    def test_an_injected_fault_is_caught_on_every_backend(self):
        backends = io_backends()
        got = run("-b", ",".join(backends), "-w", ",".join(sorted(IO)), "--plan", "tiny", "-P", "1", "-W", "0", "-I",
                  "1", "--inject-fault")
        self.assertEqual({(r["backend"], r["workload"]) for r in got}, {(b, w) for b in backends for w in IO})
        prefix = {"http": "self-check failed: response byte 0 of", "rpc": "self-check failed: reply byte 0 of"}
        want = {w: prefix.get(w.split("-")[0], "self-check failed: echoed byte") for w in IO}
        missed = [(r["point"], r["reason"]) for r in got
                  if r["status"] != "failed" or want[r["workload"]] not in r["reason"]]
        self.assertEqual(missed, [])


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
