"""test_report_html — report.html as plot.py writes it beside report.md (scripts/report_html.py): the summary first
(winner and each family's best, forks once per row), a section per figure, every point's strip plot (cold apart
from warm, the interval's label, the command line), failed, refused and noisy points apart, the context last;
nothing outside its folder referenced. The browser test is test_report_browser.py.
Run: /usr/bin/python3 -m unittest -v test_report_html (in tests/scripts).
"""

import re
import sys
import unittest
from html.parser import HTMLParser
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent / "scripts"))

import synthetic  # noqa: E402
from synthetic import run  # noqa: E402
from test_report import refuse, rewrite  # noqa: E402

SECTIONS = ["summary", "figures", "points", "failed", "refused", "noisy", "context"]


class Page(HTMLParser):
    """The ids of the h2 headings in order, every src/href, the tags seen, and the summary table's cells."""

    def __init__(self):
        super().__init__()
        self.h2, self.refs, self.tags, self.rows, self._in_summary, self._cell = [], [], [], [], False, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "h2":
            self.h2.append(a.get("id"))
        for k in ("src", "href"):
            if a.get(k):
                self.refs.append(a[k])
        if tag == "table" and a.get("id") == "summary-table":
            self._in_summary = True
        if self._in_summary and tag == "tr":
            self.rows.append([])
        if self._in_summary and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._in_summary = False
        if self._in_summary and tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def make_folder(d: Path) -> Path:
    """A synthetic sweep with warm iterations (1 warm-up, 3 timed), a noisy point, failed and refused points."""
    noisy = synthetic.point_id("native", "switch", {"K": 2000, "T": 100}, 2)
    synthetic.make_results(d, warmup=1, iterations=3, noisy=(noisy,))
    rewrite(d, lambda row: refuse(row, n="10"))
    return d


class ReportHtmlTest(synthetic.TempDirCase):
    prefix = "coopbench-report-html-"

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.dir = Path(tempfile.mkdtemp(prefix="coopbench-report-html-"))
        make_folder(cls.dir / "r")
        cls.proc = run("plot.py", cls.dir / "r")
        cls.html = (cls.dir / "r" / "report.html").read_text() if (cls.dir / "r" / "report.html").exists() else ""
        cls.page = Page()
        cls.page.feed(cls.html)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_written_beside_report_md(self):
        self.assertEqual(self.proc.returncode, 0, self.proc.stderr)
        self.assertIn("report.html", self.proc.stdout)
        self.assertTrue((self.dir / "r" / "report.md").exists())
        self.assertTrue(self.html.startswith("<!DOCTYPE html>"))

    def test_sections_in_order_summary_first_context_last(self):
        ids = [i for i in self.page.h2 if i in SECTIONS]
        self.assertEqual(ids, SECTIONS)
        self.assertEqual(self.page.h2[0], "summary")
        self.assertEqual(self.page.h2[-1], "context")

    def test_summary_names_the_winner_and_forks_once_per_row(self):
        header, *rows = self.page.rows
        self.assertEqual(header[:5], ["workload", "P", "points", "forks", "winner (points won)"])
        self.assertIn("coop", header)
        self.assertIn("OS threads", header)
        create = next(r for r in rows if r[0] == "create" and r[1] == "2")
        self.assertEqual(create[3], "3 forks: not 95 %")  # 3 forks and what the brackets are, once in its column
        self.assertTrue(create[4].startswith("native"), create)
        coop = create[header.index("coop")]
        self.assertTrue(coop.startswith("fastest"), coop)  # the winner's own family: no self-ratio interval
        os_threads = create[header.index("OS threads")]
        self.assertRegex(os_threads, r"^\d+(\.\d+)?× \(")  # a ratio with its interval
        self.assertNotIn("fork", " ".join(c for r in rows for c in r[5:]))  # never in a cell

    def test_nothing_outside_the_folder(self):
        self.assertNotIn("<script", self.html)
        for ref in self.page.refs:
            self.assertFalse(re.match(r"^[a-z]+:", ref) and not ref.startswith("#"), ref)
            if not ref.startswith("#"):
                self.assertFalse(ref.startswith("/") or ".." in ref, ref)
                self.assertTrue((self.dir / "r" / ref).exists(), ref)
        self.assertIn("default-src 'none'", self.html)

    def test_every_figure_has_its_section(self):
        figs = sorted(p.name for p in (self.dir / "r" / "figures").glob("*.svg"))
        self.assertTrue(figs)
        for f in figs:
            self.assertIn(f"src='figures/{f}'", self.html)

    def test_every_point_has_a_strip_plot_and_its_command(self):
        body = self.html.split("id='points'", 1)[1].split("id='failed'", 1)[0]
        points = re.findall(r"<div class='point'>(.*?)</div>", body, re.S)
        import pandas as pd
        n = pd.read_csv(self.dir / "r" / "results.csv")["point"].nunique()
        self.assertEqual(len(points), n)
        ok = [p for p in points if "<svg" in p]
        self.assertTrue(ok)
        one = next(p for p in ok if "native/switch/K=2000/T=100/P=2" in p)
        self.assertIn("cold", one)
        self.assertIn("warm", one)
        self.assertIn("interval (3 forks", one)
        self.assertIn("coopbench run -b native -w switch -p K=2000 -p T=100 -P 2 -r 3 -W 1 -I 3", one)
        self.assertIn("⚠ noisy", one)
        # 3 forks x 3 timed iterations on the warm row and 3 cold dots: 12 dots
        self.assertEqual(one.count("<circle"), 12)
        refused = next(p for p in points if "pthreads/create/N=10/P=2" in p)
        self.assertIn("refused", refused)

    def test_failed_refused_noisy_apart(self):
        failed = self.html.split("id='failed'", 1)[1].split("<h2", 1)[0]
        refused = self.html.split("id='refused'", 1)[1].split("<h2", 1)[0]
        noisy = self.html.split("id='noisy'", 1)[1].split("<h2", 1)[0]
        self.assertIn(synthetic.CREATE_FAIL_REASON, failed)
        self.assertNotIn("pid_max", failed)
        self.assertIn("pid_max", refused)
        self.assertIn("native/switch/K=2000/T=100/P=2", noisy)

    def test_context_last_with_the_machine(self):
        ctx = self.html.split("id='context'", 1)[1]
        self.assertIn("Synthetic CPU", ctx)
        self.assertIn("cpu_model", ctx)


class AloneTest(synthetic.TempDirCase):
    prefix = "coopbench-report-html-alone-"

    def test_a_backend_alone_in_its_row_is_not_a_winner(self):
        import coopbench as cr
        import report_html
        d = synthetic.make_results(self.tmp / "r", workloads=("create",))
        rewrite(d, lambda row: None if row["processors"] == "1" and row["backend"] != "native" else row)
        page = Page()
        page.feed(report_html.summary_html(cr.load(d).df))
        header, *rows = page.rows
        one = next(r for r in rows if r[1] == "1")
        two = next(r for r in rows if r[1] == "2")
        self.assertEqual(one[4], "only native ran")
        self.assertTrue(one[header.index("coop")].startswith("alone"), one)
        self.assertTrue(two[4].startswith("native (7/7)"), two)


class LineupTest(synthetic.TempDirCase):
    """scripts/lineup.py: folders of the same points lined up; a step marked where compare.py's verdict says
    slower, "?" where the forks are too few to test."""
    prefix = "coopbench-lineup-"

    def test_a_slower_sweep_is_marked_and_too_few_forks_are_not(self):
        a = synthetic.make_results(self.tmp / "a", repetitions=4, workloads=("switch",))
        b = synthetic.make_results(self.tmp / "b", repetitions=4, scale=2.0, workloads=("switch",))
        c = synthetic.make_results(self.tmp / "c", repetitions=3, scale=2.0, workloads=("switch",))
        out = self.tmp / "lineup.html"
        p = run("lineup.py", a, b, c, "--out", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        page = out.read_text()
        self.assertNotIn("<script", page)
        row = re.search(r"<tr><td><code>native/switch/K=2000/T=100/P=2</code></td>(.*?)</tr>", page, re.S).group(1)
        steps = re.findall(r"<td class='[^']*' title='([^']*)'>", row)
        self.assertEqual(steps[0], "slower")  # a -> b: every value twice: 4 forks a side, p = 0.029
        self.assertTrue(steps[1].startswith("cannot be tested: 3 forks"), steps)  # b -> c: 3 forks
        self.assertIn("2.00×", row)
        self.assertIn("A step compares two sweeps", page)

    def test_one_folder_is_refused(self):
        a = synthetic.make_results(self.tmp / "a", workloads=("switch",))
        self.assertEqual(run("lineup.py", a).returncode, 2)


if __name__ == "__main__":
    unittest.main()
