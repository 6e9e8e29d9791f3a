"""test_report — report.md as a first-time reader meets it: the answer first, best values marked, refused
points apart from failed ones, tables that say what their numbers are.

Each test writes a hand-made results folder (synthetic.write_cells: known medians) and reads the
report.md that scripts/plot.py writes, or calls scripts/coopbench/summary.py directly.
Run: /usr/bin/python3 -m unittest -v test_report (in tests/scripts).
"""

import csv
import re
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "scripts"))

import synthetic  # noqa: E402
from synthetic import md_rows, run  # noqa: E402

import coopbench as cr  # noqa: E402
import pandas as pd  # noqa: E402
from coopbench import summary  # noqa: E402

# Medians in ms per backend at P=1 and P=2 (N=1 and N=2 take the same value times N):
# at P=1 go is fastest, at P=2 native-ws; boostfiber's best variant is work_stealing at both.
MEDIANS = {
    1: {"native": 40.0, "native-ws": 30.0, "go": 20.0, "tokio": 50.0, "boostfiber/round_robin": 90.0,
        "boostfiber/work_stealing": 60.0, "pthreads": 200.0},
    2: {"native": 12.0, "native-ws": 10.0, "go": 25.0, "tokio": 15.0, "boostfiber/round_robin": 80.0,
        "boostfiber/work_stealing": 40.0, "pthreads": 100.0},
}


def cells(workload="work"):
    return {(b, workload, (("N", n),), p): ms * n for p, by in MEDIANS.items() for b, ms in by.items()
            for n in (1, 2)}


def rewrite(folder, change):
    """rewrite — apply change(row) to every row of folder/results.csv (a row it returns None for is dropped)."""
    path = Path(folder) / "results.csv"
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        fields, rows = r.fieldnames, list(r)
    rows = [x for x in (change(row) for row in rows) if x is not None]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)


def refuse(row, backend="pthreads", n="2", p="2"):
    """The row of a point refused before it ran (status refused, the reason, no value), others unchanged."""
    if row["backend"] == backend and row["param.N"] == n and row["processors"] == p:
        row.update(status="refused", value="", seconds="", reason="N=2 threads exceed pid_max (toy limit)")
    return row


def sections(md):
    """The level-2 headings of a report, in order."""
    return [line[3:] for line in md.splitlines() if line.startswith("## ")]


def section(md, title_start):
    """The text of the level-2 section whose title starts with title_start."""
    m = re.search(r"^## " + re.escape(title_start) + r".*?(?=^## |\Z)", md, re.S | re.M)
    return m.group(0) if m else ""


class SummaryTest(synthetic.TempDirCase):
    def plot(self, folder):
        p = run("plot.py", folder, "--modules", self.tmp / "no-modules")
        self.assertEqual(p.returncode, 0, p.stderr)
        return (Path(folder) / "report.md").read_text()

    def setUp(self):
        super().setUp()
        (self.tmp / "no-modules").mkdir()

    def test_report_opens_with_who_wins_where(self):
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        md = self.plot(d)
        self.assertTrue(sections(md)[0].startswith("Summary"), sections(md))
        self.assertLess(md.index("## Summary"), md.index("## Context"))
        rows = md_rows(section(md, "Summary"))
        header, body = rows[0], {(r[0], r[1]): dict(zip(rows[0], r)) for r in rows[1:]}
        self.assertEqual(header[:5], ["workload", "P", "points", "forks", "fastest (points won)"])
        self.assertEqual(header[5:], ["coop", "Go", "tokio", "Boost.Fiber", "OS threads"])
        p1, p2 = body[("work", "1")], body[("work", "2")]
        self.assertIn("go", p1["fastest (points won)"])
        self.assertIn("(2/2)", p1["fastest (points won)"])
        self.assertIn("native-ws", p2["fastest (points won)"])
        # Each family: its best variant, named, and the ratio to the fastest (1.00x the fastest itself).
        self.assertRegex(p1["coop"], r"^1\.50× \(.*\) native-ws$")
        self.assertRegex(p1["Go"], r"^1\.00×.* go$")
        self.assertRegex(p2["coop"], r"^1\.00×.* native-ws$")
        self.assertRegex(p2["tokio"], r"^1\.50× \(.*\) tokio$")
        self.assertRegex(p2["Boost.Fiber"], r"^4\.00× \(.*\) boostfiber/work_stealing$")
        self.assertRegex(p2["OS threads"], r"^10\.00× \(.*\) pthreads$")
        self.assertIn("Failed points: 0", section(md, "Summary"))
        self.assertIn("Refused points: 0", section(md, "Summary"))

    def test_forks_said_once_per_row(self):
        """The first-user review: nearly every cell repeated "(...; 1 fork: within one process)". The row's forks
        column says it once; a cell says it itself only in a row whose cells rest on different fork counts."""
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        rewrite(d, lambda row: row if row["repetition"] == "0" else None)  # one fork a point
        rows = md_rows(summary.summary_section(cr.load(d).df))
        header, body = rows[0], rows[1:]
        self.assertTrue(body)
        self.assertEqual({r[header.index("forks")] for r in body}, {"1 fork: within one process"})
        self.assertNotIn("fork", " ".join(c for r in body for c in r[header.index("fastest (points won)"):]))
        # three forks everywhere: the row says once that its brackets are not 95 % intervals
        rows = md_rows(summary.summary_section(cr.load(synthetic.write_cells(self.tmp / "t", ("N",), cells())).df))
        self.assertEqual({r[3] for r in rows[1:]}, {"3 forks: not 95 %"})
        self.assertNotIn("fork", " ".join(c for r in rows[1:] for c in r[4:]))
        # pthreads on 1 fork beside 3 for the others: the row's range, and the 1-fork cell marked itself.
        d3 = synthetic.write_cells(self.tmp / "m", ("N",), cells())
        rewrite(d3, lambda row: row if row["backend"] != "pthreads" or row["repetition"] == "0" else None)
        rows = md_rows(summary.summary_section(cr.load(d3).df))
        header, body = rows[0], {r[1]: dict(zip(rows[0], r)) for r in rows[1:]}
        self.assertEqual(body["2"]["forks"], "1–3")
        self.assertIn("1 fork: within one process", body["2"]["OS threads"])
        self.assertIn("3 forks: not 95 %", body["2"]["coop"])

    def test_a_rate_is_better_higher(self):
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells("lock"))
        rewrite(d, lambda row: dict(row, unit="acquisitions/s"))
        rows, fams = summary.summary_rows(cr.load(d).df)
        p1 = next(r for r in rows if r["P"] == 1)
        self.assertTrue(p1["higher"])
        self.assertEqual(p1["fastest"], "pthreads")  # the highest rate
        self.assertAlmostEqual(p1["cells"]["go"]["ratio"], 10.0)  # 200 / 20: ten times fewer per second
        self.assertEqual(p1["cells"]["boostfiber"]["variants"], ["boostfiber/round_robin"])

    def test_a_merged_sweep_keeps_hosts_apart(self):
        cells_ = {("native", "work", (("N", 1),), 2): 10.0, ("go", "work", (("N", 1),), 2): 20.0}
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells_)
        df = cr.load(d).df
        slow = df.copy()
        slow["value"] = slow["value"] * 3  # the same points measured on a slower host
        df["host"], slow["host"] = "fast", "slow"
        both = pd.concat([df, slow], ignore_index=True)
        rows, _ = summary.summary_rows(both)
        self.assertEqual(rows[0]["fastest"], "native @fast")
        self.assertEqual(rows[0]["cells"]["go"]["variants"], ["go @fast"])
        self.assertAlmostEqual(rows[0]["cells"]["go"]["ratio"], 2.0)

    def test_a_backend_alone_is_not_the_fastest(self):
        """The first-user review's F8: at P=1 only a single-processor backend ran; it must not be crowned
        "fastest" of a row where nothing else ran."""
        cells_ = {("pyasync", "work", (("N", 1),), 1): 500.0, ("native", "work", (("N", 1),), 2): 10.0,
                  ("pyasync", "work", (("N", 1),), 2): 90.0}
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells_)
        rows, _ = summary.summary_rows(cr.load(d).df)
        p1 = next(r for r in rows if r["P"] == 1)
        self.assertIsNone(p1["fastest"])
        self.assertEqual(p1["alone"], ["pyasync"])
        self.assertEqual(next(r for r in rows if r["P"] == 2)["fastest"], "native")
        text = summary.summary_section(cr.load(d).df)
        self.assertIn("only pyasync ran (nothing to compare)", text)
        self.assertNotIn("**pyasync**", text)

    def test_failed_and_refused_are_counted_apart(self):
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        rewrite(d, refuse)

        def fail_one(row):
            if row["backend"] == "tokio" and row["param.N"] == "1" and row["processors"] == "1":
                row.update(status="failed", value="", reason="self-check failed: sum = 1, expected 2")
            return row

        rewrite(d, fail_one)
        md = self.plot(d)
        s = section(md, "Summary")
        self.assertIn("Failed points: 1", s)
        self.assertIn("Refused points: 1", s)
        body = {(r[0], r[1]): dict(zip(md_rows(s)[0], r)) for r in md_rows(s)[1:]}
        self.assertIn("refused at 1", body[("work", "2")]["OS threads"])
        self.assertIn("failed at 1", body[("work", "1")]["tokio"])
        # The refused point is listed as refused, never as failed.
        self.assertIn("pthreads/work/N=2/P=2", section(md, "Refused points"))
        self.assertIn("pid_max", section(md, "Refused points"))
        self.assertNotIn("pthreads/work/N=2/P=2", section(md, "Failed points"))
        self.assertIn("tokio/work/N=1/P=1", section(md, "Failed points"))
        # In the median table its cell says refused.
        med = section(md, "Median values")
        row = next(r for r in md_rows(med) if r[0] == "2")
        header = md_rows(med)[0]
        self.assertEqual(row[header.index("pthreads P=2")], "refused")
        self.assertIn("failed: 3, refused: 3.", section(md, "Context"))  # rows: 3 forks each

    def test_median_tables_mark_the_best_value_per_row(self):
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        md = self.plot(d)
        rows = md_rows(section(md, "Median values"))
        header = rows[0]
        n1 = next(r for r in rows if r[0] == "1")
        bold = [header[i] for i, c in enumerate(n1) if c.startswith("**")]
        self.assertEqual(bold, ["go P=1", "native-ws P=2"])  # the best of each P

    def test_noisy_table_says_what_its_numbers_are(self):
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells(),
                                  noisy=lambda b, w, v, p, fork: b == "go" and fork == 1)
        md = self.plot(d)
        s = section(md, "Noisy points")
        header = md_rows(s)[0]
        self.assertNotIn("noisy forks", header)
        self.assertIn("noisy forks (of the point's)", header)
        row = next(r for r in md_rows(s) if "go/work/N=1/P=1" in r[0])
        self.assertEqual(row[1], "1 of 3: fork 1")

    def test_vm_steal_is_counted_and_its_worst_fork_named(self):
        import pandas as pd
        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        csv = Path(d) / "results.csv"
        df = pd.read_csv(csv)
        self.assertIn("steal_cpus", df.columns)
        self.assertIn("VM steal time (`steal_cpus`): none above", section(self.plot(d), "Noisy points"))
        worst = (df["point"] == "go/work/N=1/P=1") & (df["repetition"] == 2)
        df.loc[worst, "steal_cpus"] = 0.4
        df.loc[(df["point"] == "go/work/N=1/P=1") & (df["repetition"] == 0), "steal_cpus"] = 0.1
        df.to_csv(csv, index=False)
        s = section(self.plot(d), "Noisy points")
        self.assertRegex(s, r"2 of \d+ forks above 0\.05, the most 0\.4 \(`go/work/N=1/P=1`, fork 2\)")


class RefusedFigureTest(synthetic.TempDirCase):
    def test_a_refused_point_is_drawn_as_refused(self):
        import matplotlib.pyplot as plt

        d = synthetic.write_cells(self.tmp / "r", ("N",), cells())
        rewrite(d, refuse)
        res = cr.load(d)
        fig, ax = plt.subplots()
        failed = cr.plot_lines(ax, res.df[res.df["processors"] == 2], "param.N", xlabel="N", ylabel="ms")
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        self.assertTrue(any(lab.startswith("refused") for lab in labels), labels)
        self.assertFalse(any(lab.startswith("failed") for lab in labels), labels)
        self.assertEqual(failed, 0)
        plt.close(fig)


if __name__ == "__main__":
    unittest.main()
