"""test_table_channels — scripts/figures/table_channels.py on a hand-made results folder: only the via=channel
rows, every backend beside Go (ms, each backend / go with its interval), the noisy dagger, split by P; and
table1.py keeping only the monitor rows (a row without via counts as monitor).

Run: /usr/bin/python3 -m unittest -v tests/scripts/test_table_channels.py
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
import table_channels  # noqa: E402

COLUMNS = schema.concrete_columns(("C", "K", "N", "via"))
PRODUCER = {"N": 64, "C": 10, "K": 10000}
SIEVE = {"N": 10000, "C": 1}


def write_folder(folder, cells, noisy=()):
    """write_folder — results.csv and context.json: cells maps (backend, workload, params as items, P) to a median
    in ms; each cell gets 3 forks of one timed iteration (x1.1, x1, x0.9: the median is exact). A fork listed in
    `noisy` as (backend, workload, via, P, fork) carries the harness's noisy mark."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=COLUMNS)
        wr.writeheader()
        for (backend, workload, items, p), ms in cells.items():
            params = dict(items)
            pid = "/".join([backend, workload] + [f"{k}={params[k]}" for k in sorted(params)] + [f"P={p}"])
            for rep, jitter in enumerate((1.1, 1.0, 0.9)):
                busy = (backend, workload, params.get("via", ""), p, rep) in noisy
                row = {c: "" for c in COLUMNS}
                row.update({"point": pid, "backend": backend, "family": backend.split("/")[0],
                            "workload": workload, "processors": p, "repetition": rep, "iteration": 0,
                            "phase": "measure", "unit": "ms", "status": "ok", "value": repr(ms * jitter),
                            "seconds": repr(ms * jitter / 1e3), "load_before": 3.5 if busy else 0.2,
                            "load_after": 3.0 if busy else 0.2, "runnable_before": 3 if busy else 0,
                            "runnable_after": 2 if busy else 0, "other_cpus": 1.5 if busy else 0.0,
                            "noisy": "true" if busy else "false"})
                for k, v in params.items():
                    row["param." + k] = v
                wr.writerow(row)
    (d / "context.json").write_text(json.dumps({"host": "testhost", "cores_available": 2}))
    return d


def cells(times, workload, params, via, p=2):
    items = tuple(list(params.items()) + ([("via", via)] if via else []))
    return {(b, workload, items, p): ms for b, ms in times.items()}


def md_rows(md):
    lines = [l for l in md.splitlines() if l.startswith("| ")]
    return [[c.strip() for c in l.strip().strip("|").split(" | ")] for l in lines]


class TableChannels(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="coopbench-table-channels-"))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def folder(self, noisy=()):
        c = {}
        # The channel variant at P=1 and P=2; the monitor variant (slower everywhere) must not show.
        c.update(cells({"go": 40.0, "native-ws": 20.0, "native": 80.0, "boostfiber/work_stealing": 60.0},
                       "producer", PRODUCER, "channel", 1))
        c.update(cells({"go": 50.0, "native-ws": 100.0, "native": 80.0}, "producer", PRODUCER, "channel", 2))
        c.update(cells({"go": 400.0, "native-ws": 900.0, "native": 800.0, "pthreads": 700.0},
                       "producer", PRODUCER, "monitor", 2))
        c.update(cells({"go": 100.0, "native-ws": 150.0}, "eratosthenes", SIEVE, "channel", 2))
        c.update(cells({"go": 300.0, "native-ws": 170.0, "pthreads": 500.0}, "eratosthenes", SIEVE, "monitor", 2))
        # A row from before the parameter (no via): a monitor row, never in the channel table.
        c.update(cells({"go": 7.0, "pthreads": 9.0}, "tokenring", {"N": 1000, "K": 1000}, "", 2))
        return cr.load(write_folder(self.dir / "r", c, noisy))

    def test_channel_rows_beside_go(self):
        out = self.dir / "out"
        table, md, paths = table_channels.write(self.folder(), out)
        self.assertEqual([(r.workload, r.P) for r in table.itertuples()],
                         [("eratosthenes", 2), ("producer", 1), ("producer", 2)])
        self.assertNotIn("pthreads", table.columns)  # pthreads ran only the monitor variant here
        prod1 = table[(table["workload"] == "producer") & (table["P"] == 1)].iloc[0]
        prod2 = table[(table["workload"] == "producer") & (table["P"] == 2)].iloc[0]
        sieve = table[table["workload"] == "eratosthenes"].iloc[0]
        self.assertAlmostEqual(prod1["native-ws"], 20.0)
        self.assertAlmostEqual(prod1["go"], 40.0)
        self.assertAlmostEqual(prod1["native-ws / go"], 0.5)
        self.assertAlmostEqual(prod1["boostfiber/work_stealing / go"], 1.5)
        self.assertAlmostEqual(prod2["native-ws / go"], 2.0)
        self.assertTrue(math.isnan(prod2["boostfiber/work_stealing"]))  # did not run at P=2
        self.assertAlmostEqual(sieve["native-ws / go"], 1.5)
        self.assertEqual(prod1["params"], "N=64, K=10000, C=10")
        # The interval: each side's resampled median is one of its forks, so the ends are 0.5 * 0.9/1.1 and
        # 0.5 * 1.1/0.9.
        self.assertAlmostEqual(prod1["native-ws / go lo"], 0.5 * 0.9 / 1.1)
        self.assertAlmostEqual(prod1["native-ws / go hi"], 0.5 * 1.1 / 0.9)
        self.assertEqual([p.name for p in paths], ["table_channels.md", "table_channels.csv"])
        header, *body = md_rows(md)
        self.assertEqual(header[:4], ["benchmark", "params", "P", "go"])
        self.assertIn("native-ws / go", header)
        row = dict(zip(header, next(r for r in body if r[0] == "Producer/Consumer" and r[2] == "1")))
        self.assertEqual(row["native-ws"], "20.0")
        self.assertEqual(row["native-ws / go"], "0.50× (0.41–0.61)")
        self.assertNotIn(table_channels.NOISY_MARK, md)
        with open(out / "table_channels.csv", newline="") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 3)

    def test_noisy_cells_are_marked(self):
        res = self.folder(noisy={("go", "eratosthenes", "channel", 2, 1)})
        table, md, _ = table_channels.write(res, self.dir / "out")
        header, *body = md_rows(md)
        sieve = dict(zip(header, next(r for r in body if r[0] == "Eratosthenes")))
        prod = dict(zip(header, next(r for r in body if r[0] == "Producer/Consumer" and r[2] == "2")))
        dagger = table_channels.NOISY_MARK
        self.assertTrue(sieve["go"].endswith(dagger), sieve)
        self.assertTrue(sieve["native-ws / go"].endswith(dagger), sieve)
        self.assertFalse(sieve["native-ws"].endswith(dagger), sieve)
        self.assertFalse(prod["go"].endswith(dagger), prod)
        self.assertIn(f"{dagger}: {table_channels.NOISY_NOTE}", md)
        self.assertEqual(table[table["workload"] == "eratosthenes"].iloc[0]["noisy"], "go")

    def test_no_channel_rows_no_table(self):
        c = cells({"go": 300.0, "pthreads": 500.0}, "eratosthenes", SIEVE, "monitor", 2)
        res = cr.load(write_folder(self.dir / "r", c))
        self.assertEqual(table_channels.make(res, self.dir / "out"), [])
        self.assertFalse((self.dir / "out" / "table_channels.md").exists())

    def test_table1_keeps_the_monitor_rows(self):
        # Table 1 shows the paper's program: via=monitor rows and rows without via; never a channel row.
        table = table1.build(self.folder())
        self.assertEqual(sorted(table["workload"]), ["eratosthenes", "producer", "tokenring"])
        prod = table[table["workload"] == "producer"].iloc[0]
        self.assertAlmostEqual(prod["pthreads"], 700.0)
        self.assertAlmostEqual(prod["native-ws"], 900.0)  # the monitor row at P=2, not the channel's 100 or 20
        self.assertNotIn("via", prod["params"])
        self.assertAlmostEqual(table[table["workload"] == "eratosthenes"].iloc[0]["go"], 300.0)
        self.assertAlmostEqual(table[table["workload"] == "tokenring"].iloc[0]["go"], 7.0)

    def test_plot_discovers_the_module(self):
        # plot.py imports every module of scripts/figures and calls make(res, outdir).
        items = table_channels.make(self.folder(), self.dir / "out")
        self.assertEqual(len(items), 1)
        self.assertIn("markdown", items[0])
        self.assertTrue(hasattr(table_channels, "make"))


if __name__ == "__main__":
    unittest.main()
