"""test_table1 — scripts/figures/table1.py: coop's best against each peer family's best variant (`best coop /
best tokio`, `best coop / best boostfiber`, `best coop / best go`) and the noise guard's marks.

Each test writes a results folder by hand (the schema's columns, coopbench.schema.concrete_columns,
with the `noisy` column the harness writes per fork), builds Table 1 from it and checks table1.csv,
table1.md and the figure. Run: /usr/bin/python3 -m unittest -v tests/scripts/test_table1.py
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
from synthetic import TempDirCase, md_rows  # noqa: E402

PARAMS = ("C", "K", "M", "N")
TOKENRING = {"N": 1000, "K": 1000}
CITY = {"N": 1000, "K": 10, "C": 100}


def write_folder(folder, cells, noisy=()):
    """write_folder — synthetic.write_cells at P=2: cells maps (backend, workload, params as a tuple of items) to a
    median in ms. Forks listed in `noisy` as (backend, workload, fork) carry the harness's noisy mark."""
    return synthetic.write_cells(folder, PARAMS, {(b, w, items, 2): ms for (b, w, items), ms in cells.items()},
                                 lambda b, w, values, p, fork: (b, w, fork) in noisy)


def cells(times, workload="tokenring", params=TOKENRING):
    return {(b, workload, tuple(params.items())): ms for b, ms in times.items()}


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Table1Tokio(TempDirCase):
    prefix = "coopbench-table1-"

    def test_best_coop_over_best_tokio(self):
        # Token ring: native-ws (20 ms) is the fastest coop policy; City: native (30 ms). tokio takes 40 ms in both;
        # in the token ring tokio-std-mutex takes 10 ms: it is tokio's best there, and the one coop is set against.
        c = cells({"pthreads": 100.0, "native": 30.0, "native-ws": 20.0, "native-parasail": 60.0,
                   "go": 50.0, "tokio": 40.0, "tokio-std-mutex": 10.0})
        c.update(cells({"pthreads": 100.0, "native": 30.0, "native-ws": 35.0, "tokio": 40.0}, "city", CITY))
        res = cr.load(write_folder(self.tmp / "r", c))
        out = self.tmp / "out"
        table, md, _ = table1.write(res, out)
        ring = table[table["workload"] == "tokenring"].iloc[0]
        city = table[table["workload"] == "city"].iloc[0]
        self.assertEqual(ring["best coop"], "native-ws")
        self.assertEqual(ring["best tokio"], "tokio-std-mutex")
        self.assertAlmostEqual(ring["best coop / best tokio"], 2.0)
        self.assertEqual(ring["best go"], "go")
        self.assertAlmostEqual(ring["best coop / best go"], 0.4)
        self.assertEqual(city["best coop"], "native")
        self.assertEqual(city["best tokio"], "tokio")
        self.assertAlmostEqual(city["best coop / best tokio"], 0.75)
        # The interval: each side's resampled median is one of its forks' values, so the ends are
        # 2 * 0.9/1.1 and 2 * 1.1/0.9 (each with probability (7/27)^2 > 2.5 %).
        self.assertAlmostEqual(ring["best coop / best tokio lo"], 2.0 * 0.9 / 1.1)
        self.assertAlmostEqual(ring["best coop / best tokio hi"], 2.0 * 1.1 / 0.9)
        rows = read_csv(out / "table1.csv")
        for col in ("best coop", "best tokio", "best coop / best tokio", "best coop / best tokio lo",
                    "best coop / best tokio hi"):
            self.assertIn(col, rows[0])
        ring_csv = next(r for r in rows if r["workload"] == "tokenring")
        self.assertEqual(ring_csv["best coop"], "native-ws")
        self.assertEqual(ring_csv["best tokio"], "tokio-std-mutex")
        self.assertAlmostEqual(float(ring_csv["best coop / best tokio"]), 2.0)
        header, *body = md_rows(md)
        self.assertIn("best coop / best tokio", header)
        self.assertNotIn("best tokio", [h for h in header if " / " not in h])  # named inside the ratio's cell
        ring_md = dict(zip(header, next(r for r in body if r[0] == "Token Ring")))
        self.assertEqual(ring_md["best coop / best tokio"], "native-ws / tokio-std-mutex: 2.00× (1.64–2.44; 3 forks: not 95 %)")
        note = md.split("\n\n", 1)[1]
        self.assertIn("best coop / best F", note)  # the note says what the columns are
        self.assertIn("tokio, tokio-std-mutex", note)

    def test_every_family_is_represented_by_its_best_variant_at_the_rows_p(self):
        # A processor sweep of the token ring: at P=1 tokio/current_thread (5 ms) and boostfiber/round_robin
        # (8 ms) are their families' best; at P=2 they did not run (one thread only), so tokio's and
        # Boost.Fiber's best are the variants that ran at P=2.
        times = {("native", 1): 10.0, ("native-ws", 1): 12.0, ("tokio", 1): 20.0, ("tokio/current_thread", 1): 5.0,
                 ("boostfiber/round_robin", 1): 8.0, ("boostfiber/shared_work", 1): 30.0, ("pthreads", 1): 50.0,
                 ("native", 2): 9.0, ("native-ws", 2): 6.0, ("tokio", 2): 12.0, ("tokio-std-mutex", 2): 18.0,
                 ("boostfiber/shared_work", 2): 24.0, ("boostfiber/work_stealing", 2): 15.0, ("pthreads", 2): 40.0}
        folder = synthetic.write_cells(self.tmp / "r", PARAMS,
                                       {(b, "tokenring", tuple(TOKENRING.items()), p): ms for (b, p), ms in times.items()},
                                       lambda *a: False)
        table = table1.build(cr.load(folder))
        by_p = {int(r["P"]): r for _, r in table.iterrows()}
        self.assertEqual(set(by_p), {1, 2})
        self.assertEqual((by_p[1]["best coop"], by_p[1]["best tokio"], by_p[1]["best boostfiber"]),
                         ("native", "tokio/current_thread", "boostfiber/round_robin"))
        self.assertAlmostEqual(by_p[1]["best coop / best tokio"], 2.0)
        self.assertAlmostEqual(by_p[1]["best coop / best boostfiber"], 10.0 / 8.0)
        self.assertEqual((by_p[2]["best coop"], by_p[2]["best tokio"], by_p[2]["best boostfiber"]),
                         ("native-ws", "tokio", "boostfiber/work_stealing"))
        self.assertAlmostEqual(by_p[2]["best coop / best tokio"], 0.5)
        self.assertAlmostEqual(by_p[2]["best coop / best boostfiber"], 0.4)
        self.assertNotIn("best go", table.columns)  # Go did not run

    def test_no_tokio_no_columns(self):
        res = cr.load(write_folder(self.tmp / "r", cells({"pthreads": 100.0, "native": 30.0, "go": 50.0})))
        table, md, _ = table1.write(res, self.tmp / "out")
        self.assertFalse([c for c in table.columns if "tokio" in c])
        self.assertEqual(table.iloc[0]["best go"], "go")
        self.assertNotIn("tokio", md_rows(md)[0])
        self.assertNotIn("best tokio", (self.tmp / "out" / "table1.csv").read_text().splitlines()[0])

    def test_no_peer_no_best_columns(self):
        res = cr.load(write_folder(self.tmp / "r", cells({"pthreads": 100.0, "native": 30.0})))
        table = table1.build(res)
        self.assertFalse([c for c in table.columns if c.startswith("best ")])

    def test_tokio_without_coop(self):
        # No coop backend ran: no best coop, the ratio is empty (not an error).
        res = cr.load(write_folder(self.tmp / "r", cells({"pthreads": 100.0, "tokio": 40.0})))
        table = table1.build(res)
        r = table.iloc[0]
        self.assertEqual(r["best coop"], "")
        self.assertEqual(r["best tokio"], "tokio")
        self.assertTrue(math.isnan(r["best coop / best tokio"]))


class Table1Noisy(TempDirCase):
    prefix = "coopbench-table1-"

    def test_the_papers_mark_is_no_backends_marker(self):
        # The paper's Native/Linux ratio was a hollow black star beside tokio's filled black star: read as
        # one more tokio point (harness review, part 3). It is a mark no backend's marker is.
        from unittest import mock
        import matplotlib.axes
        drawn = []
        real_plot = matplotlib.axes.Axes.plot

        def plot(ax, *args, **kw):
            drawn.append((kw.get("label"), kw.get("marker")))
            return real_plot(ax, *args, **kw)

        res = cr.load(write_folder(self.tmp / "r", cells({"pthreads": 100.0, "native": 30.0, "tokio": 40.0,
                                                          "go": 50.0})))
        with mock.patch.object(matplotlib.axes.Axes, "plot", plot):
            table1.write(res, self.tmp / "out")
        paper = [m for label, m in drawn if label == "paper: Native / Linux"]
        self.assertEqual(len(paper), 1, drawn)
        backends = {m for label, m in drawn if label and label != "paper: Native / Linux"}
        self.assertIn("*", backends)  # tokio's
        self.assertNotIn(paper[0], backends | set(cr.style._KNOWN_MARKERS.values()) | set(cr.style._MARKERS))

    def test_noisy_cells_are_marked(self):
        # go's fork 1 of the token ring ran on a busy machine: go's time there, native / go and go / pthreads are
        # marked; native's time and City's cells are not.
        c = cells({"pthreads": 100.0, "native": 30.0, "go": 50.0, "tokio": 40.0})
        c.update(cells({"pthreads": 100.0, "native": 30.0, "go": 50.0, "tokio": 40.0}, "city", CITY))
        res = cr.load(write_folder(self.tmp / "r", c, noisy={("go", "tokenring", 1), ("tokio", "city", 0)}))
        out = self.tmp / "out"
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
        self.assertFalse(ring_md["best coop / best tokio"].endswith(dagger), ring_md)
        self.assertTrue(city_md["tokio"].endswith(dagger), city_md)
        self.assertTrue(city_md["best coop / best tokio"].endswith(dagger), city_md)
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
        res = cr.load(write_folder(self.tmp / "r", cells({"pthreads": 100.0, "native": 30.0, "go": 50.0})))
        table, md, _ = table1.write(res, self.tmp / "out")
        self.assertEqual(list(table["noisy"]), [""])
        self.assertNotIn(table1.NOISY_MARK, md)
        self.assertNotIn("machine was busy", md)
        self.assertEqual(table1.noisy_ratio_cells(table, table1.REFERENCE), [])


if __name__ == "__main__":
    unittest.main()
