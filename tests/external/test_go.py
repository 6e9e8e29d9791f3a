"""test_go.py COOPBENCH — the `go` backend (runtimes/go) through the real binary: every
workload at its tiny plan with its self-check passing, at 1 and 2 processors, and
--inject-fault caught by every workload's self-check (as tests/apps does for C++). Exits
77 (CTest: skipped) with one line saying why when the go backend is absent."""
import csv
import json
import subprocess
import sys
import tempfile
import unittest

BIN = None
WORKLOADS = {"create", "switch", "lock-local", "lock-global", "city", "eratosthenes", "mandelbrot", "matrix",
             "news", "producer", "tokenring", "skynet", "channel"}


def rows(folder):
    with open(f"{folder}/results.csv") as f:
        return list(csv.DictReader(f))


class Go(unittest.TestCase):
    def run_go(self, *extra):
        d = tempfile.mkdtemp(prefix="coopbench-go-test.")
        subprocess.run([BIN, "run", "-b", "go", "--plan", "tiny", "-P", "1,2", "--timeout", "120", "-o", d + "/run",
                        "-q", *extra], check=True, capture_output=True, text=True, timeout=600)
        return d + "/run"

    def test_every_workload_at_tiny_passes_its_self_check(self):
        out = self.run_go()
        got = rows(out)
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        bad = [(r["point"], r["reason"]) for r in got if r["status"] != "ok"]
        self.assertEqual(bad, [])
        for r in got:
            c = json.loads(r["counters"])
            self.assertEqual(c["gomaxprocs"], float(r["processors"]), r["point"])  # GOMAXPROCS = P
        ctx = json.loads(open(out + "/context.json").read())
        self.assertTrue(ctx["backend.go.go_version"].startswith("go"))
        self.assertIn("backend.go.GOGC", ctx)

    def test_warmup_and_iterations_run_in_one_process(self):
        # The program declares "iterations" in --list, so a fork is W warm-up + I timed runs of
        # the workload inside one Go process; each reply says which run of its process it was.
        d = tempfile.mkdtemp(prefix="coopbench-go-test.")
        subprocess.run([BIN, "run", "-b", "go", "-w", "create,tokenring", "--plan", "tiny", "-P", "1", "-r", "2",
                        "-W", "2", "-I", "3", "--timeout", "120", "-o", d + "/run", "-q"],
                       check=True, capture_output=True, text=True, timeout=600)
        got = rows(d + "/run")
        forks = {}
        for r in got:
            self.assertEqual(r["status"], "ok", (r["point"], r["reason"]))
            forks.setdefault((r["point"], r["repetition"]), []).append(r)
        self.assertEqual(len(forks), 2 * len({r["point"] for r in got}))
        for key, runs in forks.items():
            self.assertEqual([int(r["iteration"]) for r in runs], [0, 1, 2, 3, 4], key)
            self.assertEqual([r["phase"] for r in runs], ["warmup"] * 2 + ["measure"] * 3, key)
            self.assertEqual([json.loads(r["counters"])["process_run"] for r in runs], [0, 1, 2, 3, 4], key)

    def test_an_injected_fault_is_caught_by_every_workload(self):
        got = rows(self.run_go("--inject-fault"))
        self.assertEqual({r["workload"] for r in got}, WORKLOADS)
        missed = [r["point"] for r in got if r["status"] != "failed" or "self-check failed" not in r["reason"]]
        self.assertEqual(missed, [])


if __name__ == "__main__":
    BIN = sys.argv[1]
    listing = json.loads(subprocess.run([BIN, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    if "go" not in {b["name"] for b in listing["backends"]}:
        print("SKIPPED: the go backend is absent (no Go >= 1.18 at configure time; apt-get install golang-go)")
        sys.exit(77)
    unittest.main(argv=[sys.argv[0], "-v"])
