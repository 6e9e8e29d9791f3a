"""cal_fig4 — Marathe, Moir and Shavit 2006 (Composite Abortable Locks), Fig. 4: preemption.

Workload `abortable-lock` (plan fig4_preemption): patience 512 us, T from P to well past
P. Percentage of attempts that timed out against T, one line per lock, one panel per
backend and processor count (median over repetitions, interval over forks (hierarchical bootstrap) band).
"""

from __future__ import annotations

import coopbench as cr

cal = cr.sibling_module(__file__, "cal_fig3")

NAME = "cal_fig4_preemption"


def make(res, outdir):
    """make — Fig. 4 (% timed out against threads at patience 512 us), or [] without data."""
    df = cal.timeout_rows(res)
    if df.empty:
        return []
    df = df[df["param.patience_us"] == 512]
    if df.empty or df["param.T"].nunique() < 2:
        return []
    return cal.lock_panels(res, outdir, df, name=NAME, x="param.T", y="counter.timeouts_pct", xlabel="threads (T)",
                           ylabel="attempts timed out [%]", ylim=(-2, 102),
                           title="CAL Fig. 4 — preemption: timeouts at patience 512 µs as threads exceed processors")
