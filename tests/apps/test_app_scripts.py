"""Unit tests of scripts/figures/table1.py and fig10_matrix.py on synthetic results folders
(written here, docs/results-format.md columns), and of results/paper/table1.csv."""

import csv
import json
import math
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "scripts" / "figures"))

import coopbench as cr  # noqa: E402
import fig10_matrix  # noqa: E402
import table1  # noqa: E402

COLUMNS = ["point", "backend", "family", "workload", "param.C", "param.K", "param.M", "param.N", "processors",
           "repetition", "status", "value", "unit", "seconds", "peak_rss_kib", "cpu_seconds", "reason", "counters"]


def write_results(folder, rows):
    """write_results — results.csv (and a context.json) from (backend, workload, params, P, rep, value|None)."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=COLUMNS)
        wr.writeheader()
        for backend, workload, params, p, rep, value in rows:
            row = {c: "" for c in COLUMNS}
            pid = "/".join([backend, workload] + [f"{k}={params[k]}" for k in sorted(params)] + [f"P={p}"])
            row.update({"point": pid, "backend": backend, "family": backend.split("/")[0], "workload": workload,
                        "processors": p, "repetition": rep, "unit": "ms",
                        "status": "ok" if value is not None else "failed",
                        "reason": "" if value is not None else "self-check failed: x"})
            for k, v in params.items():
                row["param." + k] = v
            if value is not None:
                row.update({"value": repr(value), "seconds": repr(value / 1e3)})
            wr.writerow(row)
    (d / "context.json").write_text(json.dumps({"host": "test", "cores_available": 2}))
    return d


PAPER_SIZES = {
    "city": [{"N": 1000, "K": 10, "C": 100}],
    "eratosthenes": [{"N": 10000, "C": 1}],
    "mandelbrot": [{"N": 100, "C": 2000, "K": 5000}],
    "news": [{"N": 1000, "M": 10, "K": 10}],
    "producer": [{"N": 1, "C": 10, "K": 10000}, {"N": 64, "C": 10, "K": 10000}],
    "tokenring": [{"N": 1000, "K": 1000}],
}


class PaperTable(unittest.TestCase):
    def test_transcription(self):
        paper = table1.load_paper()
        self.assertEqual(len(paper), 7)
        self.assertEqual(list(paper["workload"]),
                         ["city", "eratosthenes", "mandelbrot", "news", "producer", "producer", "tokenring"])
        city = paper.iloc[0]
        self.assertEqual((city["native_ms"], city["linux_ms"], city["windows_ms"]), (61, 63, 138))
        self.assertEqual(paper.iloc[5]["param"], {"N": 64, "C": 10, "K": 10000})
        self.assertEqual(int(paper.iloc[6]["linux_ms"]), 15672)


class Table1(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_paper_sizes_ratios_and_files(self):
        rows = []
        for w, sizes in PAPER_SIZES.items():
            for params in sizes:
                for rep, jitter in enumerate((1.1, 1.0, 0.9)):  # median = the middle value exactly
                    rows.append(("pthreads", w, params, 2, rep, 100.0 * jitter))
                    rows.append(("native", w, params, 2, rep, 25.0 * jitter))
                    rows.append(("boostfiber/round_robin", w, params, 1, rep, 50.0 * jitter))
                    rows.append(("go", w, params, 2, rep, 40.0 * jitter))
        rows.append(("matrix-is-not-in-table-1", "matrix", {"N": 10, "M": 1}, 2, 0, 1.0))
        res = cr.load(write_results(self.dir / "r", rows))
        out = self.dir / "out"
        items = table1.make(res, out)
        self.assertEqual([("files" in i, "markdown" in i) for i in items], [(True, False), (False, True)])
        self.assertEqual({Path(f).name for f in items[0]["files"]}, {"table1.png", "table1.svg"})
        for f in items[0]["files"]:
            self.assertGreater(Path(f).stat().st_size, 0)
        t = table1.build(res)
        self.assertEqual(len(t), 7)
        self.assertTrue((t["size"] == "paper").all())
        self.assertEqual(list(t.columns[5:9]), ["pthreads", "native", "go", "boostfiber/round_robin"])
        for _, r in t.iterrows():
            self.assertAlmostEqual(r["pthreads"], 100.0)
            self.assertAlmostEqual(r["native / pthreads"], 0.25)
            self.assertAlmostEqual(r["go / pthreads"], 0.4)
            self.assertAlmostEqual(r["native / go"], 0.625)
            self.assertAlmostEqual(r["boostfiber/round_robin / pthreads"], 0.5)
            self.assertEqual(r["P"], 2)
            self.assertIn("boostfiber/round_robin at P=1", r["notes"])
        prod = t[t["workload"] == "producer"]
        self.assertEqual(list(prod["paper Native"]), [1382.0, 54495.0])
        self.assertTrue((out / "table1.md").is_file() and (out / "table1.csv").is_file())
        md = (out / "table1.md").read_text()
        # Compact: times per backend, native / go and the paper's Native/Linux; the other ratios
        # and the paper's ms are in the CSV (and the ratios in the figure).
        header = next(l for l in md.splitlines() if l.startswith("| benchmark"))
        # then, per peer family that ran, coop's best over the family's best variant (families.py)
        self.assertEqual(header, "| benchmark | params | P | size | pthreads | native | go | boostfiber/round_robin "
                                 "| native / go | best coop / best go | best coop / best boostfiber "
                                 "| paper Native / Linux | notes |")
        # native / go with its bootstrap interval: each side's resampled median of (1.1, 1, 0.9) x is one of
        # them, each end with probability 7/27, so the ends are 0.625 * 0.9/1.1 and 0.625 * 1.1/0.9.
        self.assertIn("| Token Ring | N=1000, K=1000 | 2 | paper | 100 | 25.0 | 40.0 | 50.0 | 0.62× (0.51–0.76; 3 forks: not 95 %) | ", md)
        self.assertAlmostEqual(t["native / go lo"].iloc[0], 0.625 * 0.9 / 1.1)
        self.assertAlmostEqual(t["native / go hi"].iloc[0], 0.625 * 1.1 / 0.9)
        csv_cols = (out / "table1.csv").read_text().splitlines()[0]
        self.assertIn("native / pthreads", csv_cols)
        self.assertIn("paper Native", csv_cols)

    def test_every_coop_policy_gets_a_go_ratio(self):
        # native-ws and native-parasail (coop's other policies) each get an "X / go" column, in the CSV and
        # in the compact Markdown; Boost.Fiber (another family) does not.
        rows = []
        for rep, jitter in enumerate((1.1, 1.0, 0.9)):
            for backend, ms in (("native", 30.0), ("native-ws", 20.0), ("native-parasail", 60.0), ("go", 40.0),
                                ("boostfiber/work_stealing", 80.0)):
                rows.append((backend, "tokenring", {"N": 1000, "K": 1000}, 2, rep, ms * jitter))
        res = cr.load(write_results(self.dir / "r", rows))
        t = table1.build(res)
        r = t.iloc[0]
        self.assertAlmostEqual(r["native / go"], 0.75)
        self.assertAlmostEqual(r["native-ws / go"], 0.5)
        self.assertAlmostEqual(r["native-parasail / go"], 1.5)
        self.assertNotIn("boostfiber/work_stealing / go", t.columns)
        self.assertLess(r["native-ws / go lo"], 0.5)
        self.assertGreater(r["native-ws / go hi"], 0.5)
        md = table1.to_markdown(t, res.context)
        header = next(l for l in md.splitlines() if l.startswith("| benchmark"))
        self.assertIn("| native / go | native-ws / go | native-parasail / go | best coop / best go "
                      "| best coop / best boostfiber | paper Native / Linux |", header)

    def test_reduced_sizes_failed_cells_and_processor_sweeps(self):
        rows = [("pthreads", "producer", {"N": 16, "C": 10, "K": 1000}, 2, 0, 10.0),
                ("native", "producer", {"N": 16, "C": 10, "K": 1000}, 2, 0, None),
                ("pthreads", "city", {"N": 50, "K": 10, "C": 100}, 1, 0, 4.0),
                ("pthreads", "city", {"N": 50, "K": 10, "C": 100}, 2, 0, 2.0)]
        t = table1.build(cr.load(write_results(self.dir / "r", rows)))
        prod = t[t["workload"] == "producer"].iloc[0]
        self.assertEqual(prod["size"], "reduced")
        self.assertEqual(prod["paper params"], "N=64, C=10, K=10000")  # the nearest paper row
        self.assertEqual(prod["native"], "failed")
        self.assertTrue(math.isnan(prod["native / pthreads"]))
        city = t[t["workload"] == "city"]
        self.assertEqual(sorted(city["P"]), [1, 2])  # a processor sweep: one row per P
        self.assertEqual(sorted(city["pthreads"]), [2.0, 4.0])

    def test_no_table1_workload(self):
        res = cr.load(write_results(self.dir / "r", [("pthreads", "matrix", {"N": 8, "M": 1}, 1, 0, 1.0)]))
        self.assertEqual(table1.make(res, self.dir / "out"), [])
        self.assertEqual(table1.main([str(self.dir / "r"), "--out", str(self.dir / "out")]), 1)
        self.assertEqual(table1.main([str(self.dir / "nothing")]), 2)


class Fig10(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_speedup_and_files(self):
        rows = []
        for m in (1, 2, 3, 4, 5):
            rows.append(("pthreads", "matrix", {"N": 100, "M": m}, 2, 0, 1000.0 / min(m, 2)))
            rows.append(("native", "matrix", {"N": 100, "M": m}, 2, 0, 800.0 if m != 4 else None))
        res = cr.load(write_results(self.dir / "r", rows))
        lines = {label: s for label, _, _, s in fig10_matrix.series(res.workload("matrix"))}
        self.assertEqual(set(lines), {"pthreads", "native"})
        pt = lines["pthreads"].set_index("param.M")["median"]
        self.assertAlmostEqual(pt[1], 1.0)  # seconds
        self.assertAlmostEqual(pt[1] / pt[3], 2.0)
        self.assertEqual(int(lines["native"].set_index("param.M").loc[4, "n_ok"]), 0)
        items = fig10_matrix.make(res, self.dir / "figs")
        self.assertEqual(len(items), 1)
        for f in items[0]["files"]:
            self.assertTrue(Path(f).is_file() and Path(f).stat().st_size > 0, f)
        self.assertEqual({Path(f).name for f in items[0]["files"]}, {"fig10_matrix.png", "fig10_matrix.svg"})

    def test_no_matrix_rows(self):
        res = cr.load(write_results(self.dir / "r", [("pthreads", "city", {"N": 1, "K": 1, "C": 1}, 1, 0, 1.0)]))
        self.assertEqual(fig10_matrix.make(res, self.dir / "figs"), [])


if __name__ == "__main__":
    unittest.main()
