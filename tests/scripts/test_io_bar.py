"""test_io_bar — scripts/io_bar.py, the I/O workloads' comparison tables, on synthetic folders (synthetic_io).

coop's best against the best of Go, tokio and Asio per point: ahead everywhere when coop's base rate is the highest,
nowhere when Go's is raised above it; client-bound points judged on server CPU per request; a point with a failed
peer judged on the peers that ran; the epoll ceiling's ratio; the open loop's p99 at 50 % load only; RSS per idle
connection against Go's alone; the hogs' p99 per slice. A folder that is not a results folder: exit 2.
Run: /usr/bin/python3 -m unittest -v test_io_bar (in tests/scripts).
"""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synthetic_io  # noqa: E402

SCRIPT = HERE.parent.parent / "scripts" / "io_bar.py"
BACKENDS = ("native-ws", "native", "go", "tokio", "asio", "epoll")


def bar(folder):
    r = subprocess.run([sys.executable, str(SCRIPT), str(folder)], capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


class IoBar(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.saved = dict(synthetic_io.BASE)

    def tearDown(self):
        synthetic_io.BASE.clear()
        synthetic_io.BASE.update(self.saved)
        self.tmp.cleanup()

    def test_coop_ahead_everywhere_when_its_rate_is_highest(self):
        rc, out, err = bar(synthetic_io.make_io_results(self.dir / "a", backends=BACKENDS))
        self.assertEqual(rc, 0, err)
        # 2 sizes x 4 connection counts x P=1,2; Go's failed point (10 connections, P=2) judged on tokio and Asio.
        self.assertIn("coop's best ahead at 16 of 16 points", out)
        self.assertIn("client-bound; CPU/request", out)  # 100 and 1000 connections are client-bound
        self.assertIn("| 0.91 |", out)  # coop / epoll: 1.0 / 1.1
        self.assertIn("native-ws", out)
        self.assertNotIn("| native |", out)
        # echo-open at 50 % only: 100 connections at P=1 and 2.
        self.assertIn("p99 (us) at 50 % of each server's own maximum: coop's best at most the best peer's at 2 of 2", out)
        # RSS per idle connection: coop's 9.0 KiB against Go's 6.0, 2 idle counts x 2 P.
        self.assertIn("RSS per idle connection (KiB): coop's best at most the best peer's at 0 of 4", out)
        self.assertIn("| coop / Go |", out)
        # Hogs: coop's p99 2.0 x the slice against the peers' 1.2 x.
        self.assertIn("while hogs compute: coop's best at most the best peer's at 0 of 6", out)

    def test_coop_behind_everywhere_when_gos_rate_is_higher(self):
        synthetic_io.BASE["go"] = 1.2
        rc, out, err = bar(synthetic_io.make_io_results(self.dir / "b", backends=BACKENDS))
        self.assertEqual(rc, 0, err)
        # Go's failed point leaves tokio and Asio there, whom coop is ahead of: 14 behind, 2 ahead (64 and 512 B).
        self.assertIn("coop's best ahead at 2 of 16 points", out)
        self.assertIn("behind", out)

    def test_not_a_results_folder(self):
        rc, _, err = bar(self.dir)
        self.assertEqual(rc, 2)
        self.assertIn("io_bar.py:", err)


if __name__ == "__main__":
    unittest.main()
