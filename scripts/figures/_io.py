"""_io — what the I/O workloads' figure modules (io_*.py) share: a grid of panels, counters drawn as values, the
client-bound mark, and the note a figure gives when a column it needs is absent.

plot.py skips this file (its name starts with "_"); the modules import it with cr.sibling_module(__file__, "_io").

    has(df, column)               whether some row has a number in that column
    as_value(df, column)          the rows with `value` replaced by a counter (the line helpers draw `value`)
    bound_points(df)              the points the load generator bounded (counter.client_bound)
    grid_figure(cells, x, ...)    (fig, failed): panels in rows and columns, one legend (and the client-bound
                                  mark's entry) under them all
    parts(df, columns, NAMES)     [(title, rows)]: a part per P and per value of the swept columns
    closed_loop(...)              a closed loop's rate and server-CPU-per-request figures
    open_loop(...)                an open loop's p50/p99/p99.9 against the offered load
    percentile_cells(df, cols)    the three percentile panels of each part (open loops, echo-hogs)
    skipped(title, missing, w)    the item that says a figure was left out and why (a column absent), not a crash
    figure_item(...)              caption, save and return a figure's item

The counters are docs/results-format.md's ("The I/O workloads' counters"): p50_us, p99_us, p999_us,
server_cpu_us_per_request, client_bound, and echo-idle's rss_per_idle_kib.
"""

from __future__ import annotations

import textwrap

import pandas as pd

import coopbench as cr
from coopbench.figure import _legend_columns, label_log_bottom, plot_lines, tight_layout

# The gid of a client-bound mark (a hollow square around the point): the tests find them by it.
CLIENT_BOUND_GID = "coopbench-client-bound"
CLIENT_BOUND_LABEL = "client-bound (the load generator's core ≥ 90 % busy)"
BOUND_COUNTER = "counter.client_bound"
CPU_COUNTER = "counter.server_cpu_us_per_request"
PERCENTILES = (("counter.p50_us", "p50"), ("counter.p99_us", "p99"), ("counter.p999_us", "p99.9"))


def has(df: pd.DataFrame, column: str) -> bool:
    """has — True when df has the column and some row holds a number in it."""
    return column in df.columns and bool(pd.to_numeric(df[column], errors="coerce").notna().any())


def as_value(df: pd.DataFrame, column: str) -> pd.DataFrame:
    """as_value — the rows with `value` replaced by `column` (a counter: the line helpers draw `value`); an ok
    row without it is dropped, a failed or refused row kept (it is drawn as failed or refused)."""
    d = df.copy()
    d["value"] = pd.to_numeric(d[column], errors="coerce") if column in d.columns else float("nan")
    return d[d["value"].notna() | (d["status"] != "ok")]


def bound_points(df: pd.DataFrame) -> set:
    """bound_points — the points whose load generator was the bottleneck: counter.client_bound = 1 in at least
    half of the point's timed ok iterations (the harness sets it when the client's CPU use over the window is at
    least 0.9 of its threads)."""
    if not has(df, BOUND_COUNTER):
        return set()
    ok = df[(df["status"] == "ok") & (df["phase"] == "measure")]
    frac = pd.to_numeric(ok[BOUND_COUNTER], errors="coerce").groupby(ok["point"]).mean()
    return set(frac[frac >= 0.5].index)


def _mark_bound(ax, df: pd.DataFrame, x: str, bound: set) -> int:
    """Draw a hollow square around each client-bound point of df at the height plot_lines drew its median;
    the number drawn."""
    if not bound:
        return 0
    d = df[df["point"].isin(bound)].copy()
    d[x] = pd.to_numeric(d[x], errors="coerce")
    n = 0
    has_warm = bool((df["iteration"] > 0).any())
    for _, g in d.groupby("point", sort=True):
        if has_warm and cr.is_cold_only(g):
            continue  # plot_lines leaves a cold-only point off a warm line: nothing to mark
        # plot_lines's median: of the point's timed iterations over all its forks (the warm sample).
        m = float(cr.warm_sample(g).median()) if len(g) else float("nan")
        xv = g[x].iloc[0]
        if m == m and xv == xv and (ax.get_yscale() != "log" or m > 0) and (ax.get_xscale() != "log" or xv > 0):
            ax.plot([xv], [m], linestyle="none", marker="s", markersize=10, markerfacecolor="none",
                    markeredgecolor="#555555", markeredgewidth=0.8, label="_client-bound", gid=CLIENT_BOUND_GID,
                    zorder=1)
            n += 1
    return n


def grid_figure(cells, x: str, *, xlabel: str, suptitle: str, ncols: int, xscale: str = "log",
                mark_bound: bool = False, panel_height: float = 2.9):
    """grid_figure — (fig, failed): one panel per cell, ncols to a row, FIG_WIDTH wide, one legend below.

    cells: [{"title", "df", "ylabel", optional "yscale" ("auto": log when the medians of the cell's share group
    span 10× or more), optional "share" (cells with the same key share their y axis; default: each its own)}].
    Each panel is plot_lines's (a line per backend, the interval band, failed ×, refused ring); mark_bound adds
    a hollow square around each client-bound point (bound_points) and its legend entry. The caller adds the
    caption (cr.add_caption) and saves.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    ncols = max(1, min(ncols, len(cells)))
    nrows = -(-len(cells) // ncols)
    width = 6.0 if ncols == 1 else cr.FIG_WIDTH
    chars = max(18, int(width / ncols * 72 / 6.0))  # 10-point titles: about 6 points a character
    fig, axes = plt.subplots(nrows, ncols, figsize=(width, panel_height * nrows + 0.4), squeeze=False)
    flat = [a for row in axes for a in row]
    for ax in flat[len(cells):]:
        ax.set_visible(False)
    groups: dict = {}
    for i, c in enumerate(cells):
        groups.setdefault(c.get("share", i), []).append(i)
    scale = {}
    for key, idx in groups.items():
        s = cells[idx[0]].get("yscale", "auto")
        if s == "auto":
            vals = pd.concat([c["df"][(c["df"]["status"] == "ok")]["value"] for c in (cells[i] for i in idx)])
            vals = vals[vals > 0]
            s = "log" if len(vals) and vals.max() / vals.min() >= 10 else "linear"
        scale[key] = s
        for i in idx[1:]:
            flat[i].sharey(flat[idx[0]])
    for i in range(1, len(cells)):
        flat[i].sharex(flat[0])
    bound = set().union(*(bound_points(c["df"]) for c in cells)) if mark_bound else set()
    failed, marked = 0, 0
    # Last to first, so that the first panel of a share group settles the shared limits (as line_figure).
    for i in reversed(range(len(cells))):
        c = cells[i]
        ax = flat[i]
        failed += plot_lines(ax, c["df"], x, xlabel=xlabel, ylabel=c["ylabel"], yscale=scale[c.get("share", i)],
                             title=textwrap.fill(c["title"], chars), legend=False, xscale=xscale)
        marked += _mark_bound(ax, c["df"], x, bound)
    for ax in flat[:len(cells)]:
        if ax.get_yscale() == "log":
            group = ax.get_shared_y_axes().get_siblings(ax)
            label_log_bottom(ax, [y for a in group for ln in a.get_lines() if not ln.get_label().startswith("_")
                                  for y in ln.get_ydata() if y == y and y > 0])
    if ncols >= 3:  # narrow panels: labels and ticks a size smaller, so that neighbours' labels stay apart
        for ax in flat[:len(cells)]:
            ax.xaxis.label.set_fontsize(8)
            ax.yaxis.label.set_fontsize(8)
            ax.tick_params(labelsize=8)
    fig.suptitle(suptitle, fontsize=11)
    tight_layout(fig)
    handles, labels = cr.legend_entries(flat[:len(cells)], failed=failed > 0)
    if marked:
        handles.append(Line2D([], [], linestyle="none", marker="s", markersize=10, markerfacecolor="none",
                              markeredgecolor="#555555", markeredgewidth=0.8))
        labels.append(CLIENT_BOUND_LABEL)
    if handles:
        # More than six entries in one column made the legend taller than a row of panels: two at least.
        ncol = max(_legend_columns(labels), 2 if len(labels) > 6 and ncols > 1 else 1)
        fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=ncol)
    return fig, failed


def values_of(df: pd.DataFrame, column: str) -> list:
    """values_of — the distinct numeric values of a column, sorted (none when absent)."""
    if column not in df.columns:
        return []
    return sorted(pd.to_numeric(df[column], errors="coerce").dropna().unique())


def _eq(df: pd.DataFrame, column: str, v) -> pd.Series:
    return pd.to_numeric(df[column], errors="coerce") == v


def swept(df: pd.DataFrame, columns) -> list:
    """swept — the columns among `columns` that take more than one value in df."""
    return [c for c in columns if len(values_of(df, c)) > 1]


def parts(df: pd.DataFrame, columns, names: dict) -> list:
    """parts — [(title, rows)]: one per P (outer) and combination of the values of `columns` (inner) that has
    rows, so that a row of panels is one P when the first of `columns` gives the columns; names[column](value)
    titles a value ("64 B"), P last in the title ("64 B · P=1")."""
    combos = [((), df)]
    for c in columns:
        nxt = []
        for key, d in combos:
            vals = values_of(d, c)
            if len(vals) <= 1:
                nxt.append((key, d))
                continue
            nxt += [(key + ((c, v),), d[_eq(d, c, v)]) for v in vals]
        combos = nxt
    out = []
    for p in values_of(df, "processors"):
        for key, d in combos:
            rows = d[d["processors"] == p]
            if len(rows):
                title = [names.get(c, lambda v, c=c: f"{c[6:]}={label(v)}")(v) for c, v in key] + [pname(p)]
                out.append((" · ".join(title), rows))
    return out


def label(v) -> str:
    """label — a parameter's value as a tick or title says it (1k, 10k)."""
    return cr.compact_number(v)


def pname(p) -> str:
    return f"P={label(p)}"


NAMES = {"param.size": lambda v: f"{int(v)} B", "param.connections": lambda v: f"{label(v)} connections",
         "param.work": lambda v: f"work {label(v)}", "param.client_threads": lambda v: f"{label(v)} client threads",
         "param.idle": lambda v: f"{label(v)} idle", "param.rate": lambda v: f"{label(v)} requests/s",
         "param.hogs": lambda v: "two hogs per processor" if v <= 0 else f"{label(v)} hogs",  # 0: the default
         "param.slice_us": lambda v: f"slice {label(v)} µs", "param.load": lambda v: f"load {label(v)} %"}


def skipped(title: str, missing, workload: str) -> dict:
    """skipped — a table item that says which figure was left out and why: the columns it needs are absent from
    these results (a folder of an older harness, or a run that measured nothing there). plot.py shows it under
    the figures, so a reader sees that a figure is missing, and why, instead of a crash or nothing."""
    cols = ", ".join(f"`{c}`" for c in missing)
    return {"title": f"{title}: not drawn", "workloads": [workload],
            "markdown": f"Not drawn: the `{workload}` rows of these results have no {cols} (a folder written "
                        "before that counter existed, or no ok row holds it); their values are in *Median values*."}


def figure_item(res, outdir, df, fig, name: str, title: str, text: str, workloads, band: bool = True) -> dict:
    """figure_item — caption the figure (machine, forks and iterations; band: it draws interval bands), save it,
    and return its item."""
    cr.add_caption(fig, res.context, df, band=band)
    return {"title": title, "files": cr.save_figure(fig, outdir, name), "text": text, "workloads": list(workloads)}


def file_name(w: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in w)


def closed_loop(res, outdir, df, w: str, *, x: str, xlabel: str, columns, rate_label: str, per: str,
                what: str) -> list:
    """closed_loop — a closed-loop workload's two figures, each a panel per value of `columns` (side by side) and
    per P (one row each), a line per backend against x: its rate (`value`, rate_label, log y when it spans 10×;
    client-bound points marked) and the server's CPU per request (counter.server_cpu_us_per_request, µs per
    `per`). A figure whose column is absent is a skipped item instead."""
    items = []
    if df.empty:
        return []
    if not values_of(df, x):
        return [skipped(f"{w} — {what}", [x], w)]
    cols = swept(df, columns)
    # A row of panels per P, a column per value of the first swept parameter; with none, the P side by side.
    ncols = len(values_of(df, cols[0])) if cols else min(3, len(values_of(df, "processors")))
    cells = [{"title": t or w, "df": d, "ylabel": rate_label, "share": 0} for t, d in parts(df, cols, NAMES)]
    fig, _ = grid_figure(cells, x, xlabel=xlabel, suptitle=f"{w} — {what}", ncols=ncols,
                         mark_bound=has(df, BOUND_COUNTER))
    bound = len(bound_points(df))
    items.append(figure_item(
        res, outdir, df, fig, f"io_{file_name(w)}_rate", f"{w} — {what} against {xlabel.split(' [')[0]}",
        f"The rate over the measured window ({rate_label}), a line per backend; higher is better. A hollow square "
        "marks a point where the load generator's own core was saturated (`client_bound`: its CPU time over the "
        "window at least 0.9 of its threads): there the rate is the client's, not the server's, and the servers "
        "are compared by their CPU per request (the next figure)."
        + (f" {bound} point(s) here are client-bound." if bound else " No point here is client-bound."), [w]))
    if not has(df, CPU_COUNTER):
        items.append(skipped(f"{w} — server CPU per {per}", [CPU_COUNTER], w))
        return items
    c = as_value(df, CPU_COUNTER)
    cells = [{"title": t or w, "df": d, "ylabel": f"server CPU [µs/{per}]", "share": 0} for t, d in parts(c, cols, NAMES)]
    fig, _ = grid_figure(cells, x, xlabel=xlabel, suptitle=f"{w} — server CPU per {per}", ncols=ncols,
                         mark_bound=has(df, BOUND_COUNTER))
    items.append(figure_item(
        res, outdir, c, fig, f"io_{file_name(w)}_cpu", f"{w} — server CPU per {per} against {xlabel.split(' [')[0]}",
        f"The server process's CPU time (user + system, all its threads: `clock_getcpuclockid` of its pid, read at "
        f"the window's edges) over the window, divided by the {per}s measured (`server_cpu_us_per_request`); lower "
        "is better. It is the server's cost whoever bounds the rate, so it compares servers at client-bound points "
        "too (marked as in the rate figure).", [w]))
    return items


def percentile_cells(d: pd.DataFrame, cols) -> list:
    """percentile_cells — a row of three cells (p50, p99, p99.9; log y, one shared axis) per part of d (parts)."""
    cells = []
    for t, rows in parts(d, cols, NAMES):
        for c, pct in PERCENTILES:
            cells.append({"title": " · ".join(s for s in (pct, t) if s), "df": as_value(rows, c),
                          "ylabel": f"{pct} latency [µs]", "share": 0, "yscale": "log"})
    return cells


def open_loop(res, outdir, df, w: str, *, columns) -> list:
    """open_loop — an open-loop workload's latency figure (the hockey stick): p50, p99 and p99.9 (one column
    each) against the offered load, log y, a line per backend, a row of panels per value of `columns` and P."""
    if df.empty:
        return []
    missing = [c for c, _ in PERCENTILES if not has(df, c)]
    if missing:
        return [skipped(f"{w} — latency against offered load", missing, w)]
    d = df
    x, xlabel, xscale = "param.load", "offered load [% of max]", "linear"
    if "param.rate" in d.columns and (pd.to_numeric(d["param.rate"], errors="coerce").fillna(0) > 0).any():
        by_rate = pd.to_numeric(d["param.rate"], errors="coerce").fillna(0) > 0
        if by_rate.all():  # every point offered a fixed rate: the rate is the x axis
            x, xlabel, xscale = "param.rate", "offered rate [requests/s]", "log"
        else:
            d = d[~by_rate]  # the fixed-rate points are in the median tables
    if x not in d.columns or not values_of(d, x):
        return [skipped(f"{w} — latency against offered load", [x], w)]
    cells = percentile_cells(d, swept(d, columns))
    fig, _ = grid_figure(cells, x, xlabel=xlabel, suptitle=f"{w} — latency against offered load", ncols=3,
                         xscale=xscale, panel_height=2.6)
    unfinished = int((pd.to_numeric(d.get("counter.unfinished"), errors="coerce").fillna(0) > 0).sum()) \
        if "counter.unfinished" in d.columns else 0
    return [figure_item(
        res, outdir, d, fig, f"io_{file_name(w)}_latency", f"{w} — latency percentiles against offered load",
        "The hockey stick: p50, p99 and p99.9 of the measured requests' latency (µs, log), each from its request's "
        "intended send time (wrk2's method: a server that stalls is charged for every request it delayed), a line "
        "per backend, against the offered load as a share of that server's own closed-loop maximum (measured "
        "first on the same connections: `calibrated_rps`). Flat, then a knee where the server saturates; lower "
        "is better. Percentiles are at most `percentile_error` (1/128) above the true value."
        + (f" {unfinished} iteration(s) left requests unanswered 2 s after the window (`unfinished`): their "
           "latency is a lower bound." if unfinished else ""), [w])]
