"""fig07_creation — Negele et al. 2017, Fig. 7: thread creation time per thread.

Workload `create` (param N = threads created). Log–log axes as in the paper: threads
vs. wall ns per thread; per backend (and per P when several are present) a warm line
(median of the timed iterations of all forks) and, in a panel of its own beside it, a cold
line (iteration 0 of each fork: the first creation in a fresh process, page faults
included), each with its interval over forks (hierarchical bootstrap) as a band; a folder with one run per fork
has the cold panel alone. More than 8 lines: a panel per P, then per backend group. Failed
points (e.g. a backend that cannot create 100k threads) marked with ×. Writes
figures/fig7_thread_creation.{png,svg}.
"""

import coopbench as cr

WORKLOAD = "create"
NAME = "fig7_thread_creation"


def make(res, outdir):
    """make — the Fig. 7 item, or [] when the results hold no `create` rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.N" not in df.columns:
        return []
    unit = next((u for u in df["unit"] if u), "ns/thread")
    fig, _ = cr.line_figure([{"df": df, "ylabel": f"time per thread [{unit}]", "yscale": "log"}], "param.N",
                            xlabel="threads created (N)", suptitle="Fig. 7 — thread creation", cold=True)
    cr.add_caption(fig, res.context, df, cold=True)
    return [{"title": "Fig. 7 — thread creation time (create)", "files": cr.save_figure(fig, outdir, NAME),
             "text": "N threads with an empty body are spawned and all joined; wall time per thread "
                     "(spawn + first schedule + exit + join). Cold: the first run in a fresh process (iteration 0 "
                     "of each fork); warm: the timed iterations after it. × marks an N at which a backend could not "
                     "create the threads (reason in *Failed points*)."}]
