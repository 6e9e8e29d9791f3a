"""test_hogs.py COOPBENCH — echo-hogs' self-check (workloads/io/hogs.hpp): a point whose hogs never ran fails.
With the test-only environment variable COOPBENCH_TEST_LAZY_HOGS every server (a C++ backend's in-process
one, each external program) skips starting its hogs; the tiny plan of echo-hogs must then fail on every
backend that serves it, each point naming hog_slices = 0, while its echo load itself passes."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import unittest

BIN = None


def backends():
    listing = json.loads(subprocess.run([BIN, "list", "--json"], capture_output=True, text=True, check=True).stdout)
    return sorted(b["name"] for b in listing["backends"] if "echo-hogs" in b.get("workloads", []))


class Hogs(unittest.TestCase):
    def test_hogs_that_did_not_run_fail_the_point(self):
        names = backends()
        for must in ("pthreads", "epoll", "native-ws"):
            self.assertIn(must, names)
        d = tempfile.mkdtemp(prefix="coopbench-hogs-test.")
        env = dict(os.environ, COOPBENCH_TEST_LAZY_HOGS="1")
        p = subprocess.run([BIN, "run", "--timeout", "60", "-o", d + "/run", "-q", "-b", ",".join(names), "-w",
                            "echo-hogs", "--plan", "tiny", "-P", "1", "-W", "0", "-I", "1"],
                           capture_output=True, text=True, timeout=600, env=env)
        self.assertEqual(p.returncode, 3, p.stderr)  # some points failed
        with open(d + "/run/results.csv") as f:
            got = list(csv.DictReader(f))
        self.assertEqual({r["backend"] for r in got}, set(names))
        missed = [(r["point"], r["status"], r["reason"]) for r in got
                  if r["status"] != "failed" or "self-check failed: hog_slices = 0" not in r["reason"]]
        self.assertEqual(missed, [])


if __name__ == "__main__":
    BIN = sys.argv.pop(1)
    unittest.main()
