"""program_backend — what the tests of a backend that is a program of its own (test_go.py, test_tokio.py)
share: run the real `coopbench` binary, read its results.csv, the checks every such backend passes the same
way, and the entry point that skips (exit 77, CTest's skip) when the build left the backend out.

A test module calls main("go", "why it may be absent") under `if __name__ == "__main__":`; its tests
then call run(...) (BIN is the binary named on the command line).
"""
import csv
import json
import subprocess
import sys
import tempfile
import unittest

BIN = None


def rows(folder):
    """rows — results.csv of a results folder, as dicts."""
    with open(f"{folder}/results.csv") as f:
        return list(csv.DictReader(f))


def run(*args, point_timeout=120, prefix="coopbench-program-backend-test."):
    """run — `coopbench run ARGS -o FRESH/run -q` with --timeout point_timeout (seconds per point); the results
    folder. The exit code must be 0, or 3 (the run ended with failed points, README "Exit codes") with
    --inject-fault."""
    d = tempfile.mkdtemp(prefix=prefix)
    p = subprocess.run([BIN, "run", "--timeout", str(point_timeout), "-o", d + "/run", "-q", *args],
                       capture_output=True, text=True, timeout=900)
    want = 3 if "--inject-fault" in args else 0
    if p.returncode != want:
        raise AssertionError(f"coopbench run {' '.join(args)} exited {p.returncode}, not {want}:\n{p.stderr}")
    return d + "/run"


def params(*values):
    """params — `--param NAME=v` for each value."""
    return [a for v in values for a in ("--param", v)]


def check_runs_in_one_process(test: unittest.TestCase, got):
    """check_runs_in_one_process — rows of a run with -r 2 -W 2 -I 3 of a program that declares "iterations" in
    --list: every point has 2 forks, each W warm-up + I timed runs of the workload inside one process, numbered
    0..4 in its rows and in the program's own count (counter process_run)."""
    forks = {}
    for r in got:
        test.assertEqual(r["status"], "ok", (r["point"], r["reason"]))
        forks.setdefault((r["point"], r["repetition"]), []).append(r)
    test.assertEqual(len(forks), 2 * len({r["point"] for r in got}))
    for key, runs in forks.items():
        test.assertEqual([int(r["iteration"]) for r in runs], [0, 1, 2, 3, 4], key)
        test.assertEqual([r["phase"] for r in runs], ["warmup"] * 2 + ["measure"] * 3, key)
        test.assertEqual([json.loads(r["counters"])["process_run"] for r in runs], [0, 1, 2, 3, 4], key)


def check_refuses_what_cannot_fit(test: unittest.TestCase, backend):
    """check_refuses_what_cannot_fit — `switch` with 10^12 threads, which no machine's memory holds: the program
    knows it before the run (its capacity check) and replies "refused", recorded as status refused with its
    reason (a result: the exit code stays 0), not as a failure."""
    got = rows(run("-b", backend, "-w", "switch", "-P", "1", "-W", "0", "-I", "1", *params("T=10^12", "K=1")))
    test.assertEqual([(r["status"], r["reason"].split(" need ")[0]) for r in got],
                     [("refused", "system limit: 1000000000000 " + ("goroutines" if backend == "go" else "tasks"))])
    test.assertIn("more than half of MemAvailable", got[0]["reason"])


def main(backend, why_absent):
    """main — BIN = argv[1]; exit 77 with one line when `backend` is not in the binary's list (why_absent says
    why it may be), else run the calling module's tests (verbose)."""
    global BIN
    BIN = sys.argv[1]
    listing = json.loads(subprocess.run([BIN, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    if backend not in {b["name"] for b in listing["backends"]}:
        print(f"SKIPPED: the {backend} backend is absent ({why_absent})")
        sys.exit(77)
    unittest.main(module="__main__", argv=[sys.argv[0], "-v"])
