"""test_table_channels — scripts/figures/table_channels.py on a hand-made results folder: only the via=channel
rows, every backend beside Go (ms, each backend / go with its interval), the noisy dagger, split by P; and
table1.py keeping only the monitor rows (a row without via counts as monitor).

Run: /usr/bin/python3 -m unittest -v tests/scripts/test_table_channels.py
"""

import csv
import math
import os
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "scripts" / "figures"))
os.environ.setdefault("MPLBACKEND", "Agg")

import coopbench as cr  # noqa: E402
import synthetic  # noqa: E402
import table1  # noqa: E402
import table_channels  # noqa: E402
from synthetic import TempDirCase, md_rows  # noqa: E402

PARAMS = ("C", "K", "N", "via")
PRODUCER = {"N": 64, "C": 10, "K": 10000}
SIEVE = {"N": 10000, "C": 1}


def write_folder(folder, cells, noisy=()):
    """write_folder — synthetic.write_cells: cells maps (backend, workload, params as items, P) to a median in ms.
    A fork listed in `noisy` as (backend, workload, via, P, fork) carries the harness's noisy mark."""
    return synthetic.write_cells(folder, PARAMS, cells,
                                 lambda b, w, values, p, fork: (b, w, values.get("via", ""), p, fork) in noisy)


def cells(times, workload, params, via, p=2):
    items = tuple(list(params.items()) + ([("via", via)] if via else []))
    return {(b, workload, items, p): ms for b, ms in times.items()}


class TableChannels(TempDirCase):
    prefix = "coopbench-table-channels-"

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
        return cr.load(write_folder(self.tmp / "r", c, noisy))

    def test_channel_rows_beside_go(self):
        out = self.tmp / "out"
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
        self.assertEqual(row["native-ws / go"], "0.50× (0.41–0.61; 3 forks: not 95 %)")
        self.assertNotIn(table_channels.NOISY_MARK, md)
        with open(out / "table_channels.csv", newline="") as f:
            self.assertEqual(len(list(csv.DictReader(f))), 3)

    def test_each_family_by_its_best_variant_and_boosts_capacity_in_the_caption(self):
        # Producer at P=1: coop's best native-ws (20), tokio's best tokio/current_thread (10, not tokio's 30),
        # Boost.Fiber's best work_stealing (60, not shared_work's 90). Boost.Fiber's own buffered_channel ran
        # C=10 with 7 slots: the caption says so (its context names Boost's channels).
        c = cells({"go": 40.0, "native-ws": 20.0, "native": 80.0, "boostfiber/work_stealing": 60.0,
                   "boostfiber/shared_work": 90.0, "tokio": 30.0, "tokio/current_thread": 10.0},
                  "producer", PRODUCER, "channel", 1)
        folder = write_folder(self.tmp / "r", c)
        import json
        ctx = json.loads((folder / "context.json").read_text())
        ctx["backend.boostfiber/work_stealing.channel"] = "Boost.Fiber's own channels: C = 0 unbuffered_channel; " \
            "C >= 1 buffered_channel(2^k) holding 2^k - 1 values"
        (folder / "context.json").write_text(json.dumps(ctx))
        table, md, _ = table_channels.write(cr.load(folder), self.tmp / "out")
        r = table.iloc[0]
        self.assertEqual((r["best coop"], r["best go"], r["best tokio"], r["best boostfiber"]),
                         ("native-ws", "go", "tokio/current_thread", "boostfiber/work_stealing"))
        self.assertAlmostEqual(r["best coop / best tokio"], 2.0)
        self.assertAlmostEqual(r["best coop / best boostfiber"], 20.0 / 60.0)
        self.assertAlmostEqual(r["best coop / best go"], 0.5)
        header, *body = md_rows(md)
        self.assertNotIn("best tokio", header)  # named inside the ratio's cell, not a time column
        row = dict(zip(header, body[0]))
        self.assertEqual(row["best coop / best tokio"], "native-ws / tokio/current_thread: 2.00× (1.64–2.44; 3 forks: not 95 %)")
        self.assertIn("C=10 ran with capacity 7", md)
        self.assertEqual([table_channels.boost_capacity(c) for c in (0, 1, 2, 3, 5, 10, 11, 64)],
                         [0, 1, 3, 3, 7, 7, 15, 63])

    def test_noisy_cells_are_marked(self):
        res = self.folder(noisy={("go", "eratosthenes", "channel", 2, 1)})
        table, md, _ = table_channels.write(res, self.tmp / "out")
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
        res = cr.load(write_folder(self.tmp / "r", c))
        self.assertEqual(table_channels.make(res, self.tmp / "out"), [])
        self.assertFalse((self.tmp / "out" / "table_channels.md").exists())

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
        items = table_channels.make(self.folder(), self.tmp / "out")
        self.assertEqual(len(items), 1)
        self.assertIn("markdown", items[0])
        self.assertTrue(hasattr(table_channels, "make"))


if __name__ == "__main__":
    unittest.main()
