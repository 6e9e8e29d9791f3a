"""fig09_locking — Negele et al. 2017, Fig. 9: local and global locking.

Workloads `lock-local` and `lock-global` (params T threads, K lock+unlock pairs each).
One file, fig9_locking.{png,svg}, with two panels side by side — local (left), global
(right) — as the paper's Fig. 9 shows both; a panel is left out when its workload has
no rows. Threads (log) vs. wall ns per lock+unlock; y logarithmic when the medians of a
panel span a factor of 10 or more. One line per backend (per P / per K when several),
median with its bootstrap 95 % interval as a band, failed points marked with ×.
"""

import matplotlib.pyplot as plt
import pandas as pd

import coopbench_results as cr

PANELS = (("lock-local", "local lock (each thread its own mutex)"),
          ("lock-global", "global lock (one shared mutex)"))
NAME = "fig9_locking"


def make(res, outdir):
    """make — the Fig. 9 item, or [] when the results hold neither lock workload."""
    present = [(w, t, res.workload(w)) for w, t in PANELS]
    present = [(w, t, df) for w, t, df in present if not df.empty and "param.T" in df.columns]
    if not present:
        return []
    fig, axes = plt.subplots(1, len(present), figsize=(5.6 * len(present), 4.4), squeeze=False)
    failed = 0
    for ax, (w, t, df) in zip(axes[0], present):
        unit = next((u for u in df["unit"] if u), "ns/lock")
        failed += cr.plot_lines(ax, df, "param.T", xlabel="threads (T)", ylabel=f"time per lock+unlock [{unit}]",
                                yscale="auto", title=f"Fig. 9 — {t}", legend=False)
    fig.tight_layout()
    # One legend for both panels, right of the last one.
    handles, labels = cr.legend_entries(axes[0], failed=failed > 0)
    axes[0][-1].legend(handles, labels, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    cr.add_caption(fig, res.context, pd.concat([df for _, _, df in present]))
    names = " and ".join(w for w, _, _ in present)
    return [{"title": f"Fig. 9 — locking ({names})", "files": cr.save_figure(fig, outdir, NAME),
             "text": "T threads each lock and unlock a mutex K times around a counter increment: their own "
                     "mutex (local, left) or one shared mutex (global, right); wall time / (T·K)."}]
