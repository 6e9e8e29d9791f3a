"""test_run_sh — the README's two commands, scripts/run.sh and scripts/test.sh, around stand-ins.

Each test copies run.sh, test.sh and build-env.sh into a fresh folder laid out as the
repository, with stand-ins for what they call: install-deps.sh (nothing to install), cmake,
ctest and ccache on PATH (they log their arguments), the driver build/release/harness/coopbench
(writes a results.csv with the rows a test asks for and exits with the code it asks for) and
scripts/plot.py (writes report.md). So the tests see in a second:
  * the two commands configure build/release with the same cache values (else each rebuilds
    what the other built: a changed compiler launcher or warning flag changes every command line);
  * run.sh exits 0 when the only points that did not run are refused (a system limit known before
    the run, status `refused`), says so, and exits 3 when a point failed.
Run: /usr/bin/python3 -m unittest -v test_run_sh (in tests/scripts).
"""

import os
import shutil
import stat
import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import synthetic  # noqa: E402

HEADER = "point,backend,workload,processors,repetition,iteration,phase,status,value,reason"


def _exe(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class RunShTest(synthetic.TempDirCase):
    def setUp(self):
        super().setUp()
        self.root = self.tmp / "repo"
        for f in ("run.sh", "test.sh", "build-env.sh"):
            (self.root / "scripts").mkdir(parents=True, exist_ok=True)
            if (ROOT / "scripts" / f).exists():
                shutil.copy2(ROOT / "scripts" / f, self.root / "scripts" / f)
        _exe(self.root / "scripts" / "install-deps.sh", "#!/bin/sh\nexit 0\n")
        (self.root / "scripts" / "plot.py").write_text(
            "import sys, pathlib\n(pathlib.Path(sys.argv[1]) / 'report.md').write_text('# report\\n')\n")
        self.bin = self.tmp / "bin"
        self.log = self.tmp / "calls.log"
        for tool in ("cmake", "ctest", "ccache"):
            _exe(self.bin / tool, f'#!/bin/sh\necho "{tool} $*" >> "{self.log}"\nexit 0\n')
        # The driver: `run ... --out DIR` writes FAKE_ROWS (one per line) under a header, exits FAKE_RC.
        _exe(self.root / "build" / "release" / "harness" / "coopbench", """#!/usr/bin/env bash
out=""
while [ $# -gt 0 ]; do case "$1" in --out|-o) out="$2"; shift ;; esac; shift; done
mkdir -p "$out"
{ echo '""" + HEADER + """'; printf '%s\\n' "$FAKE_ROWS"; } > "$out/results.csv"
exit "${FAKE_RC:-0}"
""")

    def run_script(self, name, *args, rows=(), rc=0):
        env = dict(os.environ, PATH=f"{self.bin}:{os.environ['PATH']}", FAKE_ROWS="\n".join(rows),
                   FAKE_RC=str(rc))
        return subprocess.run(["bash", str(self.root / "scripts" / name), *args], capture_output=True, text=True,
                              env=env, cwd=self.root, timeout=120)

    def configure_lines(self):
        return [ln for ln in self.log.read_text().splitlines() if ln.startswith("cmake --preset")]

    def test_run_and_test_configure_build_release_alike(self):
        p = self.run_script("run.sh", "--out", self.tmp / "out", rows=["a/x/P=1,a,x,1,0,0,measure,ok,1,"])
        self.assertEqual(p.returncode, 0, p.stderr)
        run_cfg = self.configure_lines()
        self.log.unlink()
        p = self.run_script("test.sh", "release")
        self.assertEqual(p.returncode, 0, p.stderr)
        test_cfg = self.configure_lines()
        self.assertEqual(len(run_cfg), 1, run_cfg)
        self.assertEqual(run_cfg, test_cfg)
        self.assertIn("-DCOOPBENCH_WERROR=ON", run_cfg[0])
        self.assertIn("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", run_cfg[0])

    def test_only_refusals_exit_0(self):
        rows = ["a/x/P=1,a,x,1,0,0,measure,ok,1,",
                "pthreads/create/N=100000/P=2,pthreads,create,2,0,0,measure,refused,,100000 threads exceed pid_max"]
        for driver_rc in (0, 3):  # the driver after and before it stopped counting refusals in exit code 3
            with self.subTest(driver_rc=driver_rc):
                p = self.run_script("run.sh", "--out", self.tmp / f"out{driver_rc}", rows=rows, rc=driver_rc)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertIn("1 point(s) refused", p.stderr)
                self.assertNotIn("failed", p.stderr)

    def test_a_failed_point_exits_3(self):
        rows = ["a/x/P=1,a,x,1,0,0,measure,failed,,self-check failed",
                "pthreads/create/N=100000/P=2,pthreads,create,2,0,0,measure,refused,,100000 threads exceed pid_max"]
        p = self.run_script("run.sh", "--out", self.tmp / "out", rows=rows, rc=3)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("1 point(s) failed", p.stderr)
        self.assertIn("1 point(s) refused", p.stderr)


if __name__ == "__main__":
    unittest.main()
