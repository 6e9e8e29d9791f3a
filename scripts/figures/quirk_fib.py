"""quirk_fib — Quirk 2008, Figs. 4-6: fib's speedup, CPU time lost and CPU waste ratio.

Workloads `fib` (variant units: lock-free OwnerQueue units on coop, backend native) and
`fib-mutex` (variant mutex: thread per message, mutex+condition futures, every backend).
Per series (variant, backend, k, work): against processors P,
  Fig. 4  speedup     = time(P=1) / time(P)          (median over repetitions)
  Fig. 5  CPU lost    = cpu_s(P) - cpu_s(P=1)        [s]
  Fig. 6  waste ratio = cpu_s(P) / cpu_s(P=1)
and a table of the times with the units/mutex ratio per backend and P.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

import coopbench as cr

NAME = "quirk_fig4_6_fib"
WORKLOADS = {"fib": "units", "fib-mutex": "mutex"}


def _series(df):
    """One row per (variant, backend, k, work, P): medians of time and CPU, and the derived values."""
    g = (df.groupby(["workload", "backend", "param.k", "param.work", "processors"])
         [["value", "counter.cpu_s"]].median().reset_index())
    out = []
    for key, s in g.groupby(["workload", "backend", "param.k", "param.work"]):
        base = s[s["processors"] == 1]
        if base.empty:
            continue
        t1 = float(base["value"].iloc[0])
        c1 = float(base["counter.cpu_s"].iloc[0])
        s = s.sort_values("processors").copy()
        s["speedup"] = t1 / s["value"]
        s["cpu_lost"] = s["counter.cpu_s"] - c1
        s["waste"] = s["counter.cpu_s"] / c1 if c1 > 0 else float("nan")
        s["label"] = f"{key[0]} ({WORKLOADS[key[0]]}) {key[1]}, k={int(key[2])}"  # work: the figure's row
        out.append(s)
    return pd.concat(out) if out else pd.DataFrame()


def make(res, outdir):
    """make — the three fib figures and a table, or [] without fib rows."""
    frames = [res.workload(w) for w in WORKLOADS]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return []
    df = cr.ok_rows(pd.concat(frames))
    if df.empty or "counter.cpu_s" not in df.columns:
        return []
    for c in ("param.k", "param.work", "processors"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    items = []
    s = _series(df)
    if not s.empty:
        # A row of three panels (Figs. 4, 5, 6) per `work` value: drawn in one panel the work values of a backend
        # were lines alike (the same colour, marker and style) under a 27-entry legend.
        works = sorted(s["param.work"].unique())
        fig, axes = plt.subplots(len(works), 3, figsize=(cr.FIG_WIDTH, 2.5 * len(works) + 0.6), squeeze=False)
        ks = s.groupby(["workload", "backend"])["param.k"].unique()
        for row, work in zip(axes, works):
            sw = s[s["param.work"] == work]
            for ax, col, ylabel, title in (
                    (row[0], "speedup", "speedup over P=1", "Fig. 4: speedup"),
                    (row[1], "cpu_lost", "CPU time lost [s]\n(cpu(P) - cpu(1))", "Fig. 5: CPU time lost"),
                    (row[2], "waste", "CPU waste ratio\n(cpu(P) / cpu(1))", "Fig. 6: waste ratio")):
                for label, g in sw.groupby("label", sort=True):
                    wl, backend, k = g["workload"].iloc[0], g["backend"].iloc[0], g["param.k"].iloc[0]
                    style = dict(cr.backend_style(backend))
                    # units solid, the mutex baseline dashed; a second k of one variant and backend dotted
                    styles = ["--", ":"] if wl.endswith("-mutex") else ["-", "-."]
                    ki = list(sorted(ks[(wl, backend)])).index(k)
                    style["linestyle"] = styles[ki % 2]
                    ax.plot(g["processors"], g[col], label=label, **style)
                ax.set_xlabel("processors P", fontsize=8)
                ax.set_ylabel(ylabel, fontsize=8)
                ax.set_title(f"{title}, work={cr.compact_number(work)}", fontsize=9)
                ax.tick_params(labelsize=7)
                ax.grid(True, alpha=0.3)
            pmax = sw["processors"].max()
            row[0].plot([1, pmax], [1, pmax], color="grey", linewidth=0.8, alpha=0.5, label="linear")
        handles, labels = cr.legend_entries([a for r in axes for a in r])
        fig.suptitle("fib (Quirk 2008, Figs. 4-6): solid = units (lock-free OwnerQueue on coop), "
                     "dashed = mutex baseline;\na row per work value", fontsize=10)
        cr.tight_layout(fig)
        fig.legend(handles, labels, fontsize=7, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=2)
        cr.add_caption(fig, res.context, df, band=False)  # medians only, no interval bands
        items.append({"title": "Quirk Figs. 4-6 — fib: speedup, CPU time lost, waste ratio",
                      "files": cr.save_figure(fig, outdir, NAME)})
    # Table: time per variant, and units / mutex per backend, k, work, P.
    t = df.groupby(["workload", "backend", "param.k", "param.work", "processors"])["value"].median().reset_index()
    lines = ["| variant | backend | k | work | P | ms | ns/message |", "|---|---|---:|---:|---:|---:|---:|"]
    npm = (df.groupby(["workload", "backend", "param.k", "param.work", "processors"])["counter.ns_per_message"]
           .median().reset_index())
    for (_, r), (_, n) in zip(t.iterrows(), npm.iterrows()):
        lines.append(f"| {r['workload']} ({WORKLOADS[r['workload']]}) | {r['backend']} | {int(r['param.k'])} | "
                     f"{int(r['param.work'])} | {int(r['processors'])} | {r['value']:.3f} | "
                     f"{n['counter.ns_per_message']:.0f} |")
    items.append({"title": "fib — medians per variant", "markdown": "\n".join(lines)})
    return items
