"""micro_share — the `share` workload: do compute-bound threads that never yield share the processors?

Workload `share` (workloads/micro/share.hpp; Negele et al. 2017, Sect. 3.1): T threads of pure
computation and a sleeper that thread 0 wakes every R units. Two panels from the counters:
the progress ratio when the first thread finishes (max/min progress over the T threads, 1 =
perfectly fair, W = the others had not started; log) and the wake-up-to-run latency of the
sleeper (median and maximum, µs; log). x: the threads T when T takes several values, else
the processors P. One line per backend, median with its interval over forks as a band (its coverage in the caption).
Writes figures/micro_share.{png,svg}.
"""

import coopbench as cr

WORKLOAD = "share"
NAME = "micro_share"


def _as_value(df, counter, x):
    """The rows with `value` replaced by a counter (the line helpers draw `value`); rows without it dropped. With P
    on the x axis (x "P"), P is copied to column P and `processors` made one value: the line helpers split lines by
    `processors`, which must not also be the x."""
    d = df.copy()
    d["value"] = d[counter] if counter in d else float("nan")
    if x == "P":
        d["P"] = d["processors"]
        d["processors"] = 0
    return d[d["value"].notna() | (d["status"] != "ok")]


def make(res, outdir):
    """make — the share item, or [] when the results hold no `share` rows with its counters."""
    df = res.workload(WORKLOAD)
    if df.empty or "counter.progress_ratio" not in df.columns:
        return []
    sweep_t = "param.T" in df and df["param.T"].nunique() > 1
    x, xlabel = ("param.T", "compute-bound threads (T)") if sweep_t else ("P", "processors (P)")
    panels = [{"title": "progress ratio when the first thread finishes",
               "df": _as_value(df, "counter.progress_ratio", x), "ylabel": "max / min progress (1 = fair)", "yscale": "log"}]
    if "counter.wake_p50_us" in df:
        panels.append({"title": "sleeper's wake-up to run, median", "df": _as_value(df, "counter.wake_p50_us", x),
                       "ylabel": "wake-up latency [µs]", "yscale": "log"})
    if "counter.wake_max_us" in df:
        panels.append({"title": "sleeper's wake-up to run, maximum", "df": _as_value(df, "counter.wake_max_us", x),
                       "ylabel": "wake-up latency [µs]", "yscale": "log"})
    fig, _ = cr.line_figure(panels, x, xlabel=xlabel, xscale="linear" if x == "P" else "log",
                            suptitle="share — compute-bound threads that never yield")
    cr.add_caption(fig, res.context, df)
    return [{"title": "share — progress ratio and wake-up latency of compute-bound threads",
             "files": cr.save_figure(fig, outdir, NAME),
             "text": "T threads compute W units each without a yield; thread 0 wakes a sleeper every R units. "
                     "**Progress ratio**: the most over the least progress among the T threads when the first "
                     "finishes — 1 when they share the processors fairly, W when one ran to completion before the "
                     "others started (a cooperative backend without preemption or compiler-inserted checks). "
                     "**Wake-up latency**: from thread 0's release to the sleeper running. Run time (ms) is in "
                     "*Median values*."}]
