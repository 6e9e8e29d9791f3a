"""fig08_switch — Negele et al. 2017, Fig. 8: context-switch time.

Workload `switch` (params T threads, K yields each). Threads (log) vs. wall ns per
switch; the y axis is logarithmic when the medians span a factor of 10 or more (a
kernel thread's yield and a user-level switch often do), else linear. One line per
backend (per P when several; per K when several), median with its interval over forks (hierarchical bootstrap) as a band, failed
points marked with ×; more than 8 lines: a panel per P, then per backend group. Writes figures/fig8_context_switch.{png,svg}.
"""

import coopbench as cr

WORKLOAD = "switch"
NAME = "fig8_context_switch"


def make(res, outdir):
    """make — the Fig. 8 item, or [] when the results hold no `switch` rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.T" not in df.columns:
        return []
    unit = next((u for u in df["unit"] if u), "ns/switch")
    fig, _ = cr.line_figure([{"df": df, "ylabel": f"time per switch [{unit}]"}], "param.T", xlabel="threads (T)",
                            suptitle="Fig. 8 — context switch")
    cr.add_caption(fig, res.context, df)
    return [{"title": "Fig. 8 — context-switch time (switch)", "files": cr.save_figure(fig, outdir, NAME),
             "text": "T threads each call yield K times in an otherwise empty loop; wall time / (T·K)."}]
