"""io_idle — what a connection that does nothing costs (`echo-idle`; docs/io-workloads.md).

Two bar panels per P, a bar per backend (its colour, the interval of the median over forks as an error bar),
grouped by the number of idle connections: the server's resident memory per idle connection
(counter.rss_per_idle_kib, KiB; -1, a sample missing, is left out) and the p99 latency of the active
connections' open-loop load beside them (the value). Drawn only when the results hold `echo-idle` rows; a
folder without the RSS counter gets a note instead of that panel. Writes figures/io_echo_idle.{png,svg}.
"""

import math

import pandas as pd

import coopbench as cr

io = cr.sibling_module(__file__, "_io")

WORKLOAD = "echo-idle"
RSS = "counter.rss_per_idle_kib"


def _bars(ax, df, groups, backends, ylabel, title, log):
    """A bar per backend in each group of idle connections; the interval as an error bar; failed or refused
    points named on the axis instead of a bar."""
    width = 0.8 / max(1, len(backends))
    tops, lows = [], []
    for j, b in enumerate(backends):
        style = cr.backend_style(b, backends)
        for i, n in enumerate(groups):
            g = df[(df["backend"] == b) & (pd.to_numeric(df["param.idle"], errors="coerce") == n)]
            s = cr.warm_sample(g)
            s = s[s > 0] if log else s
            xpos = i + (j - (len(backends) - 1) / 2) * width
            if not len(s):
                if len(g):
                    ax.text(xpos, 0.02, "refused" if (g["status"] == "refused").all() else "failed", rotation=90,
                            ha="center", va="bottom", fontsize=6, color=style["color"], transform=ax.get_xaxis_transform())
                continue
            med, lo, hi = cr.median_ci(s)
            ax.bar([xpos], [med], width=width * 0.9, color=style["color"], label=b if i == 0 else "_" + b,
                   yerr=[[med - lo], [hi - med]] if hi > lo else None, capsize=2, ecolor="#333333")
            tops.append(hi)
            lows.append(med)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{cr.compact_number(n)} idle" for n in groups])
    if log and lows and max(tops) / min(lows) >= 10:
        ax.set_yscale("log")
        from matplotlib.ticker import FuncFormatter
        ax.yaxis.set_major_formatter(FuncFormatter(cr.compact_number))
        ax.set_ylim(10 ** math.floor(math.log10(min(lows))), 10 ** math.ceil(math.log10(max(tops))))
    ax.set_ylabel(ylabel + (" (log)" if ax.get_yscale() == "log" else ""))
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.35)


def make(res, outdir):
    """make — the echo-idle item, or [] when the results hold no echo-idle rows."""
    import matplotlib.pyplot as plt

    df = res.workload(WORKLOAD)
    if df.empty:
        return []
    title = f"{WORKLOAD} — memory per idle connection and the active ones' p99"
    groups = io.values_of(df, "param.idle")
    if not groups:
        return [io.skipped(title, ["param.idle"], WORKLOAD)]
    items = []
    metrics = []
    if io.has(df, RSS):
        rss = io.as_value(df, RSS)
        rss.loc[rss["value"] < 0, "value"] = float("nan")  # -1: a sample was missing (no measurement)
        metrics.append((rss, "RSS per idle connection [KiB]", "memory per idle connection", True))
    else:
        items.append(io.skipped(f"{WORKLOAD} — memory per idle connection", [RSS], WORKLOAD))
    metrics.append((df, "active connections' p99 [µs]", "p99 of the active connections", True))
    procs = io.values_of(df, "processors")
    backends = sorted(df["backend"].unique())
    fig, axes = plt.subplots(len(procs), len(metrics), figsize=(cr.FIG_WIDTH, 3.0 * len(procs) + 0.4), squeeze=False)
    for r, p in enumerate(procs):
        for c, (d, ylabel, what, log) in enumerate(metrics):
            _bars(axes[r][c], d[d["processors"] == p], groups, backends, ylabel, f"{what} · {io.pname(p)}", log)
    fig.suptitle(title, fontsize=11)
    cr.tight_layout(fig)
    handles, labels = [], []
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(labels), 4))
    items.insert(0, io.figure_item(
        res, outdir, df, fig, "io_echo_idle", title,
        "`idle` connections that never send are held open while the load generator offers echo-open's load on "
        "`connections` more. Left: what the server keeps resident for each idle connection "
        "(`rss_per_idle_kib`: its RSS once it held them all, less its RSS before, over `idle`) — a thread's "
        "stack, a goroutine's, a task's or an activity's, its buffers and poller registration; lower is "
        "better. Right: the active connections' p99 latency (µs) with the idle ones held. A bar is the median "
        "over forks, its error bar the interval (one run per fork: a fresh server, as memory a server freed is "
        "reused by its next connections).", [WORKLOAD], band=False))
    return items
