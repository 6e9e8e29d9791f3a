"""fig11_skynet — skynet: a tree of threads alive at once (A. Temerev's skynet benchmark).

Workload `skynet` (params L = levels, B = fan-out; B^L leaves). Two panels against the
leaves (log x): the time for the whole tree (ms, median of the timed iterations with its
interval over forks (hierarchical bootstrap)) and the fork's peak RSS (MiB; peak_rss_kib, the same on every row of
a fork; absent with --isolation none), per backend (and per P when several are present).
Failed points (a capacity check that refused, a stack that could not be had) marked with ×.
Writes figures/fig11_skynet.{png,svg}.
"""

import pandas as pd

import coopbench as cr

WORKLOAD = "skynet"
NAME = "fig11_skynet"


def make(res, outdir):
    """make — the skynet item, or [] when the results hold no `skynet` rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.L" not in df.columns:
        return []
    df = df.copy()
    fanout = pd.to_numeric(df["param.B"], errors="coerce") if "param.B" in df.columns else 10
    df["leaves"] = fanout ** pd.to_numeric(df["param.L"], errors="coerce")
    # L is the x axis (as leaves), not a series; B stays a series only when it varies.
    drop = ["param.L"] + (["param.B"] if "param.B" in df.columns and df["param.B"].nunique() <= 1 else [])
    df = df.drop(columns=drop)
    rss = df.copy()
    rss["value"] = pd.to_numeric(rss.get("peak_rss_kib"), errors="coerce") / 1024.0
    has_rss = rss["value"].notna().any()
    panels = [{"title": "time", "df": df, "ylabel": "time for the tree [ms]", "yscale": "log"}]
    if has_rss:
        rss.loc[rss["value"].isna() & (rss["status"] == "ok"), "status"] = "failed"
        panels.append({"title": "peak RSS", "df": rss, "ylabel": "peak RSS of the fork [MiB]", "yscale": "log"})
    fig, _ = cr.line_figure(panels, "leaves", xlabel="leaves (B^L)", suptitle="skynet")
    cr.add_caption(fig, res.context, df)
    return [{"title": "skynet — a tree of threads alive at once", "files": cr.save_figure(fig, outdir, NAME),
             "text": "A root spawns B children, each of them B children, down to L levels (B^L leaves, "
                     "1.11 B^L threads); every inner thread joins its children and sums their results. Left: "
                     "the time for the whole tree; right: the fork's peak RSS (the process, runtime included). "
                     "A FIFO order (native) keeps every inner thread blocked at once, a depth-first one "
                     "(native-ws, Go) few. × marks a point a backend could not run (reason in *Failed points*)."}]
