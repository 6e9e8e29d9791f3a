"""test_display — figures a person reads at a glance, and a log without pandas warnings.

  * an axis with one whole-number x value (P=2, T=2) has one tick, "2", not 1.900 … 2.100;
  * quirk_ddb's Fig. 9 tick labels do not overprint, whatever the number of backends, and Fig. 7's bar
    groups are centred on their labels;
  * a backend the palette does not know gets a colour readable on white, distinct from the others';
  * `channel` and `share` get figures of their own (each backend's channel named; progress ratio and
    wake-up latency), not the generic one;
  * loading and plotting a folder whose rows carry hundreds of counters raises no PerformanceWarning.
Run: /usr/bin/python3 -m unittest -v test_display (in tests/scripts).
"""

import csv
import json
import sys
import unittest
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent.parent / "scripts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SCRIPTS))

import synthetic  # noqa: E402
from synthetic import run  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import coopbench as cr  # noqa: E402
from coopbench import style  # noqa: E402

KNOWN = ["pthreads", "stdthread", "native", "native-ws", "native-parasail", "native-implicit", "native-clang", "go",
         "tokio", "boostfiber/round_robin", "boostfiber/shared_work", "boostfiber/work_stealing"]


def rewrite(folder, change):
    path = Path(folder) / "results.csv"
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        fields, rows = r.fieldnames, list(r)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(change(row) for row in rows)


def load_module(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"test_display_{name}", SCRIPTS / "figures" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class CaptureFigures:
    """Within the block, coopbench.save_figure also keeps each figure it saves (in .figs)."""

    def __enter__(self):
        self.figs, self.orig = [], cr.save_figure

        def keep(fig, outdir, name):
            self.figs.append(fig)
            return self.orig(fig, outdir, name)

        cr.save_figure = keep
        return self

    def __exit__(self, *exc):
        cr.save_figure = self.orig


def overlapping(labels, renderer):
    """The pairs of non-empty tick labels that overprint: level labels whose boxes overlap; slanted (parallel)
    labels whose baselines, one tick apart, are closer than a line of text (their upright boxes always overlap)."""
    import math

    labels = [t for t in labels if t.get_text()]
    if labels and labels[0].get_rotation() % 180:
        out = []
        for a, b in zip(labels, labels[1:]):
            ax_, bx_ = (renderer_x(t, renderer) for t in (a, b))
            gap = abs(bx_ - ax_) * abs(math.sin(math.radians(a.get_rotation())))
            if gap < renderer.points_to_pixels(a.get_fontsize()):
                out.append((a.get_text(), b.get_text()))
        return out
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in labels]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def renderer_x(text, renderer):
    """The x of a tick label's anchor, in pixels."""
    return text.get_transform().transform(text.get_position())[0]


class AxesTest(synthetic.TempDirCase):
    def test_one_x_value_gets_one_whole_tick(self):
        fig, ax = plt.subplots()
        ax.plot([2], [5.0], marker="o")
        cr.save_figure(fig, self.tmp, "one")
        fig.canvas.draw()
        self.assertEqual(list(ax.get_xticks()), [2.0])
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["2"])

    def test_one_x_value_on_a_log_axis_gets_one_tick(self):
        fig, ax = plt.subplots()
        ax.plot([2], [5.0], marker="o")
        ax.set_xscale("log")
        cr.save_figure(fig, self.tmp, "one-log")
        fig.canvas.draw()
        self.assertEqual(list(ax.get_xticks()), [2.0])
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["2"])

    def test_a_few_counts_get_their_own_ticks(self):
        fig, ax = plt.subplots()
        ax.plot([1, 2, 4], [5.0, 4.0, 3.0])
        cr.save_figure(fig, self.tmp, "few")
        self.assertEqual(list(ax.get_xticks()), [1.0, 2.0, 4.0])

    def test_figures_own_ticks_are_left_alone(self):
        fig, ax = plt.subplots()
        ax.plot([0.5, 1.5], [1.0, 2.0])  # not whole numbers
        ax2 = fig.add_axes([0.6, 0.6, 0.2, 0.2])
        ax2.bar(["a", "b"], [1, 2])
        before = list(ax.get_xticks())
        cr.save_figure(fig, self.tmp, "own")
        self.assertEqual(list(ax.get_xticks()), before)
        self.assertEqual([t.get_text() for t in ax2.get_xticklabels()], ["a", "b"])


class PaletteTest(unittest.TestCase):
    def test_unknown_backends_are_readable_and_distinct(self):
        extra = ["nodejs"] + [f"ext{i}" for i in range(10)]
        colors = style.backend_colors(KNOWN + extra)
        self.assertEqual(len(set(colors.values())), len(colors))
        for b in extra:
            self.assertGreaterEqual(style.contrast_on_white(colors[b]), style.MIN_CONTRAST, (b, colors[b]))
            self.assertNotIn(colors[b].upper(), ("#DDDDDD", "#F0E442"))

    def test_known_backends_keep_their_colours(self):
        colors = style.backend_colors(KNOWN + ["nodejs"])
        self.assertEqual(colors["native"], "#D55E00")
        self.assertEqual(colors["go"], "#56B4E9")


def ddb_folder(folder, backends):
    """A ddb folder: 4 server units and the clients, counters per unit and processor, P=1 and 2."""
    cells = {(b, "ddb", (("rounds", 100),), p): 10.0 * (i + 1) / p for i, b in enumerate(backends) for p in (1, 2)}
    d = synthetic.write_cells(folder, ("rounds",), cells)

    def counters(row):
        p = int(row["processors"])
        c = {f"ops_p{i}": 1000.0 / p for i in range(p)}
        c.update({f"migrations_s{i}": 10.0 * i for i in range(4)})
        c.update(migrations_clients=40.0, migrations_per_1e6=12.0, hot_migrations_per_1e6=3.0, utilisation=0.9,
                 cpu_util=0.8, ns_per_operation=100.0)
        row["counters"] = json.dumps(c)
        return row

    rewrite(d, counters)
    return d


class DdbTest(synthetic.TempDirCase):
    def test_fig9_labels_do_not_overprint(self):
        d = ddb_folder(self.tmp / "r", ["native", "native-ws", "native-parasail", "go", "pthreads"])
        mod = load_module("quirk_ddb")
        with CaptureFigures() as cap:
            items = mod.make(cr.load(d), self.tmp / "figs")
        self.assertTrue(items)
        fig = cap.figs[0]
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax9 = next(a for a in fig.get_axes() if a.get_title().startswith("Fig. 9"))
        labels = ax9.get_xticklabels()
        self.assertEqual([t.get_text() for t in labels], ["s0", "s1", "s2", "s3", "clients"])
        self.assertEqual(overlapping(labels, renderer), [])
        ax7 = next(a for a in fig.get_axes() if a.get_title().startswith("Fig. 7"))
        self.assertEqual(len(ax7.get_xticklabels()), 10)  # 5 backends x P=1, 2
        self.assertEqual(overlapping(ax7.get_xticklabels(), renderer), [])
        # Fig. 7's bars sit on their labels: each group of bars (one per processor) is centred on its tick.
        bars = sorted(((r.get_x(), r.get_x() + r.get_width()) for r in ax7.patches), key=lambda b: b[0])
        for tick in ax7.get_xticks():
            group = [b for b in bars if tick - 0.5 < (b[0] + b[1]) / 2 < tick + 0.5]
            self.assertTrue(group, f"no bar near the tick at {tick}")
            self.assertAlmostEqual((min(b[0] for b in group) + max(b[1] for b in group)) / 2, tick, places=6)
        # Each backend named once, in the figure's legend (not in every tick label, nor once per line style).
        self.assertEqual(sorted(t.get_text() for leg in fig.legends for t in leg.get_texts()),
                         sorted(["native", "native-ws", "native-parasail", "go", "pthreads"]))


def channel_folder(folder):
    cells = {(b, "channel", (("C", c), ("K", 2000), ("T", t)), 2): base * (1 + c) * t ** 0.2
             for b, base in (("native", 0.2), ("go", 0.3), ("pthreads", 5.0)) for c in (0, 1) for t in (1, 10, 100)}
    cells[("tokio", "switch", (("T", 1),), 2)] = 0.1  # tokio ran, but has no channel row
    d = synthetic.write_cells(folder, ("C", "K", "T"), cells)
    ctx = json.loads((d / "context.json").read_text())
    ctx.update({"backend.native.channel": "coop::Channel (bounded ring)", "backend.go.channel": "Go's chan",
                "backend.pthreads.channel": "generic (mutex, condition variables)"})
    (d / "context.json").write_text(json.dumps(ctx))
    rewrite(d, lambda row: dict(row, unit="ns/hand-off") if row["workload"] == "channel" else row)
    return d


def share_folder(folder, ts=(2, 4)):
    cells = {(b, "share", (("R", 100), ("T", t), ("U", 1000), ("W", 20000)), p): 50.0 * t / p
             for b in ("native", "pthreads") for t in ts for p in (1, 2)}
    d = synthetic.write_cells(folder, ("R", "T", "U", "W"), cells)

    def counters(row):
        coop = row["backend"] == "native"
        row["counters"] = json.dumps({"progress_ratio": 20000.0 if coop else 1.1,
                                      "progress_min_share": 0.0 if coop else 0.9,
                                      "wake_p50_us": 5000.0 if coop else 40.0, "wake_max_us": 9000.0 if coop else 90.0})
        return row

    rewrite(d, counters)
    return d


class WorkloadFiguresTest(synthetic.TempDirCase):
    def test_channel_names_each_backends_channel_and_the_missing(self):
        d = channel_folder(self.tmp / "r")
        mod = load_module("micro_channel")
        with CaptureFigures() as cap:
            items = mod.make(cr.load(d), self.tmp / "figs")
        self.assertEqual(len(items), 1)
        legend = [t.get_text() for leg in cap.figs[0].legends for t in leg.get_texts()]
        self.assertIn("native — coop::Channel (bounded ring)", legend)
        self.assertIn("go — Go's chan", legend)
        titles = [a.get_title() for a in cap.figs[0].get_axes() if a.get_visible()]
        self.assertTrue(any("C=0" in t and "unbuffered" in t for t in titles), titles)
        self.assertTrue(any("C=1" in t for t in titles), titles)
        self.assertIn("`tokio`", items[0]["text"])

    def test_share_draws_progress_ratio_and_wake_up_latency(self):
        d = share_folder(self.tmp / "r")
        mod = load_module("micro_share")
        with CaptureFigures() as cap:
            items = mod.make(cr.load(d), self.tmp / "figs")
        self.assertEqual(len(items), 1)
        axes = [a for a in cap.figs[0].get_axes() if a.get_visible()]
        ylabels = " ".join(a.get_ylabel() for a in axes)
        self.assertIn("max / min progress", ylabels)
        self.assertIn("wake-up latency", ylabels)
        ratio_ax = next(a for a in axes if "progress" in a.get_ylabel())
        ys = sorted(y for ln in ratio_ax.get_lines() for y in ln.get_ydata())
        self.assertAlmostEqual(ys[0], 1.1)
        self.assertAlmostEqual(ys[-1], 20000.0)

    def test_share_with_one_t_is_drawn_against_p(self):  # the quick plan: T=4 alone, P=1 and 2
        d = share_folder(self.tmp / "r", ts=(4,))
        mod = load_module("micro_share")
        with CaptureFigures() as cap:
            items = mod.make(cr.load(d), self.tmp / "figs")
        self.assertEqual(len(items), 1)
        ax = next(a for a in cap.figs[0].get_axes() if a.get_visible())
        self.assertEqual(ax.get_xlabel(), "processors (P)")
        self.assertEqual(list(ax.get_xticks()), [1.0, 2.0])
        self.assertEqual(len([ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]), 2)  # a backend each

    def test_plot_gives_them_no_generic_figure(self):
        d = channel_folder(self.tmp / "c")
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        md = (d / "report.md").read_text()
        self.assertIn("channel — hand-off time", md)
        self.assertNotIn("channel — a generic figure", md)


class OwnerAccessTest(synthetic.TempDirCase):
    def test_shares_and_w_read_as_numbers(self):
        cells = {("pthreads", "owner-access", (("W", 1), ("guard", g), ("share_permille", sp)), 2): 1.0
                 for g in ("owner-guard", "tas-backoff") for sp in (900, 990)}
        d = synthetic.write_cells(self.tmp / "r", ("W", "guard", "share_permille"), cells)

        def counters(row):
            row["counters"] = json.dumps({"owner_ns": 5.0 + int(row["param.share_permille"]) / 100,
                                          "nonowner_ns": 300.0, "owner_slow_pct": 1.0})
            return row

        rewrite(d, counters)
        with CaptureFigures() as cap:
            load_module("owner_access").make(cr.load(d), self.tmp / "figs")
        fig = cap.figs[0]
        fig.canvas.draw()
        ax = fig.get_axes()[0]
        self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["90", "99"])
        self.assertIn("W=1 non-owners", ax.get_title())
        self.assertIn("P=2,", ax.get_title())
        self.assertFalse([t.get_text() for t in ax.get_yticklabels() if "times" in t.get_text() or "^" in
                          t.get_text()])


class NoPandasWarningsTest(synthetic.TempDirCase):
    def folder(self):
        d = synthetic.make_results(self.tmp / "r", workloads=("switch", "mystery"))

        def many_counters(row):  # 180 counters over the rows, 30 per row (ddb: one per processor and unit)
            i = int(row["repetition"]) + 3 * int(row["processors"])
            row["counters"] = json.dumps({f"c{k}": float(k) for k in range(i * 20, i * 20 + 30)})
            return row

        rewrite(d, many_counters)
        return d

    def test_load_raises_no_performance_warning(self):
        d = self.folder()
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.PerformanceWarning)
            res = cr.load(d)
        self.assertGreater(sum(c.startswith("counter.") for c in res.df.columns), 100)

    def test_plot_logs_no_performance_warning(self):
        d = self.folder()
        p = run("plot.py", d)  # pandas prints each PerformanceWarning on stderr (the run log)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        self.assertNotIn("PerformanceWarning", p.stderr)

if __name__ == "__main__":
    unittest.main()
