"""coopbench.figure — drawing helpers shared by the figure modules (scripts/figures/).

save_figure writes PNG and SVG reproducibly; plot_lines draws a workload's points in the
paper's style (Fig. 7-9): one line per series (series_labels), the median of the timed
iterations with its bootstrap 95 % interval as a band (coopbench.stats), optionally a
cold line (iteration 0 of each fork) beside the warm one, failed points as ×;
figure_note and add_caption put the method and the machine under a figure.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the Agg backend)
import pandas as pd  # noqa: E402

from .stats import LEVEL, RESAMPLES, summarize  # noqa: E402
from .style import backend_style, caption, compact_number  # noqa: E402


def save_figure(fig, outdir, name: str) -> list:
    """save_figure — write `name`.png and `name`.svg into outdir (created), close fig, return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
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
               legend: bool = True, cold: bool = False):
    """plot_lines — draw one workload's points on ax: one line per series (see series_labels).

    Each line is the median of the timed iterations of all forks (coopbench.stats), with
    its bootstrap 95 % interval as a band. cold=True also draws, when the folder has warm
    iterations (some fork ran more than one), a cold line per series: the median of the
    forks' iteration 0 (same colour, hollow markers, thin dotted line, labelled "cold";
    the other then "warm"). A point with no ok timed iteration is drawn as an 'x' in the series' colour at the height of the series'
    nearest ok median (or near the bottom of the axis when the series has none), so the
    place where a backend stopped is visible. x is always logarithmic; yscale "log",
    "linear" or "auto" (log when the medians span a factor of 10 or more). legend: draw
    the legend outside, right of the axes (False: leave it to the caller, e.g. one
    legend for several panels via legend_entries). Returns the number of failed points.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    d = df.copy()
    d[x] = pd.to_numeric(d[x], errors="coerce")
    d = d[d[x] > 0]  # log x: a non-positive x cannot be drawn (it still appears in report.md's tables)
    cols = series_labels(d, x)
    procs = sorted(d["processors"].dropna().unique())
    hosts = sorted(d["host"].unique()) if "host" in cols else []
    pending_failed = []  # (x, series key, style) — placed once the y range is known
    all_medians = []
    bands = []  # (x, y) corners of the interval bands, so that the axis limits include them
    both = cold and bool((d["iteration"] > 0).any())  # a cold line only where warm differs from cold
    for key, g in d.groupby(cols if len(cols) > 1 else cols[0], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        style = backend_style(key[0])
        if "processors" in cols:
            p = key[cols.index("processors")]
            style["linestyle"] = _P_LINESTYLES[procs.index(p) % len(_P_LINESTYLES)]
        if "host" in cols:  # the backend's colour, a marker per host
            style["marker"] = _HOST_MARKERS[hosts.index(key[cols.index("host")]) % len(_HOST_MARKERS)]
        s = summarize(g, x).sort_values(x)
        ok = s[s["n_ok"] > 0]
        name = _series_name(cols, key)
        _draw_series(ax, x, ok, name + (" warm" if both else ""), style, bands, all_medians)
        if both:
            c = summarize(g, x, "cold").sort_values(x)
            cstyle = dict(style, linestyle=":", markerfacecolor="none")
            _draw_series(ax, x, c[c["n_ok"] > 0], name + " cold", cstyle, bands, all_medians, thin=True)
        for xv in s[s["n_ok"] == 0][x]:
            pending_failed.append((xv, ok, style))
    if yscale == "auto":
        pos = [m for m in all_medians if m > 0]
        yscale = "log" if pos and max(pos) / min(pos) >= 10 else "linear"
    ax.set_xscale("log")
    ax.set_yscale(yscale)
    if all_medians:
        ax.relim()
        if bands:
            ax.update_datalim(bands)
        ax.autoscale_view()
    lo, hi = ax.get_ylim()
    for xv, ok, style in pending_failed:
        if len(ok):
            before = ok[ok[x] <= xv]
            yv = before["median"].iloc[-1] if len(before) else ok["median"].iloc[0]
        else:
            yv = (lo * (hi / lo) ** 0.08) if yscale == "log" and lo > 0 else lo + 0.08 * (hi - lo)
        ax.plot([xv], [yv], linestyle="none", marker="x", markersize=10, markeredgewidth=2.2, color=style["color"])
    xs = sorted(d[x].unique())
    if 0 < len(xs) <= 12:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    if yscale == "log":
        lo, hi = ax.get_ylim()
        if lo > 0 and hi / lo < 300:
            # Under ~2.5 decades the powers of 10 alone leave the axis nearly unlabelled: label 1, 2, 5 x 10^k.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(compact_number))
    ax.set_xlabel(xlabel + " (log)")
    ax.set_ylabel(ylabel + (" (log)" if yscale == "log" else ""))
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    if legend:
        handles, labels = legend_entries([ax], failed=bool(pending_failed))
        if handles:
            ax.legend(handles, labels, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return len(pending_failed)


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
    """legend_entries — (handles, labels) of the series on axes, without duplicates; plus the failed marker."""
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
    return handles, labels


def figure_note(df: pd.DataFrame, cold: bool = False, band: bool = True) -> str:
    """figure_note — how to read a line figure: forks and iterations, what line and band are, noisy points.

    cold: the figure also has cold lines (plot_lines(cold=True)); band: it draws interval bands.
    """
    forks = df.groupby("point")["repetition"].nunique()
    f = int(forks.max()) if len(forks) else 0
    timed = df[df["phase"] == "measure"].groupby(["point", "repetition"]).size()
    i = int(timed.max()) if len(timed) else 0
    procs = sorted(df["processors"].dropna().unique())
    on = f"P={compact_number(procs[0])} processors; " if len(procs) == 1 else ""
    if bool((df["iteration"] > 0).any()):
        what = (f"up to {f} forks × {i} timed iterations; line: median of the timed iterations (warm)"
                + ("; dotted, hollow: cold = iteration 0 of each fork" if cold else ""))
    else:
        what = f"up to {f} fork(s), one cold run each (iteration 0); line: median over the forks"
    bands = f"; band: {LEVEL:.0%} bootstrap interval of the median ({RESAMPLES} resamples)" if band else ""
    noisy = df[df["noisy"]]["point"].nunique()
    tail = f"; {noisy} noisy point(s) (machine busy; marked in report.md)" if noisy else ""
    return on + what + bands + "; × marks a failed point" + tail


def add_caption(fig, context: dict, df: pd.DataFrame | None = None, cold: bool = False, band: bool = True) -> None:
    """add_caption — the machine/commit caption (and the reading note, figure_note(df, cold, band)) under a figure."""
    text = caption(context)
    if df is not None:
        text += "\n" + figure_note(df, cold, band)
    fig.text(0.5, -0.01, text, ha="center", va="top", fontsize=7.5, color="#444444", wrap=True)
