"""cal_fig5 — Marathe, Moir and Shavit 2006 (Composite Abortable Locks), Fig. 5: degradation.

Workload `abortable-lock` (plan fig5_degradation): T = P and 2P, patience falling from
144 us to a few us. Percentage of attempts that timed out against patience (log axis,
falling to the right), one line per lock, one panel per backend, P and T.
"""

from __future__ import annotations

import coopbench as cr

cal = cr.sibling_module(__file__, "cal_fig3")

NAME = "cal_fig5_degradation"


def make(res, outdir):
    """make — Fig. 5 (% timed out against patience), or [] without data."""
    df = cal.timeout_rows(res)
    if df.empty:
        return []
    df = df[(df["param.patience_us"] > 0) & (df["param.patience_us"] <= 144)]
    if df.empty or df["param.patience_us"].nunique() < 2:
        return []
    return cal.lock_panels(res, outdir, df, name=NAME, x="param.patience_us", y="counter.timeouts_pct",
                           xlabel="patience [µs]", ylabel="attempts timed out [%]", xlog=True, invert_x=True,
                           ylim=(-2, 102), panel_by=("backend", "processors", "param.T"),
                           title="CAL Fig. 5 — degradation: timeouts as patience falls")
