"""coopbench.figure — drawing helpers shared by the figure modules (scripts/figures/).

save_figure writes PNG and SVG reproducibly; plot_lines draws a workload's points in the
paper's style (Fig. 7-9): one line per series (series_labels), the median of the timed
iterations with its interval as a band (coopbench.stats: the order-statistic confidence interval
of the median over forks, its exact coverage in the caption; with 1 fork the band is the
variation within one process only), optionally a
cold line (iteration 0 of each fork) beside the warm one, failed points as ×;
figure_note and add_caption put the method and the machine under a figure.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the Agg backend)
import pandas as pd  # noqa: E402

from .stats import LEVEL, ONE_FORK, coverage, coverage_pct, is_cold_only, summarize  # noqa: E402
from .style import backend_style, caption, compact_number  # noqa: E402


def save_figure(fig, outdir, name: str) -> list:
    """save_figure — write `name`.png and `name`.svg into outdir (created), close fig, return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for ax in fig.get_axes():
        discrete_x(ax)
    paths = []
    # Reproducible files: fixed SVG ids, no date in the metadata, so a re-plot of the same data diffs clean.
    with plt.rc_context({"svg.hashsalt": "coopbench"}):
        for ext in ("png", "svg"):
            p = out / f"{name}.{ext}"
            meta = {"Date": None} if ext == "svg" else {}
            fig.savefig(p, dpi=150 if ext == "png" else None, bbox_inches="tight", metadata=meta)
            paths.append(p)
    plt.close(fig)
    return paths




def tight_layout(fig) -> None:
    """tight_layout — fig.tight_layout(), then the panels lowered until the suptitle clears every panel's title.

    matplotlib's tight_layout leaves room for the suptitle from one row's titles, and a panel title wrapped to
    two lines (line_figure wraps a long one to its panel's width) rose into the suptitle: micro_channel's
    "capacity C=0 (unbuffered: a rendezvous) · P=1 · coop (native*)" printed over "channel — one hand-off ...".
    Measured after drawing, so the fix holds for whatever the titles hold.
    """
    fig.tight_layout()
    sup = getattr(fig, "_suptitle", None)
    if sup is None or not sup.get_text():
        return
    height = fig.get_figheight() * fig.dpi
    for _ in range(4):  # each pass lowers the top; the titles' heights do not change, so two passes settle it
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        floor = sup.get_window_extent(r).y0
        tops = [ax.get_tightbbox(r).y1 for ax in fig.get_axes() if ax.get_visible()]
        if not tops or max(tops) <= floor - 2:
            return
        fig.subplots_adjust(top=fig.subplotpars.top - (max(tops) - floor + 4) / height)


def discrete_x(ax, max_values: int = 12) -> None:
    """discrete_x — on an x axis (linear or log) left to matplotlib's default ticks, whose lines take a few
    whole-number x values (P, T, C: counts), put the ticks at those values and nowhere else: one value gets one tick ("2", not
    1.900 … 2.100), a few get theirs without fractional ones between them. save_figure calls it on every axes;
    an axis whose ticks a figure set itself (bars, categories, FixedLocator) is left as it is."""
    from matplotlib.ticker import AutoLocator, FixedLocator, FuncFormatter, LogLocator, NullFormatter

    scale = ax.get_xscale()
    default = AutoLocator if scale == "linear" else LogLocator if scale == "log" else None
    if default is None or type(ax.xaxis.get_major_locator()) is not default:
        return
    xs = set()
    for ln in ax.get_lines():
        for v in ln.get_xdata():
            try:
                v = float(v)
            except (TypeError, ValueError):
                return  # dates or categories: not ours to change
            if v == v:
                xs.add(v)
    if not xs or len(xs) > max_values or any(v != round(v) for v in xs):
        return
    ax.xaxis.set_major_locator(FixedLocator(sorted(xs)))
    ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    ax.xaxis.set_minor_formatter(NullFormatter())
    if len(xs) == 1:
        v = next(iter(xs))
        ax.set_xlim(*((v - 1, v + 1) if scale == "linear" else (v / 2, v * 2)))


_P_LINESTYLES = ["-", "--", ":", "-."]
_HOST_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def series_labels(df: pd.DataFrame, x: str) -> list:
    """series_labels — the columns that split a workload's rows into lines, besides x.

    Always `backend`; `processors` when more than one P is present; `host` when the rows
    come from more than one host (a merged sweep, coopbench merge); and every other
    `param.*` column that takes more than one value in df (e.g. K), so that no line
    mixes points with different parameters.
    """
    cols = ["backend"]
    if df["processors"].nunique(dropna=True) > 1:
        cols.append("processors")
    if "host" in df.columns and df["host"][df["host"] != ""].nunique() > 1:
        cols.append("host")  # a merged sweep from several hosts: never one line across machines
    for c in sorted(c for c in df.columns if c.startswith("param.") and c != x):
        vals = df[c]
        vals = vals[vals.notna() & (vals.astype(str) != "")]
        if vals.nunique() > 1:
            cols.append(c)
    return cols


def _series_name(cols, key) -> str:
    parts = []
    for c, v in zip(cols, key):
        if c == "backend":
            parts.append(str(v))
        elif c == "processors":
            parts.append(f"P={compact_number(v)}")
        elif c == "host":
            parts.append(f"@{v}")
        else:
            parts.append(f"{c[len('param.'):]}={compact_number(v) if isinstance(v, (int, float)) else v}")
    return " ".join(parts)


def plot_lines(ax, df: pd.DataFrame, x: str, *, xlabel: str, ylabel: str, yscale: str = "auto", title: str = "",
               legend: bool = True, cold: bool = False, which: str = "warm", xscale: str = "log"):
    """plot_lines — draw one workload's points on ax: one line per series (see series_labels).

    Each line is the median of the timed iterations of all forks (which="warm", coopbench.stats),
    or of the forks' iteration 0 (which="cold"), with its interval as a band (over forks, its coverage in the note;
    a point of 1 fork: the variation within its one process, figure_note says which).
    Every backend has its own colour (style.backend_colors over the backends of df and of the
    run). cold=True (kept for callers drawing one panel) also draws, when the folder has warm
    iterations, a cold line per series beside the warm one (hollow markers, dotted); figures
    with many lines draw cold in panels of their own instead (line_figure). A point with no ok
    value is drawn as an 'x' in the series' colour at the height of the series' nearest ok
    median (or in the middle of the axis when the series has none); an axis with no ok value
    at all shows no numbers. xscale "log" (the default: sizes spanning decades; a point whose x is
    not positive cannot be drawn there and is left to report.md's tables), "linear", or "auto"
    (log unless some x is 0 or negative, e.g. a channel's capacity C=0); yscale "log", "linear" or "auto" (log when
    the medians span a factor of 10 or more). The y axis ends at a labelled tick at or above the
    top median. legend: a legend below the axes (False: leave it to the caller, e.g. one legend
    for several panels via legend_entries). Returns the number of failed points.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator

    d = df.copy()
    d[x] = pd.to_numeric(d[x], errors="coerce")
    if xscale == "auto":
        xscale = "log" if bool((d[x].dropna() > 0).all()) else "linear"
    if xscale == "log":
        d = d[d[x] > 0]  # log x: a non-positive x cannot be drawn (it still appears in report.md's tables)
    else:
        d = d[d[x].notna()]
    cols = series_labels(d, x)
    procs = sorted(d["processors"].dropna().unique())
    hosts = sorted(d["host"].unique()) if "host" in cols else []
    backends = sorted(d["backend"].unique())
    pending_failed = []  # (x, series key, style) — placed once the y range is known
    all_medians = []
    bands = []  # (x, y) corners of the interval bands, so that the axis limits include them
    has_warm = which == "warm" and bool((d["iteration"] > 0).any())
    both = cold and has_warm  # a cold line only where warm differs
    # Lines of one backend that differ by another parameter (K, T, ...) share its colour: they
    # get a line style of their own (a marker of their own when P already takes the styles).
    extra = [i for i, c in enumerate(cols) if c.startswith("param.")]
    extras = sorted({tuple(str(k[i]) for i in extra) for k in d.groupby(cols, sort=True).groups}) if extra else []
    for key, g in d.groupby(cols if len(cols) > 1 else cols[0], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        style = backend_style(key[0], backends)
        if extra:
            e = extras.index(tuple(str(key[i]) for i in extra))
            if "processors" in cols:
                style["marker"] = _HOST_MARKERS[(_HOST_MARKERS.index(style["marker"]) + e) % len(_HOST_MARKERS)
                                                if style.get("marker") in _HOST_MARKERS else e % len(_HOST_MARKERS)]
            else:
                style["linestyle"] = _P_LINESTYLES[e % len(_P_LINESTYLES)]
        if "processors" in cols:
            p = key[cols.index("processors")]
            style["linestyle"] = _P_LINESTYLES[procs.index(p) % len(_P_LINESTYLES)]
        if "host" in cols:  # the backend's colour, a marker per host
            style["marker"] = _HOST_MARKERS[hosts.index(key[cols.index("host")]) % len(_HOST_MARKERS)]
        s = summarize(g, x, which).sort_values(x)
        # A point that ran only iteration 0 per fork is cold: never on a warm line where the folder has warm
        # iterations (it is on the cold line when one is drawn; figure_note counts it).
        ok = s[(s["n_ok"] > 0) & ~(s["cold_only"].astype(bool) & has_warm)]
        name = _series_name(cols, key)
        _draw_series(ax, x, ok, name + (" warm" if both else ""), style, bands, all_medians)
        if both:
            c = summarize(g, x, "cold").sort_values(x)
            cstyle = dict(style, linestyle=":", markerfacecolor="none")
            _draw_series(ax, x, c[c["n_ok"] > 0], name + " cold", cstyle, bands, all_medians, thin=True)
        for xv in s[s["n_ok"] == 0][x]:
            pending_failed.append((xv, ok, style, _refused(g, x, xv)))
    siblings = [a for a in ax.get_shared_y_axes().get_siblings(ax) if a is not ax]
    sibling_medians = [y for a in siblings for ln in a.get_lines() if not ln.get_label().startswith("_")
                       for y in ln.get_ydata()]
    if yscale == "auto":
        pos = [m for m in all_medians + sibling_medians if m > 0]
        yscale = "log" if pos and max(pos) / min(pos) >= 10 else "linear"
    ax.set_xscale(xscale)
    ax.set_yscale(yscale)
    no_values = not all_medians and not sibling_medians
    if no_values:
        # Nothing but failed points: an axis without numbers (any would be made up), the × in its middle.
        ax.set_yscale("linear")
        ax.set_ylim(0.0, 1.0)
        ax.yaxis.set_major_locator(NullLocator())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.text(0.5, 0.62, "no ok value", transform=ax.transAxes, ha="center", fontsize=8, color="#666666")
    elif all_medians:
        ax.relim()
        if bands:
            ax.update_datalim(bands)
        # A panel sharing its y axis may have fixed the limits (_top_at_a_tick): scale again over all of them.
        ax.set_autoscaley_on(True)
        ax.autoscale_view()
    lo, hi = ax.get_ylim()
    for xv, ok, style, refused in pending_failed:
        if len(ok):
            before = ok[ok[x] <= xv]
            yv = before["median"].iloc[-1] if len(before) else ok["median"].iloc[0]
        elif no_values:
            yv = 0.5
        else:
            yv = (lo * (hi / lo) ** 0.08) if yscale == "log" and lo > 0 else lo + 0.08 * (hi - lo)
        if refused:
            # Never run (a system limit known before the run): a hollow ring on the x axis itself, below every value
            # (at a value's height it read as one), not a failure's x.
            ax.plot([xv], [0.0], linestyle="none", marker="o", markersize=9, markeredgewidth=1.8,
                    markerfacecolor="none", color=style["color"], gid=REFUSED_GID, clip_on=False,
                    transform=ax.get_xaxis_transform())
        else:
            ax.plot([xv], [yv], linestyle="none", marker="x", markersize=10, markeredgewidth=2.2,
                    color=style["color"])
    xs = sorted(d[x].unique())
    if 0 < len(xs) <= 12:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    if yscale == "log" and not no_values:
        lo, hi = ax.get_ylim()
        if lo > 0 and hi / lo < 300:
            # Under ~2.5 decades the powers of 10 alone leave the axis nearly unlabelled: label 1, 2, 5 x 10^k.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(compact_number))
    if not no_values:
        _top_at_a_tick(ax, all_medians + sibling_medians)
    if yscale == "log" and not no_values:
        label_log_bottom(ax, [m for m in all_medians + sibling_medians if m > 0])
    ax.set_xlabel(xlabel + (" (log)" if xscale == "log" else ""))
    ax.set_ylabel(ylabel + (" (log)" if yscale == "log" and not no_values else ""))
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    n_failed = sum(1 for p in pending_failed if not p[3])
    if legend:
        handles, labels = legend_entries([ax], failed=bool(n_failed))
        if handles:
            ax.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.16),
                      ncol=_legend_columns(labels))
    return n_failed


# The gid of a refused point's marker (legend_entries finds them by it).
REFUSED_GID = "coopbench-refused"


def _refused(g: pd.DataFrame, x: str, xv) -> bool:
    """Whether the series' point at x == xv was refused (every row status `refused`: never run), not failed."""
    st = g[pd.to_numeric(g[x], errors="coerce") == xv]["status"]
    return bool(len(st)) and bool((st == "refused").all())


def _top_at_a_tick(ax, medians) -> None:
    """Raise the top of the y axis to the first major tick at or above the highest median, so it is labelled."""
    top = max((m for m in medians if m == m), default=None)
    if top is None:
        return
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.yaxis.get_major_locator().tick_values(lo, max(hi, top)) if t >= top * (1 - 1e-9)]
    inside = [t for t in ticks if t <= hi]
    if not inside and ticks:
        ax.set_ylim(lo, min(ticks))


def label_log_bottom(ax, medians) -> None:
    """label_log_bottom — on a log y axis, a labelled tick at most half a decade above the lowest median: lower the axis to the
    power of ten (or 2 or 5 times one) just under it, so the lowest values are read against a number."""
    if not medians:
        return
    from matplotlib.ticker import LogLocator, NullFormatter

    low = min(medians)
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.yaxis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi]
    if ticks and min(ticks) <= low * 10 ** 0.5:
        return
    if hi / max(lo, 1e-300) < 3000:  # up to ~3.5 decades: label 1, 2 and 5 of each
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(NullFormatter())
        ticks = [t for t in ax.yaxis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi]
        if ticks and min(ticks) <= low * 10 ** 0.5:
            return
    step = [m * 10 ** k for k in range(-12, 13) for m in (1, 2, 5)]
    ax.set_ylim(max(t for t in step if t <= low), hi)
    # A locator of decades alone (more than ~3.5 decades) has no tick at 2 or 5: then the power of ten under the
    # lowest median (quick's micro_share: data from 3.15 on an axis from 2, labelled from 10 only).
    lo, hi = ax.get_ylim()
    ticks = [t for t in ax.yaxis.get_major_locator().tick_values(lo, hi) if lo <= t <= hi]
    if not ticks or min(ticks) > low * 10 ** 0.5:
        ax.set_ylim(10 ** math.floor(math.log10(low)), hi)


def _legend_columns(labels) -> int:
    """Columns of a legend below the axes: as many as fit in about 7 inches of 8-point text."""
    longest = max((len(str(lab)) for lab in labels), default=10)
    return max(1, min(len(labels), int(95 // (longest + 6))))


def backend_group(backend: str) -> str:
    """backend_group — the panel a backend goes to when a figure is split: "native" for every coop build, else its family."""
    family = str(backend).split("/")[0]
    return "native" if family.startswith("native") else family


def split_series(df: pd.DataFrame, x: str, max_lines: int = 8) -> list:
    """split_series — [(label, rows)] so that no part holds more than max_lines lines (small multiples).

    One part when the lines fit; else a part per processor count P (when several), and a part
    that still has too many lines is cut between backend groups (backend_group: the coop builds
    together, then each other family), into as few parts as it takes, of about equal size.
    """
    cols = series_labels(df, x)

    def count(d):
        return d.groupby(cols).ngroups if len(d) else 0

    if count(df) <= max_lines:
        return [("", df)]
    parts = ([(f"P={compact_number(p)}", df[df["processors"] == p]) for p in sorted(df["processors"].unique())]
             if df["processors"].nunique() > 1 else [("", df)])
    if all(count(d) <= max_lines for _, d in parts):
        return parts
    # One cut between backends for every P, so that a backend stays in the same panel at every P (cut apart at one
    # P and not at another, Boost.Fiber moved from coop's panel to the others'): each backend counts its most lines
    # at any P.
    subs = [(label, d, series_labels(d, x)) for label, d in parts]
    per_backend = {}
    for _, d, sub in subs:
        for b, g in d.groupby("backend", sort=True):
            per_backend[b] = max(per_backend.get(b, 0), g.groupby(sub).ngroups)
    lines_of = max(count(d) for _, d in parts)
    k = -(-lines_of // max_lines)
    target = -(-lines_of // k)
    groups = sorted({backend_group(b) for b in per_backend}, key=lambda g: (g != "native", g))
    chunks, cur, cur_n = [], [], 0
    for grp in groups:
        for b in sorted(b for b in per_backend if backend_group(b) == grp):
            nb = per_backend[b]
            starts_group = not cur or backend_group(cur[-1]) != grp
            if cur and (cur_n + nb > max_lines or (starts_group and cur_n + nb > target)):
                chunks.append(cur)
                cur, cur_n = [], 0
            cur.append(b)
            cur_n += nb
    if cur:
        chunks.append(cur)
    out = []
    for label, d, _ in subs:
        for bs in chunks:
            rows = d[d["backend"].isin(bs)]
            if rows.empty:
                continue
            names = sorted({backend_group(b) for b in rows["backend"].unique()}, key=lambda g: (g != "native", g))
            what = ("other backends" if len(names) > 2 else
                    ", ".join("coop (native*)" if g == "native" else g for g in names))
            out.append((" · ".join(t for t in (label, what) if t), rows))
    return out


FIG_WIDTH = 7.3  # inches: 1,095 px at save_figure's 150 dpi, caption and legend included


def line_figure(panels, x: str, *, xlabel: str, suptitle: str = "", cold: bool = False, max_lines: int = 8,
                yscale: str = "auto", xscale: str = "log"):
    """line_figure — (fig, failed): small multiples of plot_lines, one legend below them all.

    panels: [{"title", "df", "ylabel", optional "yscale"}] — one per quantity (Fig. 9: local and
    global lock). Each is split by split_series so that no panel holds more than max_lines
    lines; with cold=True and warm iterations in the rows, every panel gets a cold twin beside
    it (iteration 0 of each fork: the first run in a fresh process), so warm and cold lines
    never overlap. The panels of one quantity share their y axis (and all the x axis); two
    columns at most, FIG_WIDTH inches wide. xscale as plot_lines's (one for every panel: they
    share the x axis). The caller adds the caption (add_caption) and saves.
    """
    import matplotlib.pyplot as plt

    cells = []  # (title, rows, which, ylabel, yscale, quantity index)
    splits = [split_series(p["df"], x, max_lines) for p in panels]
    for i in range(max((len(s) for s in splits), default=0)):
        for q, (p, parts) in enumerate(zip(panels, splits)):
            if i >= len(parts):
                continue
            label, rows = parts[i]
            kinds = ["warm", "cold"] if cold and bool((p["df"]["iteration"] > 0).any()) else [None]
            for which in kinds:
                t = " · ".join(s for s in (p.get("title", ""), label, which or "") if s)
                cells.append((t, rows, which or "warm", p["ylabel"], p.get("yscale", yscale), q))
    per_part = len({(q, which) for (_, _, which, _, _, q) in cells})
    # A row holds one part's quantities side by side when there are three (micro_share: a metric per column, never
    # wrapped from row to row); else two columns.
    ncols = 1 if len(cells) == 1 else 3 if per_part == 3 else 2
    nrows = -(-len(cells) // ncols)
    width = 6.0 if ncols == 1 else FIG_WIDTH
    # A title as wide as its panel at most (two titles side by side overprinted each other): wrapped at the words.
    import textwrap
    chars = max(20, int(width / ncols * 72 / 6.0))  # plot_lines's 10-point titles: about 6 points a character
    cells = [(textwrap.fill(t, chars), *rest) for t, *rest in cells]
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, 3.4 * nrows + 0.3), squeeze=False)
    flat = [a for row in axes for a in row]
    first_of = {}
    for ax, (_, _, _, _, _, q) in zip(flat, cells):
        if q in first_of:
            ax.sharey(first_of[q])
        else:
            first_of[q] = ax
        if ax is not flat[0]:
            ax.sharex(flat[0])
    for ax in flat[len(cells):]:
        ax.set_visible(False)
    # "auto" once per quantity, over all its panels, so that panels sharing an axis agree.
    scale_of = {}
    for q, p in enumerate(panels):
        s = p.get("yscale", yscale)
        if s == "auto":
            vals = _point_medians(p["df"], x)
            s = "log" if len(vals) and vals.max() / vals.min() >= 10 else "linear"
        scale_of[q] = s
    if xscale == "auto":
        xs = pd.concat([pd.to_numeric(p["df"][x], errors="coerce") for p in panels]).dropna()
        xscale = "log" if bool((xs > 0).all()) else "linear"
    failed = 0
    # Draw the quantity's panels last to first, so that the first (top-left) one settles the shared limits.
    for ax, (t, rows, which, ylabel, _, q) in reversed(list(zip(flat, cells))):
        failed += plot_lines(ax, rows, x, xlabel=xlabel, ylabel=ylabel, yscale=scale_of[q], title=t, legend=False,
                             which=which, xscale=xscale)
    # Panels sharing a y axis rescale one another as each is drawn: label each log axis's bottom once all are.
    for ax in flat[:len(cells)]:
        if ax.get_yscale() == "log":
            group = ax.get_shared_y_axes().get_siblings(ax)
            label_log_bottom(ax, [y for a in group for ln in a.get_lines() if not ln.get_label().startswith("_")
                                  for y in ln.get_ydata() if y == y and y > 0])
    if ncols == 3:  # narrow panels: axis labels and ticks a size smaller, so neighbours' labels stay apart
        for ax in flat[:len(cells)]:
            ax.xaxis.label.set_fontsize(8)
            ax.yaxis.label.set_fontsize(8)
            ax.tick_params(labelsize=8)
    if suptitle:
        fig.suptitle(suptitle, fontsize=11)
    tight_layout(fig)
    handles, labels = legend_entries(flat[:len(cells)], failed=failed > 0)
    if handles:
        fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=_legend_columns(labels))
    return fig, failed


def _point_medians(df: pd.DataFrame, x: str) -> pd.Series:
    """The positive median value of each point (its ok rows, any iteration): enough to choose a log or linear axis."""
    ok = df[(df["status"] == "ok") & pd.to_numeric(df[x], errors="coerce").gt(0)]
    m = ok.groupby("point")["value"].median()
    return m[m > 0]


def _draw_series(ax, x, ok, label, style, bands, all_medians, thin=False):
    """Draw one line (median) and its interval band; an empty `ok` still gets a legend entry."""
    if not len(ok):
        ax.plot([], [], label=label, **style)
        return
    ax.plot(ok[x], ok["median"], label=label, markersize=4 if thin else 5, linewidth=1.0 if thin else 1.5,
            **style)
    if (ok["hi"] > ok["lo"]).any():
        ax.fill_between(ok[x], ok["lo"], ok["hi"], color=style["color"], alpha=0.07 if thin else 0.14, linewidth=0)
        bands.extend(zip(ok[x], ok["lo"]))
        bands.extend(zip(ok[x], ok["hi"]))
    all_medians.extend(ok["median"].tolist())


def legend_entries(axes, failed: bool = False):
    """legend_entries — (handles, labels) of the series on axes, without duplicates; plus the failed marker, and
    the refused one when an axis shows a refused point (plot_lines)."""
    from matplotlib.lines import Line2D

    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if failed:
        handles.append(Line2D([], [], linestyle="none", marker="x", color="black", markersize=8, markeredgewidth=2))
        labels.append("failed (reason in report.md)")
    if any(ln.get_gid() == REFUSED_GID for ax in axes for ln in ax.get_lines()):
        handles.append(Line2D([], [], linestyle="none", marker="o", markerfacecolor="none", color="black",
                              markersize=8, markeredgewidth=1.6))
        labels.append("refused: not run, a system limit (report.md)")
    return handles, labels


def fixed_parameters(df: pd.DataFrame) -> str:
    """fixed_parameters — "K=2000, M=1" for the parameters that take one value in every row that has them."""
    out = []
    for c in sorted(c for c in df.columns if c.startswith("param.")):
        v = df[c]
        v = v[v.notna() & (v.astype(str) != "")]
        if len(v) and v.nunique() == 1:
            val = v.iloc[0]
            out.append(f"{c[len('param.'):]}={f'{val:g}' if isinstance(val, (int, float)) else val}")
    return ", ".join(out)


def figure_note(df: pd.DataFrame, cold: bool = False, band: bool = True) -> str:
    """figure_note — how to read a line figure: fixed parameters, forks and iterations, line and band, noisy points.

    cold: the figure also has cold lines or panels (cold=True of plot_lines / line_figure); band:
    it draws interval bands.
    """
    forks = df.groupby("point")["repetition"].nunique()
    f = int(forks.max()) if len(forks) else 0
    okf = df[df["status"] == "ok"].groupby("point")["repetition"].nunique()
    f_lo = int(okf.min()) if len(okf) else 0
    timed = df[df["phase"] == "measure"].groupby(["point", "repetition"]).size()
    i = int(timed.max()) if len(timed) else 0
    # Points may time different counts (the cost estimate gives a costly point fewer): the range.
    i_lo = int(timed[timed > 0].min()) if len(timed) else 0
    ni = f"{i} timed iteration{'' if i == 1 else 's'}" if i_lo in (0, i) else f"{i_lo}–{i} timed iterations"
    procs = sorted(df["processors"].dropna().unique())
    on = f"P={compact_number(procs[0])} processor{'' if procs[0] == 1 else 's'}; " if len(procs) == 1 else ""
    fixed = fixed_parameters(df)
    on += f"fixed: {fixed}; " if fixed else ""
    nf = f"{f} fork{'' if f == 1 else 's'}" if f_lo in (0, f) else f"{f_lo}–{f} forks"
    if bool((df["iteration"] > 0).any()):
        what = (f"{nf} per point × {ni}; "
                "line: median of the timed iterations (warm)"
                + ("; cold: iteration 0 of each fork (a fresh process)" if cold else ""))
    else:
        what = f"{nf} per point, one cold run each (iteration 0); line: median over the forks"
    bands = ""
    if band:
        # A band is a confidence interval only across processes (with 1 fork it is that process's own
        # spread), and its coverage is what the fewest forks of a point give (coopbench.stats.coverage).
        if f <= 1:
            bands = f"; band: {ONE_FORK} (its iterations resampled), no interval across processes"
        else:
            lo_f = max(f_lo, 2)
            level = (f"{coverage_pct(lo_f)} %" if lo_f == f else f"{coverage_pct(lo_f)}–{coverage_pct(f)} %")
            bands = (f"; band: {level} confidence interval of the median over forks (order statistics of the forks' "
                     f"medians, exact coverage for {nf}" + ("; below 95 %" if coverage(lo_f) < LEVEL else "") + ")")
            if f_lo <= 1:
                bands += f"; where a point had 1 fork, {ONE_FORK}"
    noisy = df[df["noisy"]]["point"].nunique()
    tail = f"; {noisy} noisy point(s) (machine busy; marked in report.md)" if noisy else ""
    if bool((df["iteration"] > 0).any()):
        cold_only = sum(is_cold_only(g) for _, g in df.groupby("point"))
        if cold_only:
            tail += (f"; {cold_only} point(s) ran one cold run per fork (iteration 0) and no warm iteration: not on the "
                     "warm lines" + (", on the cold ones" if cold else " (report.md's cold table has them)"))
    return on + what + bands + "; × marks a failed point" + tail


def add_caption(fig, context: dict, df: pd.DataFrame | None = None, cold: bool = False, band: bool = True) -> None:
    """add_caption — the machine/commit caption (and the reading note, figure_note(df, cold, band)) under a figure.

    Wrapped to the figure's width and put below everything already drawn (axes, a legend below
    them), so that save_figure's tight bounding box does not widen the figure for it.
    """
    import textwrap

    text = caption(context)
    if df is not None:
        text += "\n" + figure_note(df, cold, band)
    width_in = fig.get_figwidth()
    chars = max(60, int(width_in * 72 / 4.4))  # 7.5-point text: about 4.4 points a character
    wrapped = "\n".join(textwrap.fill(line, chars) for line in text.split("\n"))
    fig.canvas.draw()
    bottom = fig.get_tightbbox(fig.canvas.get_renderer()).y0 / fig.get_figheight()  # inches -> figure fraction
    fig.text(0.5, min(bottom, 0.0) - 0.01, wrapped, ha="center", va="top", fontsize=7.5, color="#444444")
