"""test_figure_lint — every figure the modules draw from small committed results folders is readable
(figure_checks): no two labelled lines drawn alike (colour, marker, line style), no text over other text (panel
titles, suptitle, annotations, legends: matplotlib's bounding boxes), no series with the failed point's ×, and
every log axis labelled across its data. The checks themselves are shown failing on figures made to fail.
Seen failing on c2949b3's scripts/figures (figure_checks.py FOLDER with that commit's scripts/): over tiny,
alike lines in fig10_matrix, text over text in micro_share and table1 (its daggers), micro_channel's titles edge
to edge, the failed × for tas-backoff in cal_fig3_scalability and owner_access; over units-quirk, alike lines in
quirk_fig4_6_fib.
Run: /usr/bin/python3 -m unittest -v test_figure_lint (in tests/scripts).
"""

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import figure_checks as fc  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

REFERENCE = HERE.parent.parent / "results" / "reference"
# Small folders that between them reach every module of scripts/figures/ (tiny: the tiny plan on every backend,
# the only committed folder with `channel`; quick: the quick plan, what scripts/run.sh draws; the others as the
# paper plans wrote them).
FOLDERS = ("tiny", "quick", "ws-paper", "skynet", "locks-owner_access", "locks-fig3_scalability", "units-quirk", "io", "io-extra")


class ChecksCanFail(unittest.TestCase):
    """Each check finds what it is for on a figure drawn to have it."""

    def tearDown(self):
        plt.close("all")

    def test_alike_lines_found(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2], color="#D55E00", marker="o", linestyle="-", label="native P=1")
        ax.plot([1, 2], [2, 3], color="#D55E00", marker="o", linestyle="-", label="native P=2")
        ax.plot([1, 2], [3, 4], color="#D55E00", marker="o", linestyle="--", label="native P=3")
        probs = fc.alike_lines(fig)
        self.assertTrue(any("native P=1" in p and "native P=2" in p for p in probs), probs)
        self.assertFalse(any("native P=3" in p for p in probs), probs)

    def test_alike_legend_entries_found(self):
        fig, (a, b) = plt.subplots(1, 2)
        a.plot([1], [1], color="grey", linestyle="--", label="ideal min(M, 1)")
        b.plot([1], [1], color="grey", linestyle="--", label="ideal min(M, 2)")
        fig.legend(*[sum(x, []) for x in zip(a.get_legend_handles_labels(), b.get_legend_handles_labels())])
        self.assertTrue(any(p.startswith("legend") for p in fc.alike_lines(fig)), fc.alike_lines(fig))

    def test_overlapping_titles_found(self):
        fig, (a, b) = plt.subplots(1, 2, figsize=(5, 3))
        a.set_title("capacity C=1 · P=1 · coop (native*), boostfiber · warm")
        b.set_title("capacity C=1 · P=1 · other backends · cold")
        probs = fc.overlapping_text(fig)
        self.assertTrue(any("overlaps" in p for p in probs), probs)
        a.set_title("C=1")
        b.set_title("C=2")
        self.assertEqual(fc.overlapping_text(fig), [])

    def test_touching_titles_found(self):
        # Two texts edge to edge read as one run-on line ("... · other backendscapacity C=1 ..."): found; a few
        # pixels apart they pass.
        fig = plt.figure(figsize=(6, 2))
        a = fig.text(0.05, 0.5, "capacity C=0 · P=2 · other backends")
        fig.canvas.draw()
        box = a.get_window_extent(fig.canvas.get_renderer())
        b = fig.text(box.x1 / fig.bbox.width, 0.5, "capacity C=1 · P=2")
        probs = fc.overlapping_text(fig)
        self.assertTrue(any("touches" in p for p in probs), probs)
        b.set_x((box.x1 + 3 * fc.TEXT_GAP) / fig.bbox.width)
        self.assertEqual(fc.overlapping_text(fig), [])

    def test_failed_marker_found(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2], marker="x", label="tas-backoff")
        ax.plot([1], [1], marker="x", linestyle="none")  # a failed point: unlabelled
        self.assertEqual(len(fc.reserved_markers(fig)), 1)

    def test_log_axis_without_low_ticks_found(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 3], [1.5, 30, 60], label="a")
        ax.set_yscale("log")
        ax.set_ylim(1.2, 80)
        from matplotlib.ticker import FixedLocator, FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_major_locator(FixedLocator([5, 10, 50]))
        self.assertTrue(fc.log_ticks_short(fig))
        ax.yaxis.set_major_locator(FixedLocator([1.5, 10, 50]))
        self.assertEqual(fc.log_ticks_short(fig), [])


class CoopBuildsApart(unittest.TestCase):
    """coop's five builds (native, -ws, -parasail, -clang, -implicit) overlap at 40-100 ns in Fig. 7: their colours
    must differ more than a hue step (the review: "near-identical red/pink hues")."""

    BUILDS = ("native", "native-ws", "native-parasail", "native-clang", "native-implicit")

    def test_palette_keeps_them_apart(self):
        from coopbench import style
        colours = style.backend_colors(list(self.BUILDS) + ["go", "tokio", "pthreads", "boostfiber"])
        self.assertEqual(fc.close_colours({b: colours[b] for b in self.BUILDS}), [])

    def test_the_old_rose_is_found(self):
        # c2949b3's colours: native-implicit was a rose (#CC6677) beside native-parasail's reddish purple.
        old = {"native": "#D55E00", "native-ws": "#E69F00", "native-parasail": "#CC79A7", "native-clang": "#882255",
               "native-implicit": "#CC6677"}
        probs = fc.close_colours(old)
        self.assertTrue(any("native-implicit" in p and "native-parasail" in p for p in probs), probs)


class ReferenceFigures(unittest.TestCase):
    """Every figure of FOLDERS passes every check."""

    figs = []

    @classmethod
    def setUpClass(cls):
        for f in FOLDERS:
            if (REFERENCE / f / "results.csv").exists():
                cls.figs += [(f"{f}/{name}", fig) for name, fig in fc.draw_all(REFERENCE / f)]

    @classmethod
    def tearDownClass(cls):
        fc.close_all(cls.figs)

    def _check(self, check):
        self.assertTrue(self.figs, "no figure drawn")
        bad = {name: check(fig) for name, fig in self.figs}
        bad = {k: v for k, v in bad.items() if v}
        self.assertEqual(bad, {})

    def test_every_module_drawn(self):
        names = {n.split("/", 1)[1] for n, _ in self.figs}
        for want in ("fig7_thread_creation", "fig8_context_switch", "fig9_locking", "fig10_matrix", "fig11_skynet",
                     "micro_channel", "micro_share", "owner_access", "quirk_fig7_10_ddb", "quirk_fig4_6_fib",
                     "table1", "cal_fig3_scalability"):
            self.assertIn(want, names)

    def test_no_two_lines_alike(self):
        self._check(fc.alike_lines)

    def test_no_text_over_text(self):
        self._check(fc.overlapping_text)

    def test_failed_marker_not_a_series(self):
        self._check(fc.reserved_markers)

    def test_log_axes_labelled_across_the_data(self):
        self._check(fc.log_ticks_short)

    def test_refused_points_on_the_axis(self):
        self._check(fc.refused_at_a_value)


def channel_folder(tmp: Path) -> Path:
    """tiny's results with its coop builds' channel rows at P=2 also at P=1 (hand-made: no run measured these),
    so that micro_channel has the layout the first-user review drew (coop at both P): its top-left panel title,
    "capacity C=0 (unbuffered: a rendezvous) · P=1 · coop (native*)", is wrapped to two lines under the suptitle."""
    import csv
    import shutil
    out = tmp / "channel"
    out.mkdir()
    for f in ("context.json", "sweep.json"):
        shutil.copy(REFERENCE / "tiny" / f, out / f)
    with open(REFERENCE / "tiny" / "results.csv", newline="") as src:
        rows = list(csv.DictReader(src))
    extra = [dict(r, processors="1", point=r["point"] + "-p1") for r in rows
             if r["workload"] == "channel" and r["processors"] == "2" and r["backend"].startswith("native")]
    assert extra, "tiny has no coop channel rows at P=2"
    with open(out / "results.csv", "w", newline="") as dst:
        w = csv.DictWriter(dst, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows + extra)
    return out


def draw_channel(folder: Path):
    """micro_channel's figure of folder, kept open."""
    import importlib.util
    import coopbench
    spec = importlib.util.spec_from_file_location("lint_micro_channel", fc.SCRIPTS / "figures" / "micro_channel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with fc.kept_figures() as kept:
        mod.make(coopbench.load(folder), "/nonexistent-figure-checks")
    assert [n for n, _ in kept] == ["micro_channel"], kept
    return kept[0][1]


@unittest.skipUnless((REFERENCE / "tiny" / "results.csv").exists(), "results/reference/tiny is absent")
class ChannelTitles(unittest.TestCase):
    """micro_channel with coop at P=1 and P=2: a two-line panel title printed over the suptitle until
    coopbench.figure.tight_layout lowered the panels; the check sees the figure drawn without it, and a figure
    whose suptitle was moved onto a panel title."""

    @classmethod
    def setUpClass(cls):
        import tempfile
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = channel_folder(Path(cls.tmp.name))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def tearDown(self):
        plt.close("all")

    def test_titles_clear_of_each_other(self):
        fig = draw_channel(self.folder)
        self.assertTrue(any("\n" in ax.get_title() for ax in fig.get_axes()), "no title wrapped: not the layout")
        self.assertEqual(fc.overlapping_text(fig), [])

    def test_found_with_matplotlib_tight_layout_alone(self):
        real = fc.cfigure.tight_layout
        fc.cfigure.tight_layout = lambda fig: fig.tight_layout()
        try:
            fig = draw_channel(self.folder)
        finally:
            fc.cfigure.tight_layout = real
        probs = fc.overlapping_text(fig)
        self.assertTrue(any(p.startswith("suptitle") and "overlaps title" in p for p in probs), probs)

    def test_found_when_overprinted(self):
        fig = draw_channel(self.folder)
        first = fig.get_axes()[0].title
        fig.canvas.draw()
        box = first.get_window_extent(fig.canvas.get_renderer())
        fig._suptitle.set_y((box.y0 + box.y1) / 2 / fig.bbox.height)  # the suptitle drawn over the first title
        fig._suptitle.set_va("center")
        probs = fc.overlapping_text(fig)
        self.assertTrue(any("overlaps" in p for p in probs), probs)


class RefusedDrawn(unittest.TestCase):
    """A refused point (status refused: never run) is a ring on the x axis, found by the check when it is not."""

    def test_ring_on_the_axis_and_the_check_sees_one_off_it(self):
        import tempfile
        import synthetic
        from test_report import refuse, rewrite
        with tempfile.TemporaryDirectory() as tmp:
            d = synthetic.make_results(Path(tmp) / "r", workloads=("create",))
            rewrite(d, lambda row: refuse(row, n="10"))
            figs = [(n, f) for n, f in fc.draw_all(d) if n == "fig7_thread_creation"]
            try:
                self.assertEqual(len(figs), 1)
                fig = figs[0][1]
                rings = [ln for ax in fig.get_axes() for ln in ax.get_lines() if ln.get_gid() == fc.cfigure.REFUSED_GID]
                self.assertTrue(rings)
                self.assertEqual(fc.refused_at_a_value(fig), [])
                rings[0].set_transform(rings[0].axes.transData)  # as drawn before: at a value's height
                rings[0].set_ydata([100.0])
                self.assertEqual(len(fc.refused_at_a_value(fig)), 1)
            finally:
                fc.close_all(figs)


if __name__ == "__main__":
    unittest.main()
