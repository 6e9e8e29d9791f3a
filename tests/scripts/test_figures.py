"""test_figures — figures that read well, one Python API (scripts/coopbench, scripts/figures, plot.py, compare.py).

Colours: one per backend in a figure, from the colour-blind-safe palettes (Okabe-Ito, then
Tol's muted), the same in every figure; cold lines in panels of their own; no panel with
more than MAX_LINES lines. Captions: wrapped (a figure at most MAX_WIDTH_PX wide), fixed
parameters named, a lone failed point on a sensible axis, the top median under a labelled
tick, an empty run's report without "schema version 1". A workload no module knows gets a
generic figure. A garbage row of results.csv is reported (line numbers) by plot.py and
compare.py. One import name (`coopbench`) in the scripts; no issue numbers as reasons.
Run: /usr/bin/python3 -m unittest -v test_figures (in tests/scripts).
"""

import contextlib
import importlib.util
import re
import struct
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SCRIPTS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
from matplotlib.colors import to_hex  # noqa: E402

import coopbench  # noqa: E402
import synthetic  # noqa: E402
from synthetic import run  # noqa: E402

# The backends of the quick reference run (11), plus two no style table knows.
MANY = ("boostfiber/round_robin", "boostfiber/shared_work", "boostfiber/work_stealing", "go", "native",
        "native-clang", "native-implicit", "native-parasail", "native-ws", "pthreads", "stdthread",
        "greenlets", "tokio")
OKABE_ITO = {"#000000", "#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7"}
TOL_MUTED = {"#cc6677", "#332288", "#ddcc77", "#117733", "#88ccee", "#882255", "#44aa99", "#999933", "#aa4499",
             "#dddddd"}
MAX_LINES = 8
MAX_WIDTH_PX = 1200


def png_size(path):
    """png_size — (width, height) of a PNG from its IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24])


def load_module(name):
    spec = importlib.util.spec_from_file_location(f"test_fig_{name}", SCRIPTS / "figures" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@contextlib.contextmanager
def captured_figures():
    """Within the block, coopbench.save_figure keeps each figure (not closed) in the yielded list."""
    import matplotlib.pyplot as plt
    kept = []
    real = coopbench.save_figure

    def keep(fig, outdir, name):
        kept.append(fig)
        return [Path(outdir) / f"{name}.png", Path(outdir) / f"{name}.svg"]

    coopbench.save_figure = keep
    try:
        yield kept
    finally:
        coopbench.save_figure = real
        for f in kept:
            plt.close(f)


def drawn_lines(ax):
    """The labelled data lines of an axes (not the × markers, not legend proxies): [(label, colour)]."""
    out = []
    for ln in ax.get_lines():
        lab = ln.get_label()
        if lab.startswith("_") or len(ln.get_xdata()) == 0:
            continue
        out.append((lab, to_hex(ln.get_color())))
    return out


class TempDirCase(synthetic.TempDirCase):
    prefix = "coopbench-figures-test-"


def many_backends(folder, **kw):
    """A synthetic folder with MANY backends (each with the base values of a known one)."""
    bases = list(synthetic.BASE.values())
    old = dict(synthetic.BASE)
    try:
        for i, b in enumerate(MANY):
            synthetic.BASE.setdefault(b, bases[i % len(bases)] * (1 + 0.1 * i))
        return synthetic.make_results(folder, backends=MANY, **kw)
    finally:
        synthetic.BASE.clear()
        synthetic.BASE.update(old)


class ColourTest(TempDirCase):
    def test_palette_unique_and_colour_blind_safe(self):
        colours = coopbench.backend_colors(MANY)
        self.assertEqual(len(set(colours.values())), len(MANY), colours)
        for b, c in colours.items():
            self.assertIn(c.lower(), OKABE_ITO | TOL_MUTED, b)

    def test_a_backend_keeps_its_colour(self):
        few = coopbench.backend_colors(("native", "pthreads"))
        many = coopbench.backend_colors(MANY)
        for b in few:
            self.assertEqual(few[b], many[b], b)
        # Known backends do not depend on what else is in the figure; unknown ones on their name only.
        self.assertEqual(coopbench.backend_colors(("greenlets",))["greenlets"],
                         coopbench.backend_colors(("greenlets", "native"))["greenlets"])

    def test_fig7_many_backends_one_colour_each_cold_apart_small_multiples(self):
        d = many_backends(self.tmp / "run", warmup=1, iterations=3, repetitions=3)
        res = coopbench.load(d)
        with captured_figures() as figs:
            items = load_module("fig07_creation").make(res, self.tmp / "out")
        self.assertEqual(len(items), 1)
        fig = figs[0]
        colour_of = {}
        cold_axes = warm_axes = 0
        for ax in fig.axes:
            lines = drawn_lines(ax)
            if not lines:
                continue
            self.assertLessEqual(len(lines), MAX_LINES, (ax.get_title(), [lab for lab, _ in lines]))
            title = ax.get_title().lower()
            if "cold" in title:
                cold_axes += 1
            else:
                warm_axes += 1
            for lab, c in lines:
                # No panel mixes warm and cold lines: the panel's title says which.
                self.assertNotRegex(lab, r"\b(warm|cold)\b")
                backend = lab.split(" ")[0]
                self.assertIn(c, OKABE_ITO | TOL_MUTED, lab)
                colour_of.setdefault(backend, set()).add(c)
        self.assertGreater(cold_axes, 0)
        self.assertGreater(warm_axes, 0)
        self.assertEqual(set(colour_of), set(MANY))
        for b, cs in colour_of.items():
            self.assertEqual(len(cs), 1, (b, cs))
        owners = {}
        for b, cs in colour_of.items():
            c = next(iter(cs))
            self.assertNotIn(c, owners, f"{b} and {owners.get(c)} share {c}")
            owners[c] = b

    def test_cold_only_on_request_without_warm(self):
        # One run per fork: cold is all there is; one panel row, no "cold" panel beside a warm one.
        d = synthetic.make_results(self.tmp / "run", workloads=("create",))
        res = coopbench.load(d)
        with captured_figures() as figs:
            load_module("fig07_creation").make(res, self.tmp / "out")
        titles = [ax.get_title() for ax in figs[0].axes if drawn_lines(ax)]
        self.assertEqual(len(titles), 1, titles)


class CaptionTest(TempDirCase):
    def test_figures_at_most_1200_px_wide(self):
        d = many_backends(self.tmp / "run", warmup=1, iterations=3, repetitions=3)
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("fig7_thread_creation", "fig8_context_switch", "fig9_locking"):
            w, h = png_size(d / "figures" / f"{name}.png")
            self.assertLessEqual(w, MAX_WIDTH_PX, name)

    def test_table1_and_fig10_at_most_1200_px_wide(self):
        # Their legends stood beside the axes: Table 1 was 1,700 px wide, Fig. 10 1,900 px.
        cells = {}
        for i, b in enumerate(MANY[:8]):
            cells[(b, "tokenring", (("K", 1000), ("N", 1000)), 2)] = 10.0 * (i + 1)
            for m in (1, 2, 4):
                cells[(b, "matrix", (("M", m), ("N", 48)), 2)] = 0.1 * (i + 1) / m
        d = synthetic.write_cells(self.tmp / "run", ("K", "M", "N"), cells)
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        for name in ("table1", "fig10_matrix"):
            w, h = png_size(d / "figures" / f"{name}.png")
            self.assertLessEqual(w, MAX_WIDTH_PX, name)

    def test_fixed_parameters_in_caption(self):
        d = synthetic.make_results(self.tmp / "run", workloads=("switch",))
        res = coopbench.load(d)
        with captured_figures() as figs:
            load_module("fig08_switch").make(res, self.tmp / "out")
        text = "\n".join(t.get_text() for t in figs[0].texts)
        self.assertIn("K=2000", text)

    def test_caption_lines_wrapped(self):
        d = many_backends(self.tmp / "run", warmup=1, iterations=3, repetitions=3)
        res = coopbench.load(d)
        with captured_figures() as figs:
            load_module("fig07_creation").make(res, self.tmp / "out")
        for t in figs[0].texts:
            for line in t.get_text().split("\n"):
                self.assertLessEqual(len(line), 160, line)

    def test_only_point_failed_sits_on_a_sensible_axis(self):
        d = synthetic.make_results(self.tmp / "run", backends=("pthreads",), processors=(1,), workloads=("create",))
        import csv
        with open(d / "results.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r["param.N"] == "100000"]
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        res = coopbench.load(d)
        with captured_figures() as figs:
            load_module("fig07_creation").make(res, self.tmp / "out")
        ax = [a for a in figs[0].axes if a.get_lines()][0]
        lo, hi = ax.get_ylim()
        self.assertGreaterEqual(lo, 0)
        xs = [ln for ln in ax.get_lines() if ln.get_marker() == "x"]
        self.assertEqual(len(xs), 1)
        y = xs[0].get_ydata()[0]
        self.assertTrue(lo < y < hi, (lo, y, hi))
        # No number means anything on an axis without values.
        labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
        self.assertEqual(labels, [])

    def test_top_median_under_a_labelled_tick(self):
        d = synthetic.make_results(self.tmp / "run", workloads=("switch", "lock-global", "lock-local"))
        res = coopbench.load(d)
        with captured_figures() as figs:
            load_module("fig08_switch").make(res, self.tmp / "out")
            load_module("fig09_locking").make(res, self.tmp / "out")
        for fig in figs:
            fig.canvas.draw()
            for ax in fig.axes:
                ys = [y for ln in ax.get_lines() if not ln.get_label().startswith("_") for y in ln.get_ydata()]
                if not ys:
                    continue
                lo, hi = ax.get_ylim()
                ticks = [t for t, lab in zip(ax.get_yticks(), ax.get_yticklabels())
                         if lo <= t <= hi and lab.get_text()]
                self.assertTrue(ticks, ax.get_title())
                self.assertGreaterEqual(max(ticks) * 1.0001, max(ys), (ax.get_title(), ticks, max(ys)))

    def test_empty_run_report_says_nothing_of_schema_version_1(self):
        d = self.tmp / "run"
        d.mkdir()
        (d / "results.csv").write_text(",".join(synthetic.COLUMNS) + "\n")
        p = run("plot.py", d)
        self.assertIn(p.returncode, (0,), p.stderr)
        report = (d / "report.md").read_text()
        self.assertNotIn("schema version 1", report)
        self.assertIn("No rows", report)


class GenericFigureTest(TempDirCase):
    def test_unknown_workload_gets_a_generic_figure(self):
        d = synthetic.make_results(self.tmp / "run")
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        png = d / "figures" / "generic_mystery.png"
        self.assertTrue(png.is_file(), sorted(x.name for x in (d / "figures").iterdir()))
        report = (d / "report.md").read_text()
        self.assertRegex(report, r"mystery.*generic|generic.*mystery")
        # The known workloads get none.
        self.assertFalse((d / "figures" / "generic_create.png").exists())


    def test_a_parameter_that_takes_zero_is_drawn_on_a_linear_axis(self):
        # A channel's capacity C=0 (synchronous) is its most telling value: on a log axis it
        # vanished from the generic figure without a word.
        import csv
        d = synthetic.make_results(self.tmp / "run", backends=("native",), processors=(1,))
        with open(d / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["workload"] == "mystery" and r["param.M"] == "1":
                r["param.M"] = "0"
                r["point"] = r["point"].replace("/M=1/", "/M=0/")
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        res = coopbench.load(d)
        plot = importlib.util.spec_from_file_location("test_fig_plot", SCRIPTS / "plot.py")
        mod = importlib.util.module_from_spec(plot)
        plot.loader.exec_module(mod)
        with captured_figures() as figs:
            mod.generic_items(res, self.tmp / "out", {"create", "switch", "lock-local", "lock-global"})
        self.assertEqual(len(figs), 1)
        ax = [a for a in figs[0].axes if a.get_lines()][0]
        self.assertEqual(ax.get_xscale(), "linear")
        xs = {x for ln in ax.get_lines() if not ln.get_label().startswith("_") for x in ln.get_xdata()}
        self.assertIn(0, xs)
        self.assertNotIn("(log)", ax.get_xlabel())

    def test_lines_of_one_backend_are_told_apart(self):
        # The generic figure draws a line per backend and per other parameter (mystery's mode):
        # two lines of one backend in one colour, style and marker could not be told apart.
        d = synthetic.make_results(self.tmp / "run", backends=("native",), processors=(1,))
        res = coopbench.load(d)
        plot = importlib.util.spec_from_file_location("test_fig_plot2", SCRIPTS / "plot.py")
        mod = importlib.util.module_from_spec(plot)
        plot.loader.exec_module(mod)
        with captured_figures() as figs:
            mod.generic_items(res, self.tmp / "out", {"create", "switch", "lock-local", "lock-global"})
        ax = [a for a in figs[0].axes if a.get_lines()][0]
        looks = {ln.get_label(): (ln.get_linestyle(), ln.get_marker()) for ln in ax.get_lines()
                 if not ln.get_label().startswith("_") and len(ln.get_xdata())}
        self.assertEqual(sorted(looks), ["native mode=a", "native mode=b"])
        self.assertNotEqual(looks["native mode=a"], looks["native mode=b"])

    def test_one_fork_is_not_forks(self):
        d = synthetic.make_results(self.tmp / "run", workloads=("switch",), repetitions=1, warmup=1, iterations=3)
        note = coopbench.figure_note(coopbench.load(d).df)
        self.assertIn("1 fork per point × 3 timed iterations", note)
        self.assertIn("band: 1 fork: variation within one process only", note)  # never a 95 % band
        self.assertNotRegex(note, r"95 ?%")
        cold = synthetic.make_results(self.tmp / "cold", workloads=("switch",), repetitions=1, processors=(1,))
        note = coopbench.figure_note(coopbench.load(cold).df)
        self.assertIn("P=1 processor; ", note)
        self.assertIn("1 fork per point, one cold run", note)

    def test_timed_counts_that_differ_are_a_range(self):
        # The cost estimate gives a costly point fewer timed iterations (switch T=1000: 3, the
        # others 5): the note says the range, not the largest count as if every point had it.
        d = synthetic.make_results(self.tmp / "run", workloads=("switch",), repetitions=1, warmup=1, iterations=3)
        df = coopbench.load(d).df
        one = df["point"].iloc[0]
        drop = df[(df["point"] == one) & (df["phase"] == "measure")].index[-1:]
        note = coopbench.figure_note(df.drop(drop))
        self.assertIn("1 fork per point × 2–3 timed iterations", note)


class CompareOptionsTest(TempDirCase):
    def test_compare_says_when_backend_options_differ(self):
        # results.csv has no backend-option column: a folder is one sweep with one set of options
        # (context.json). Two folders that ran with different options match point by point, so
        # the difference is what compare.py measures, and it must say so.
        import json
        a = synthetic.make_results(self.tmp / "a", workloads=("switch",))
        b = synthetic.make_results(self.tmp / "b", workloads=("switch",))
        ctx = json.loads((b / "context.json").read_text())
        ctx["backend_options"] = {"guard": "off"}
        (b / "context.json").write_text(json.dumps(ctx))
        p = run("compare.py", a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("backend options differ: A (defaults), B guard=off", p.stdout)
        self.assertIn("backend options differ", p.stderr)
        same = run("compare.py", a, a)
        self.assertNotIn("backend options differ", same.stdout + same.stderr)


class GarbageRowTest(TempDirCase):
    def _garbage(self, d):
        lines = (d / "results.csv").read_text().splitlines(keepends=True)
        lines.insert(5, "this line is garbage\n")
        lines.insert(9, "native,,,\n")
        (d / "results.csv").write_text("".join(lines))
        return (6, 10)  # 1-based line numbers of the two garbage lines

    def test_plot_reports_dropped_rows(self):
        d = synthetic.make_results(self.tmp / "run", workloads=("switch",))
        bad = self._garbage(d)
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"dropped 2 row")
        for n in bad:
            self.assertIn(str(n), p.stderr)
        report = (d / "report.md").read_text()
        self.assertRegex(report, r"2 row\(s\) of results.csv dropped")
        self.assertIn(f"{bad[0]}, {bad[1]}", report)

    def test_compare_reports_dropped_rows(self):
        a = synthetic.make_results(self.tmp / "a", workloads=("switch",))
        b = synthetic.make_results(self.tmp / "b", workloads=("switch",), scale=2.0)
        bad = self._garbage(b)
        p = run("compare.py", a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stderr, r"dropped 2 row")
        self.assertIn(f"{bad[0]}, {bad[1]}", p.stderr)
        self.assertNotIn(f"{a}:", p.stderr)  # A has no garbage: it is not named


class OneApiTest(unittest.TestCase):
    def test_scripts_import_the_package_only(self):
        files = [SCRIPTS / "plot.py", SCRIPTS / "compare.py", SCRIPTS / "scaling_model.py"]
        files += sorted((SCRIPTS / "figures").glob("*.py"))
        files += sorted(HERE.glob("*.py")) + [ROOT / "tests" / "apps" / "test_app_scripts.py"]
        for f in files:
            if f.name == "test_figures.py":
                continue
            self.assertNotRegex(f.read_text(), r"import coopbench_results|from coopbench_results",
                                f.relative_to(ROOT))

    def test_the_old_name_is_gone(self):
        self.assertFalse((SCRIPTS / "coopbench_results.py").exists())
        self.assertTrue(hasattr(coopbench, "NUMERIC_COLUMNS"))

    def test_no_issue_numbers_as_reasons(self):
        pattern = re.compile(r"\bissues?" + r" #?[0-9]+")
        for base in (SCRIPTS, HERE):
            for f in sorted(base.rglob("*")):
                if not f.is_file() or f.suffix not in (".py", ".sh", ".md", ".txt", ".json") or "__pycache__" in f.parts:
                    continue
                for i, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                    self.assertIsNone(pattern.search(line), f"{f.relative_to(ROOT)}:{i}: {line.strip()}")


if __name__ == "__main__":
    unittest.main()
