"""owner_access — ParaSail's owner/non-owner access (Taft 2012): owner cost against owner share.

Workload `owner-access`: one owner and W non-owners; the owner makes share_permille of
the accesses. Left: ns per owner access against the owner's share, one line per guard
(owner-guard, owner-guard-asym, pthread-mutex, tas-backoff); right: ns per non-owner
access. One row of panels per backend, P and W: the median over forks with its interval as a band
(coopbench.stats), the method under the figure. Also a table.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

import coopbench as cr
from coopbench.figure import label_log_bottom

WORKLOAD = "owner-access"
NAME = "owner_access"
GUARD_STYLE = {
    "owner-guard": {"color": "#1f77b4", "marker": "o"},
    "owner-guard-asym": {"color": "#d62728", "marker": "o", "linestyle": "--"},
    "pthread-mutex": {"color": "#9467bd", "marker": "v", "linestyle": ":"},
    "tas-backoff": {"color": "#7f7f7f", "marker": "d"},  # never "x": the mark of a failed point
}


def make(res, outdir):
    """make — the owner-cost figure and table, or [] without owner-access rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.guard" not in df.columns or "counter.owner_ns" not in df.columns:
        return []
    df = cr.ok_rows(df).copy()
    if df.empty:
        return []
    for c in ("param.W", "param.share_permille"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    df["share_pct"] = df["param.share_permille"] / 10.0
    if "counter.nonowner_ns" not in df.columns:
        df["counter.nonowner_ns"] = float("nan")
    groups = list(df.groupby(["backend", "processors", "param.W"], sort=True))
    fig, axes = plt.subplots(len(groups), 2, figsize=(cr.FIG_WIDTH, 3.4 * len(groups) + 0.4), squeeze=False)
    shares = sorted(df["share_pct"].dropna().unique())
    pos = {v: i for i, v in enumerate(shares)}  # the shares as evenly spaced categories, written as numbers
    for row, (key, g) in zip(axes, groups):
        for ax, col, label in ((row[0], "counter.owner_ns", "ns per owner access"),
                               (row[1], "counter.nonowner_ns", "ns per non-owner access")):
            values = []
            for guard in sorted(set(g["param.guard"])):
                d = g[g["param.guard"] == guard].copy()
                d["value"] = d[col]
                d = d[d["value"].notna()]
                if d.empty:
                    continue
                # The median over forks and its interval (coopbench.stats, hierarchical bootstrap) as a band.
                s = cr.summarize(d, "share_pct").sort_values("share_pct")
                s = s[s["n_ok"] > 0]
                xs = s["share_pct"].map(pos)
                style = GUARD_STYLE.get(guard, {})
                ax.plot(xs, s["median"], label=guard, **style)
                if (s["hi"] > s["lo"]).any():
                    ax.fill_between(xs, s["lo"], s["hi"], color=style.get("color", "#777777"), alpha=0.15,
                                    linewidth=0)
                values += [v for v in s["median"] if v > 0]
            ax.set_yscale("log")
            # Labels 1, 2, 5 x 10^k written plainly ("6", "20"), no "6x10^0" minor labels.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_major_formatter(FuncFormatter(cr.compact_number))
            ax.yaxis.set_minor_formatter(NullFormatter())
            label_log_bottom(ax, values)  # a labelled tick under the cheapest guard (tas-backoff, ~1.5 ns)
            ax.set_xticks(range(len(shares)))
            ax.set_xticklabels([f"{v:g}" for v in shares])  # "99", not "99.0"
            ax.set_xlabel("owner's share of accesses [%]")
            ax.set_ylabel(label)
            ax.set_title(f"{key[0]}, P={cr.compact_number(key[1])}, W={cr.compact_number(key[2])} non-owners",
                         fontsize=9)
            ax.grid(True, alpha=0.3)
    fig.suptitle("Owner/non-owner access (ParaSail):\ncost per access against the owner's share", fontsize=10)
    cr.tight_layout(fig)
    handles, labels = cr.legend_entries([a for row in axes for a in row])
    fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(labels), 4) or 1)
    cr.add_caption(fig, res.context, df)  # the method: forks, iterations, what the band is
    items = [{"title": "Owner/non-owner access — owner cost against owner share",
              "files": cr.save_figure(fig, outdir, NAME)}]
    t = (df.groupby(["backend", "param.W", "share_pct", "param.guard"])[["counter.owner_ns", "counter.nonowner_ns",
                                                                        "counter.owner_slow_pct"]]
         .median().reset_index())
    lines = ["| backend | W | owner share % | guard | owner ns | non-owner ns | owner slow % |",
             "|---|---:|---:|---|---:|---:|---:|"]
    for _, r in t.iterrows():
        non = "" if pd.isna(r["counter.nonowner_ns"]) else f"{r['counter.nonowner_ns']:.1f}"
        lines.append(f"| {r['backend']} | {int(r['param.W'])} | {r['share_pct']:g} | {r['param.guard']} | "
                     f"{r['counter.owner_ns']:.2f} | {non} | {r['counter.owner_slow_pct']:.2f} |")
    items.append({"title": "Owner/non-owner access — medians", "markdown": "\n".join(lines)})
    return items
