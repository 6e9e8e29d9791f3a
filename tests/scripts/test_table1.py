"""test_table1 — scripts/figures/table1.py: the `best coop / tokio` ratio and the noise guard's marks.

Each test writes a results folder by hand (the schema's columns, coopbench.schema.concrete_columns,
with the `noisy` column the harness writes per fork), builds Table 1 from it and checks table1.csv,
table1.md and the figure. Run: /usr/bin/python3 -m unittest -v tests/scripts/test_table1.py
"""

import csv
import json
import math
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "scripts" / "figures"))
os.environ.setdefault("MPLBACKEND", "Agg")

import coopbench as cr  # noqa: E402
from coopbench import schema  # noqa: E402
import table1  # noqa: E402

COLUMNS = schema.concrete_columns(("C", "K", "M", "N"))
TOKENRING = {"N": 1000, "K": 1000}
CITY = {"N": 1000, "K": 10, "C": 100}


def write_folder(folder, cells, noisy=()):
    """write_folder — results.csv and context.json: cells maps (backend, workload, params as a tuple of items) to
    a median in ms; each cell gets 3 forks of one timed iteration each (x1.1, x1, x0.9: the median is exact). Forks listed in `noisy` as
    (backend, workload, fork) carry the harness's noisy mark (and its load figures)."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=COLUMNS)
        wr.writeheader()
        for (backend, workload, items), ms in cells.items():
            params = dict(items)
            pid = "/".join([backend, workload] + [f"{k}={params[k]}" for k in sorted(params)] + ["P=2"])
            for rep, jitter in enumerate((1.1, 1.0, 0.9)):
                busy = (backend, workload, rep) in noisy
                for it in range(1):
                    value = ms * jitter
                    row = {c: "" for c in COLUMNS}
                    row.update({"point": pid, "backend": backend, "family": backend.split("/")[0],
                                "workload": workload, "processors": 2, "repetition": rep, "iteration": it,
                                "phase": "measure", "unit": "ms", "status": "ok", "value": repr(value),
                                "seconds": repr(value / 1e3), "load_before": 3.5 if busy else 0.2,
                                "load_after": 3.0 if busy else 0.2, "runnable_before": 3 if busy else 0,
                                "runnable_after": 2 if busy else 0, "other_cpus": 1.5 if busy else 0.0,
                                "noisy": "true" if busy else "false"})
                    for k, v in params.items():
                        row["param." + k] = v
                    wr.writerow(row)
    (d / "context.json").write_text(json.dumps({"host": "testhost", "cores_available": 2}))
    return d


def cells(times, workload="tokenring", params=TOKENRING):
    return {(b, workload, tuple(params.items())): ms for b, ms in times.items()}


def md_rows(md):
    """The table's lines of table1.md as lists of cells (header first)."""
    lines = [l for l in md.splitlines() if l.startswith("| ")]
    return [[c.strip() for c in l.strip().strip("|").split(" | ")] for l in lines]


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Table1Tokio(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="coopbench-table1-"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_best_coop_over_tokio(self):
        # Token ring: native-ws (20 ms) is the fastest coop policy; City: native (30 ms). tokio takes 40 ms in both,
        # tokio-std-mutex (not the reference of this column) 10 ms.
        c = cells({"pthreads": 100.0, "native": 30.0, "native-ws": 20.0, "native-parasail": 60.0,
                   "go": 50.0, "tokio": 40.0, "tokio-std-mutex": 10.0})
        c.update(cells({"pthreads": 100.0, "native": 30.0, "native-ws": 35.0, "tokio": 40.0}, "city", CITY))
        res = cr.load(write_folder(self.dir / "r", c))
        out = self.dir / "out"
        table, md, _ = table1.write(res, out)
        ring = table[table["workload"] == "tokenring"].iloc[0]
        city = table[table["workload"] == "city"].iloc[0]
        self.assertEqual(ring["best coop"], "native-ws")
        self.assertAlmostEqual(ring["best coop / tokio"], 0.5)
        self.assertEqual(city["best coop"], "native")
        self.assertAlmostEqual(city["best coop / tokio"], 0.75)
        # The interval: each side's resampled median is one of its forks' values, so the ends are
        # 0.5 * 0.9/1.1 and 0.5 * 1.1/0.9 (each with probability (7/27)^2 > 2.5 %).
        self.assertAlmostEqual(ring["best coop / tokio lo"], 0.5 * 0.9 / 1.1)
        self.assertAlmostEqual(ring["best coop / tokio hi"], 0.5 * 1.1 / 0.9)
        rows = read_csv(out / "table1.csv")
        for col in ("best coop", "best coop / tokio", "best coop / tokio lo", "best coop / tokio hi"):
            self.assertIn(col, rows[0])
        ring_csv = next(r for r in rows if r["workload"] == "tokenring")
        self.assertEqual(ring_csv["best coop"], "native-ws")
        self.assertAlmostEqual(float(ring_csv["best coop / tokio"]), 0.5)
        header, *body = md_rows(md)
        self.assertIn("best coop / tokio", header)
        ring_md = dict(zip(header, next(r for r in body if r[0] == "Token Ring")))
        self.assertEqual(ring_md["best coop / tokio"], "native-ws: 0.50× (0.41–0.61)")
        self.assertIn("best coop / tokio", md.split("\n\n", 1)[1])  # the note says what the column is

    def test_no_tokio_no_columns(self):
        res = cr.load(write_folder(self.dir / "r", cells({"pthreads": 100.0, "native": 30.0, "go": 50.0})))
        table, md, _ = table1.write(res, self.dir / "out")
        self.assertFalse([c for c in table.columns if "tokio" in c or c == "best coop"])
        self.assertNotIn("tokio", md_rows(md)[0])
        self.assertNotIn("best coop", (self.dir / "out" / "table1.csv").read_text().splitlines()[0])

    def test_tokio_without_coop(self):
        # No coop backend ran: no best coop, the ratio is empty (not an error).
        res = cr.load(write_folder(self.dir / "r", cells({"pthreads": 100.0, "tokio": 40.0})))
        table = table1.build(res)
        r = table.iloc[0]
        self.assertEqual(r["best coop"], "")
        self.assertTrue(math.isnan(r["best coop / tokio"]))


class Table1Noisy(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="coopbench-table1-"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_noisy_cells_are_marked(self):
        # go's fork 1 of the token ring ran on a busy machine: go's time there, native / go and go / pthreads are
        # marked; native's time and City's cells are not.
        c = cells({"pthreads": 100.0, "native": 30.0, "go": 50.0, "tokio": 40.0})
        c.update(cells({"pthreads": 100.0, "native": 30.0, "go": 50.0, "tokio": 40.0}, "city", CITY))
        res = cr.load(write_folder(self.dir / "r", c, noisy={("go", "tokenring", 1), ("tokio", "city", 0)}))
        out = self.dir / "out"
        table, md, paths = table1.write(res, out)
        ring = table[table["workload"] == "tokenring"].iloc[0]
        city = table[table["workload"] == "city"].iloc[0]
        self.assertEqual(ring["noisy"], "go")
        self.assertEqual(city["noisy"], "tokio")
        rows = read_csv(out / "table1.csv")
        self.assertEqual({r["workload"]: r["noisy"] for r in rows}, {"tokenring": "go", "city": "tokio"})

        header, *body = md_rows(md)
        ring_md = dict(zip(header, next(r for r in body if r[0] == "Token Ring")))
        city_md = dict(zip(header, next(r for r in body if r[0] == "City")))
        dagger = table1.NOISY_MARK
        self.assertTrue(ring_md["go"].endswith(dagger), ring_md)
        self.assertTrue(ring_md["native / go"].endswith(dagger), ring_md)
        self.assertFalse(ring_md["native"].endswith(dagger), ring_md)
        self.assertFalse(ring_md["pthreads"].endswith(dagger), ring_md)
        self.assertFalse(ring_md["best coop / tokio"].endswith(dagger), ring_md)
        self.assertTrue(city_md["tokio"].endswith(dagger), city_md)
        self.assertTrue(city_md["best coop / tokio"].endswith(dagger), city_md)
        self.assertFalse(city_md["native / go"].endswith(dagger), city_md)
        self.assertFalse(city_md["go"].endswith(dagger), city_md)
        self.assertIn(f"{dagger}: measured while the machine was busy", md)

        # The figure marks them too: the noisy ratios to pthreads (go / pthreads on the token ring, tokio / pthreads
        # on City) are listed by figure_marks and the legend explains the mark.
        marks = table1.noisy_ratio_cells(table, table1.REFERENCE)
        self.assertEqual(sorted(marks), sorted([(list(table["workload"]).index("tokenring"), "go / pthreads"),
                                                (list(table["workload"]).index("city"), "tokio / pthreads")]))
        self.assertTrue(any(p.suffix == ".png" and p.stat().st_size > 0 for p in paths))

    def test_clean_folder_has_no_mark(self):
        res = cr.load(write_folder(self.dir / "r", cells({"pthreads": 100.0, "native": 30.0, "go": 50.0})))
        table, md, _ = table1.write(res, self.dir / "out")
        self.assertEqual(list(table["noisy"]), [""])
        self.assertNotIn(table1.NOISY_MARK, md)
        self.assertNotIn("machine was busy", md)
        self.assertEqual(table1.noisy_ratio_cells(table, table1.REFERENCE), [])


if __name__ == "__main__":
    unittest.main()
