"""fig07_creation — Negele et al. 2017, Fig. 7: thread creation time per thread.

Workload `create` (param N = threads created). Log–log axes as in the paper: threads
vs. wall ns per thread; one line per backend (and per P when several are present),
median over repetitions with a min–max band, failed points (e.g. a backend that cannot
create 100k threads) marked with ×. Writes figures/fig7_thread_creation.{png,svg}.
"""

import matplotlib.pyplot as plt

import coopbench_results as cr

WORKLOAD = "create"
NAME = "fig7_thread_creation"


def make(res, outdir):
    """make — the Fig. 7 item, or [] when the results hold no `create` rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.N" not in df.columns:
        return []
    unit = next((u for u in df["unit"] if u), "ns/thread")
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    cr.plot_lines(ax, df, "param.N", xlabel="threads created (N)", ylabel=f"time per thread [{unit}]",
                  yscale="log", title="Fig. 7 — thread creation")
    cr.add_caption(fig, res.context, df)
    return [{"title": "Fig. 7 — thread creation time (create)", "files": cr.save_figure(fig, outdir, NAME),
             "text": "N threads with an empty body are spawned and all joined; wall time per thread "
                     "(spawn + first schedule + exit + join). × marks an N at which a backend could not "
                     "create the threads (reason in *Failed points*)."}]
