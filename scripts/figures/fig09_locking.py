"""fig09_locking — Negele et al. 2017, Fig. 9: local and global locking.

Workloads `lock-local` and `lock-global` (params T threads, K lock+unlock pairs each).
One file, fig9_locking.{png,svg}, with two panels side by side — local (left), global
(right) — as the paper's Fig. 9 shows both; a panel is left out when its workload has
no rows. Threads (log) vs. wall ns per lock+unlock; y logarithmic when the medians of a
panel span a factor of 10 or more. One line per backend (per P / per K when several),
median with its interval over forks (hierarchical bootstrap) as a band, failed points marked with ×; more
than 8 lines: a panel pair per P, then per backend group.
"""

import pandas as pd

import coopbench as cr

PANELS = (("lock-local", "local lock"), ("lock-global", "global lock"))
NAME = "fig9_locking"


def make(res, outdir):
    """make — the Fig. 9 item, or [] when the results hold neither lock workload."""
    present = [(w, t, res.workload(w)) for w, t in PANELS]
    present = [(w, t, df) for w, t, df in present if not df.empty and "param.T" in df.columns]
    if not present:
        return []
    panels = [{"title": t, "df": df,
               "ylabel": f"time per lock+unlock [{next((u for u in df['unit'] if u), 'ns/lock')}]"}
              for w, t, df in present]
    fig, _ = cr.line_figure(panels, "param.T", xlabel="threads (T)", suptitle="Fig. 9 — locking")
    cr.add_caption(fig, res.context, pd.concat([df for _, _, df in present]))
    names = " and ".join(w for w, _, _ in present)
    return [{"title": f"Fig. 9 — locking ({names})", "files": cr.save_figure(fig, outdir, NAME),
             "text": "T threads each lock and unlock a mutex K times around a counter increment: their own "
                     "mutex (local, left) or one shared mutex (global, right); wall time / (T·K)."}]
