"""synthetic — write a synthetic coopbench results folder (docs/results-format.md) for the script tests.

The header comes from harness/schema.json (coopbench.schema.concrete_columns), the one
schema; `legacy=True` leaves out the version-2 columns (iteration, phase, load_*,
runnable_*, noisy) as a folder written before them.

make_results(folder, scale=1.0, backends=..., processors=(1, 2), repetitions=3,
warmup=0, iterations=1, noisy=(), legacy=False, workloads=None)
writes results.csv and context.json with: the four microbenchmarks (create, switch,
lock-local, lock-global) and an unknown workload (`mystery`, param M and a choice
param `mode`); several backends and P values; repetitions; failed points (pthreads
and stdthread cannot create N >= 100000 threads: every repetition fails; one
repetition of native switch T=10 P=1 fails its self-check) and counters. Values are
deterministic: value = base(backend, workload, x) * scale * (1 + small jitter per rep),
so a folder written with scale=2 has every ok median exactly twice the scale=1 one.
Each repetition (fork) has `warmup` warm-up iterations then `iterations` timed ones; the
defaults (0, 1) give one cold row per fork, iteration 0. With more iterations, iteration 0
of a fork is its cold run, COLD_FACTOR times the warm value. Points whose id is in
`noisy` have fork 0 marked noisy (load 3.5 on a 2-core machine).

write_cells(folder, params, cells, noisy) writes a hand-made folder instead: one median in ms
per (backend, workload, parameters, P), each as 3 forks of one timed iteration (the tables'
tests). The tests' shared pieces: run(script, *args) runs a script of scripts/ in a
subprocess, TempDirCase gives each test a fresh self.tmp folder, md_rows(md) reads a
Markdown table's cells.
"""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
sys.path.insert(0, str(SCRIPTS))
from coopbench import schema  # noqa: E402

PARAMS = ("K", "M", "N", "T", "mode")
COLUMNS = schema.concrete_columns(PARAMS)
LEGACY_COLUMNS = [c for c in COLUMNS if c not in schema.LEGACY_COLUMNS]
COLD_FACTOR = 3.0

BACKENDS = ("pthreads", "stdthread", "native", "boostfiber/work_stealing")
BASE = {"pthreads": 9000.0, "stdthread": 9500.0, "native": 60.0, "boostfiber/work_stealing": 400.0}
# The failure reason used for a backend that cannot create that many threads.
CREATE_FAIL_REASON = "spawn failed at thread 32750: Resource temporarily unavailable (EAGAIN)"
SELFCHECK_FAIL_REASON = "self-check: yields = 19999, expected 20000"


def point_id(backend, workload, params, p):
    """point_id — the canonical id: backend/workload/K=v/.../P=p, parameters sorted by name."""
    return "/".join([backend, workload] + [f"{k}={params[k]}" for k in sorted(params)] + [f"P={p}"])


def _rows(backends, processors, repetitions, scale, warmup=0, iterations=1, noisy=()):
    grid = {
        "create": ("ns/thread", [{"N": n} for n in (1, 10, 100, 1000, 10000, 100000, 1000000)]),
        "switch": ("ns/switch", [{"T": t, "K": 2000} for t in (1, 2, 10, 100, 1000)]),
        "lock-local": ("ns/lock", [{"T": t, "K": 20000} for t in (1, 2, 4, 8)]),
        "lock-global": ("ns/lock", [{"T": t, "K": 20000} for t in (1, 2, 4, 8)]),
        "mystery": ("ms", [{"M": m, "mode": mode} for m in (1, 2) for mode in ("a", "b")]),
    }
    factor = {"create": 1.0, "switch": 0.5, "lock-local": 0.05, "lock-global": 0.3, "mystery": 0.001}
    for b in backends:
        family = b.split("/")[0]
        for w, (unit, pts) in grid.items():
            for params in pts:
                x = params.get("N", params.get("T", params.get("M", 1)))
                for p in processors:
                    for r in range(repetitions):
                        failed, reason = False, ""
                        if w == "create" and family in ("pthreads", "stdthread") and x >= 100000:
                            failed, reason = True, CREATE_FAIL_REASON
                        if w == "switch" and b == "native" and x == 10 and p == processors[0] and r == 1:
                            failed, reason = True, SELFCHECK_FAIL_REASON
                        growth = (1 + 0.1 * len(str(x))) if w != "lock-global" else x
                        value = BASE[b] * factor[w] * growth / p * scale * (1 + 0.02 * ((r % 3) - 1))
                        if r == repetitions // 2:
                            value = BASE[b] * factor[w] * growth / p * scale  # the median is exact
                        pid = point_id(b, w, params, p)
                        is_noisy = pid in noisy and r == 0
                        for it in range(warmup + iterations):
                            # Iteration 0 is the cold run; later ones are warm and spread by +-1 % around value.
                            v = value * (COLD_FACTOR if it == 0 and warmup + iterations > 1 else
                                         1 + 0.01 * ((it % 3) - 1) * (it > 0))
                            row = {c: "" for c in COLUMNS}
                            row.update({
                                "point": pid, "backend": b, "family": family, "workload": w,
                                "processors": p, "repetition": r, "iteration": it,
                                "phase": "warmup" if it < warmup else "measure", "unit": unit,
                                "status": "failed" if failed else "ok", "reason": reason,
                                "counters": json.dumps({"timeouts_pct": 1.5}) if w == "mystery" else "",
                                "load_before": 3.5 if is_noisy else 0.25, "load_after": 3.25 if is_noisy else 0.5,
                                "runnable_before": 3 if is_noisy else 0, "runnable_after": 2 if is_noisy else 0,
                                "other_cpus": 1.5 if is_noisy else 0.0, "steal_cpus": 0.0,
                                "noisy": "true" if is_noisy else "false",
                            })
                            for k, pv in params.items():
                                row["param." + k] = pv
                            if not failed:
                                row.update({"value": repr(v), "seconds": repr(v * 1e-6),
                                            "peak_rss_kib": 2048 + r, "cpu_seconds": repr(value * 2e-6)})
                            yield row


def make_results(folder, scale=1.0, backends=BACKENDS, processors=(1, 2), repetitions=3, workloads=None,
                 warmup=0, iterations=1, noisy=(), legacy=False):
    """make_results — write results.csv and context.json into folder (created); returns the folder Path."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=LEGACY_COLUMNS if legacy else COLUMNS, extrasaction="ignore")
        wr.writeheader()
        for row in _rows(backends, processors, repetitions, scale, warmup, iterations, noisy):
            if workloads is None or row["workload"] in workloads:
                wr.writerow(row)
    # The keys every run writes (harness/schema.json's context, "when": "run"), typed as the
    # driver writes them (harness/machine.cpp, harness/sweep.cpp). legacy=True: as a driver
    # before the typed context wrote them (every value a string, the sweep a JSON string).
    sweep = {"plan": "quick", "backends": list(backends), "workloads": [], "repetitions": repetitions,
             "processors": list(processors), "isolation": "process", "timeout_seconds": 60}
    context = {
        "host": "testhost", "cpu_model": "Synthetic CPU @ 2.0GHz", "cpu_id": "family 6 model 1",
        "cpu_mitigations": "none reported", "cores_available": 2,
        "physical_cores": 2, "logical_cpus": 2, "sockets": 1, "numa_nodes": 1,
        "kernel": "Linux 6.1.0-test x86_64", "compiler": "GNU 12.2.0", "build_type": "Release",
        "build_flags": "-O2 -Wall -Wextra", "git_commit": "0123456789ab",
        "plan": "quick", "points": len(backends) * 24 * len(processors), "repetitions": repetitions,
        "warmup": None, "iterations": None, "isolation": "process", "coopbench_command": "coopbench run",
        "oversubscribed": False, "sweep": sweep,
    }
    if legacy:
        context = {k: (json.dumps(v, indent=2) if isinstance(v, dict) else
                       "per point" if v is None else str(v).lower() if isinstance(v, bool) else str(v))
                   for k, v in context.items()}
    (d / "context.json").write_text(json.dumps(context, indent=2))
    return d


def write_cells(folder, params, cells, noisy=lambda backend, workload, values, p, fork: False):
    """write_cells — results.csv and context.json of a hand-made folder (created; returned as a Path): the schema's
    columns with param.<name> for each name in `params`; cells maps (backend, workload, parameters as a tuple of
    (name, value) items, P) to a median in ms, written as 3 forks of one timed iteration each (x1.1, x1, x0.9: the
    median is exact). A fork for which noisy(backend, workload, parameters as a dict, P, fork) is true carries the
    harness's noisy mark and its load figures."""
    columns = schema.concrete_columns(params)
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=columns)
        wr.writeheader()
        for (backend, workload, items, p), ms in cells.items():
            values = dict(items)
            for fork, jitter in enumerate((1.1, 1.0, 0.9)):
                busy = noisy(backend, workload, values, p, fork)
                row = {c: "" for c in columns}
                row.update({"point": point_id(backend, workload, values, p), "backend": backend,
                            "family": backend.split("/")[0], "workload": workload, "processors": p,
                            "repetition": fork, "iteration": 0, "phase": "measure", "unit": "ms", "status": "ok",
                            "value": repr(ms * jitter), "seconds": repr(ms * jitter / 1e3),
                            "load_before": 3.5 if busy else 0.2, "load_after": 3.0 if busy else 0.2,
                            "runnable_before": 3 if busy else 0, "runnable_after": 2 if busy else 0,
                            "other_cpus": 1.5 if busy else 0.0, "steal_cpus": 0.0, "noisy": "true" if busy else "false"})
                for k, v in values.items():
                    row["param." + k] = v
                wr.writerow(row)
    (d / "context.json").write_text(json.dumps({"host": "testhost", "cores_available": 2}))
    return d


def md_rows(md):
    """md_rows — the lines of the Markdown table in md as lists of cells (header first)."""
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in line.strip().strip("|").split(" | ")] for line in lines]


def run(script, *args):
    """run — a script from scripts/ in a subprocess (its own matplotlib config folder); returns CompletedProcess
    (text)."""
    env = dict(os.environ, MPLCONFIGDIR=tempfile.mkdtemp(prefix="mpl-"))
    return subprocess.run([sys.executable, str(SCRIPTS / script), *map(str, args)], capture_output=True,
                          text=True, env=env, timeout=300)


class TempDirCase(unittest.TestCase):
    """TempDirCase — each test gets a fresh folder self.tmp (named after `prefix`), removed after it."""
    prefix = "coopbench-test-"

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix=self.prefix))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


if __name__ == "__main__":
    import sys
    make_results(sys.argv[1], scale=float(sys.argv[2]) if len(sys.argv) > 2 else 1.0)
