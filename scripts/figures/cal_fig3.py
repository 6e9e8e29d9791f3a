"""cal_fig3 — Marathe, Moir and Shavit 2006 (Composite Abortable Locks), Fig. 3: scalability.

Workload `abortable-lock` (plan fig3_scalability): very large patience (patience_us 0 =
infinite, or >= 100000), T = 1..P threads. Throughput (successful acquisitions per
second) against T, one line per lock, one panel per backend and processor count; median
over repetitions with its interval over forks as a band. Also a table of fairness (stddev of per-thread
acquisition counts). This module also holds `lock_panels`, which cal_fig4 and cal_fig5
use (loaded by path, since scripts/figures is not a package).
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import pandas as pd

import coopbench as cr

WORKLOAD = "abortable-lock"
NAME = "cal_fig3_scalability"
LOCK_ORDER = ["tas-backoff", "scott-clh-nb", "scott-clh-nb-opt", "cal", "cal-opt", "pthread-timedlock",
              "pthread-mutex"]
LOCK_STYLE = {
    "tas-backoff": {"color": "#7f7f7f", "marker": "d"},  # never "x": the caption's mark of a failed point
    "scott-clh-nb": {"color": "#1f77b4", "marker": "s"},
    "scott-clh-nb-opt": {"color": "#17becf", "marker": "s", "linestyle": "--"},
    "cal": {"color": "#d62728", "marker": "o"},
    "cal-opt": {"color": "#ff7f0e", "marker": "o", "linestyle": "--"},
    "pthread-timedlock": {"color": "#2ca02c", "marker": "^"},
    "pthread-mutex": {"color": "#9467bd", "marker": "v", "linestyle": ":"},
}


def rows(res, workload=WORKLOAD) -> pd.DataFrame:
    """rows — the ok rows of `workload` with numeric params and counters (empty frame if none)."""
    df = res.workload(workload)
    if df.empty or "param.lock" not in df.columns:
        return pd.DataFrame()
    df = cr.ok_rows(df).copy()
    for c in df.columns:
        if c.startswith("param.") and c not in ("param.lock", "param.guard"):
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def timeout_rows(res) -> pd.DataFrame:
    """timeout_rows — rows(res) when they count timed-out attempts (counter.timeouts_pct: Figs. 4 and 5), else an
    empty frame."""
    df = rows(res)
    return df if not df.empty and "counter.timeouts_pct" in df.columns else pd.DataFrame()


def lock_panels(res, outdir, df, *, name, x, y, xlabel, ylabel, title, panel_by=("backend", "processors"),
                xlog=False, ylog=False, invert_x=False, ylim=None):
    """lock_panels — one panel per `panel_by` group, one line per lock (median, interval over forks (hierarchical bootstrap) band)."""
    if df.empty:
        return []
    groups = list(df.groupby(list(panel_by), sort=True))
    # Two panels a row at most, cr.FIG_WIDTH wide, one legend below them all.
    ncols = 1 if len(groups) == 1 else 2
    nrows = -(-len(groups) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.0 if ncols == 1 else cr.FIG_WIDTH, 3.4 * nrows + 0.4),
                             squeeze=False)
    flat = [a for row in axes for a in row]
    for ax in flat[len(groups):]:
        ax.set_visible(False)
    for ax, (key, g) in zip(flat, groups):
        key = key if isinstance(key, tuple) else (key,)
        for lock in [l for l in LOCK_ORDER if l in set(g["param.lock"])] + sorted(set(g["param.lock"]) - set(LOCK_ORDER)):
            s = pd.DataFrame([(xv, *cr.median_ci(cr.with_forks(gx[y].dropna(), gx))) for xv, gx in g[g["param.lock"] == lock].groupby(x)],
                             columns=[x, "median", "lo", "hi"]).sort_values(x)
            st = LOCK_STYLE.get(lock, {})
            ax.plot(s[x], s["median"], label=lock, **st)
            # The median's interval (coopbench.stats.median_ci: over forks, then iterations; with one
            # fork the spread within one process, which add_caption's note then says).
            ax.fill_between(s[x], s["lo"], s["hi"], color=st.get("color"), alpha=0.15, linewidth=0)
        ax.set_title(" ".join(f"{k.replace('param.', '')}={v}" for k, v in zip(panel_by, key)), fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if xlog:
            ax.set_xscale("log")
        if ylog:
            ax.set_yscale("log")
        if invert_x:
            ax.invert_xaxis()
        if ylim:
            ax.set_ylim(*ylim)
        ax.grid(True, alpha=0.3)
    fig.suptitle(textwrap.fill(title, 90), fontsize=10)
    cr.tight_layout(fig)
    handles, labels = cr.legend_entries(flat[:len(groups)])
    fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(labels), 4) or 1)
    cr.add_caption(fig, res.context, df)  # with the forks and what the band is (1 fork: within one process)
    return [{"title": title, "files": cr.save_figure(fig, outdir, name)}]


def make(res, outdir):
    """make — Fig. 3 (throughput against threads) and a fairness table, or [] without data."""
    df = rows(res)
    if df.empty or "param.patience_us" not in df.columns:
        return []
    df = df[(df["param.patience_us"] == 0) | (df["param.patience_us"] >= 100000)]
    if df.empty:
        return []
    df["throughput_M"] = df["value"] / 1e6
    items = lock_panels(res, outdir, df, name=NAME, x="param.T", y="throughput_M", xlabel="threads (T)",
                        ylabel="successful acquisitions [M/s]",
                        title="CAL Fig. 3 — scalability: throughput with very large patience")
    if "counter.fairness_stddev" in df.columns:
        t = (df.groupby(["backend", "param.lock", "param.T"])[["value", "counter.fairness_stddev", "counter.fairness_cv"]]
             .median().reset_index())
        lines = ["| backend | lock | T | acquisitions/s | fairness stddev | stddev/mean |", "|---|---|---:|---:|---:|---:|"]
        for _, r in t.iterrows():
            lines.append(f"| {r['backend']} | {r['param.lock']} | {int(r['param.T'])} | {r['value']:.3g} | "
                         f"{r['counter.fairness_stddev']:.1f} | {r['counter.fairness_cv']:.3f} |")
        items.append({"title": "CAL Fig. 3 — per-thread fairness (median over repetitions)", "markdown": "\n".join(lines)})
    return items
