"""figure_checks — what makes a figure unreadable, found from matplotlib's own artists (test_figure_lint).

draw_all(folder)            every figure the modules of scripts/figures/ draw from a results folder: [(name, fig)]
                            (coopbench.save_figure kept from writing and closing them)
alike_lines(fig)            groups of labelled lines drawn alike (same colour, marker, line style): in one axes, or
                            among the entries of one legend
overlapping_text(fig)       pairs of texts whose boxes intersect, or meet with less than TEXT_GAP pixels between
                            them: panel titles, the suptitle, the figure's texts, each axes' own texts
                            (annotations, a table's daggers), axis labels, and legends
reserved_markers(fig)       labelled series drawn with the failed point's marker (×)
refused_at_a_value(fig)     refused points (never run) drawn at a value's height instead of on the x axis
log_ticks_short(fig)        log axes whose labelled ticks leave data more than half a decade unlabelled
close_colours(colours)      pairs of series colours closer than MIN_DELTA_E (CIE76): coop's builds told apart
Each returns a list of readable strings, empty when the figure passes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPTS = HERE.parent.parent / "scripts"
sys.path.insert(0, str(SCRIPTS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

import coopbench  # noqa: E402
import coopbench.figure as cfigure  # noqa: E402

TEXT_GAP = 2.0  # pixels (at the figure's dpi) that two texts side by side keep between them at least
FAILED_MARKERS = ("x",)  # coopbench.figure: a failed point is an x in its series' colour


@contextlib.contextmanager
def kept_figures():
    kept = []
    real = (coopbench.save_figure, cfigure.save_figure)

    def keep(fig, outdir, name):
        for ax in fig.get_axes():  # what save_figure does to an axes before writing it
            cfigure.discrete_x(ax)
        kept.append((name, fig))
        return [Path(outdir) / f"{name}.png", Path(outdir) / f"{name}.svg"]

    coopbench.save_figure = cfigure.save_figure = keep
    try:
        yield kept
    finally:
        coopbench.save_figure, cfigure.save_figure = real


def draw_all(folder, outdir="/nonexistent-figure-checks") -> list:
    """draw_all — [(name, fig)] of every module of scripts/figures/ on the results folder (figures left open:
    close them with close_all)."""
    res = coopbench.load(Path(folder))
    out = []
    with kept_figures() as kept:
        for path in sorted((SCRIPTS / "figures").glob("*.py")):
            if path.name.startswith("_"):
                continue
            spec = importlib.util.spec_from_file_location(f"figure_checks_{path.stem}", path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            res.asked.clear()
            mod.make(res, outdir)
        out += kept
    return out


def close_all(figs) -> None:
    for _, f in figs:
        plt.close(f)


def _look(ln) -> tuple:
    face = ln.get_markerfacecolor()
    hollow = isinstance(face, str) and face == "none"
    return (to_hex(ln.get_color()), str(ln.get_marker()), str(ln.get_linestyle()), hollow)


def alike_lines(fig) -> list:
    problems = []
    for ax in fig.get_axes():
        same = defaultdict(list)
        for ln in ax.get_lines():
            lab = ln.get_label()
            if lab.startswith("_"):
                continue
            same[_look(ln)].append(lab)
        for look, labels in same.items():
            if len(set(labels)) > 1:
                problems.append(f"panel '{ax.get_title()}': {sorted(set(labels))} drawn alike {look[:3]}")
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.get_axes() if ax.get_legend() is not None]
    for leg in legends:
        same = defaultdict(list)
        for h, t in zip(leg.legend_handles if hasattr(leg, "legend_handles") else leg.legendHandles, leg.get_texts()):
            if isinstance(h, Line2D):
                same[_look(h)].append(t.get_text())
        for look, labels in same.items():
            if len(set(labels)) > 1:
                problems.append(f"legend: {sorted(set(labels))} drawn alike {look[:3]}")
    return problems


def _texts(fig):
    """(description, Text) of the texts a reader reads as words: titles, suptitle, figure texts, axes texts."""
    out = []
    if getattr(fig, "_suptitle", None) is not None and fig._suptitle.get_text():
        out.append(("suptitle", fig._suptitle))
    for t in fig.texts:
        if t is getattr(fig, "_suptitle", None):
            continue
        if t.get_text().strip() and t.get_visible():
            out.append(("figure text", t))
    for ax in fig.get_axes():
        if not ax.get_visible():
            continue
        for t in (ax.title, ax._left_title, ax._right_title):
            if t.get_text().strip():
                out.append((f"title of '{ax.get_title()}'", t))
        for t in ax.texts:
            if t.get_text().strip() and t.get_visible():
                out.append((f"text in '{ax.get_title()}'", t))
        for t in (ax.xaxis.label, ax.yaxis.label):
            if t.get_text().strip() and t.get_visible():
                out.append((f"axis label of '{ax.get_title()}'", t))
    return out


def overlapping_text(fig) -> list:
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    boxes = [(f"{d} {t.get_text()[:40]!r}", t.get_window_extent(r)) for d, t in _texts(fig)]
    for leg in list(fig.legends) + [ax.get_legend() for ax in fig.get_axes() if ax.get_legend() is not None]:
        boxes.append(("legend", leg.get_window_extent(r)))
    problems = []
    for i, (a, ba) in enumerate(boxes):
        for b, bb in boxes[i + 1:]:
            if a == "legend" and b == "legend":
                continue
            # w, h: how far the boxes overlap across and up (negative: the gap between them). Inside each other's
            # box by more than a pixel overprints; side by side (or one above the other) with less than TEXT_GAP
            # pixels between them, two texts read as one run-on line (c6ab733's micro_channel titles met edge to
            # edge: "... · other backendscapacity C=1 ...").
            w = min(ba.x1, bb.x1) - max(ba.x0, bb.x0)
            h = min(ba.y1, bb.y1) - max(ba.y0, bb.y0)
            if w > 1 and h > 1:
                problems.append(f"{a} overlaps {b}")
            elif (h > 1 and w > -TEXT_GAP) or (w > 1 and h > -TEXT_GAP):
                gap = max(0.0, -w if h > 1 else -h)
                problems.append(f"{a} touches {b} ({gap:.1f} px apart)")
    return problems


def reserved_markers(fig) -> list:
    problems = []
    for ax in fig.get_axes():
        for ln in ax.get_lines():
            if not ln.get_label().startswith("_") and str(ln.get_marker()) in FAILED_MARKERS:
                problems.append(f"panel '{ax.get_title()}': series {ln.get_label()!r} uses the failed marker "
                                f"{ln.get_marker()!r}")
    return problems


def refused_at_a_value(fig) -> list:
    """Refused points (coopbench.figure.REFUSED_GID: never run) drawn anywhere but on the x axis itself: at a
    value's height a ring reads as a measurement."""
    problems = []
    for ax in fig.get_axes():
        for ln in ax.get_lines():
            if ln.get_gid() != cfigure.REFUSED_GID:
                continue
            on_axis = ln.get_transform() == ax.get_xaxis_transform() and all(float(y) == 0.0 for y in ln.get_ydata())
            if not on_axis:
                problems.append(f"panel '{ax.get_title()}': a refused point at y={list(ln.get_ydata())}, a value's height")
    return problems


def log_ticks_short(fig) -> list:
    fig.canvas.draw()
    problems = []
    for ax in fig.get_axes():
        if not ax.get_visible() or ax.get_yscale() != "log":
            continue
        ys = [float(y) for ln in ax.get_lines() if not ln.get_label().startswith("_")
              for y in ln.get_ydata() if isinstance(y, (int, float)) and y == y and y > 0]
        if not ys:
            continue
        lo, hi = ax.get_ylim()
        labelled = [t.get_loc() for t in ax.yaxis.get_major_ticks()
                    if t.label1.get_text().strip() and lo * 0.999 <= t.get_loc() <= hi * 1.001]
        if len(labelled) < 2:
            problems.append(f"panel '{ax.get_title()}': log y axis with {len(labelled)} labelled tick(s)")
            continue
        if min(labelled) > min(ys) * math.sqrt(10) or max(labelled) < max(ys) / math.sqrt(10):
            problems.append(f"panel '{ax.get_title()}': log y ticks {min(labelled):g}..{max(labelled):g} leave the "
                            f"data {min(ys):.3g}..{max(ys):.3g} unlabelled")
    return problems


MIN_DELTA_E = 25.0  # CIE76 distance two series' colours keep at least (2.3 is a just-noticeable difference on
# patches; thin lines and small markers need far more: the rose and reddish purple once given to two coop builds,
# 21 apart, read as one line in the first-user review's Fig. 7)


def _lab(colour) -> tuple:
    """CIE L*a*b* (D65) of a matplotlib colour, from sRGB (IEC 61966-2-1)."""
    from matplotlib.colors import to_rgb
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in to_rgb(colour)]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e(a, b) -> float:
    return math.dist(_lab(a), _lab(b))


def close_colours(colours: dict, least: float = MIN_DELTA_E) -> list:
    """close_colours — pairs of {name: colour} closer than `least` (CIE76 ΔE): series a reader cannot tell apart
    by colour."""
    names = sorted(colours)
    return [f"{a} {colours[a]} and {b} {colours[b]}: ΔE {delta_e(colours[a], colours[b]):.1f} < {least:g}"
            for i, a in enumerate(names) for b in names[i + 1:] if delta_e(colours[a], colours[b]) < least]


CHECKS = {"alike lines": alike_lines, "overlapping text": overlapping_text, "failed marker reused": reserved_markers,
          "log ticks": log_ticks_short, "refused at a value": refused_at_a_value}


def check_all(figs) -> dict:
    """check_all — {figure name: [problem, ...]} over CHECKS, for the figures that have a problem."""
    out = {}
    for name, fig in figs:
        probs = [f"{k}: {p}" for k, f in CHECKS.items() for p in f(fig)]
        if probs:
            out[name] = probs
    return out


if __name__ == "__main__":  # figure_checks.py FOLDER...: the problems of every figure of each folder
    bad = 0
    for folder in sys.argv[1:]:
        figs = draw_all(folder)
        found = check_all(figs)
        for name, _ in figs:
            print(f"{folder}: {name}: {len(found.get(name, []))} problem(s)")
            for p in found.get(name, [])[:6]:
                print("   ", p)
        bad += len(found)
        close_all(figs)
    sys.exit(1 if bad else 0)
