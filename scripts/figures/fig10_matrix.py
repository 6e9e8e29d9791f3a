#!/usr/bin/env python3
"""fig10_matrix — Negele et al. 2017, Fig. 10: matrix multiplication.

Workload `matrix` (params N matrix size, M threads). Two panels against the number of
threads M (linear axis, as in the paper, 1 .. beyond the cores):
  (a) speedup over one thread: a backend's median time at M = 1 divided by its median
      at M (each backend against itself), with the ideal min(M, P) dashed;
  (b) absolute run time: the median in seconds, with its interval over forks (hierarchical bootstrap) as a band.
One line per backend (per N and per P when a run has several). Failed points are marked
with x at the bottom of the panel. Writes figures/fig10_matrix.{png,svg}.

As a plot.py module: make(res, outdir). Standalone:
    /usr/bin/python3 scripts/figures/fig10_matrix.py RESULTS_DIR [--out DIR]
Reads only results files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import coopbench as cr  # noqa: E402

WORKLOAD = "matrix"
NAME = "fig10_matrix"
X = "param.M"
P_LINESTYLES = ["-", "--", ":", "-."]  # a line style per processor count P, as coopbench.figure draws P
IDEAL_GREYS = ["#888888", "#444444", "#BBBBBB"]
VIA = "param.via"  # an app's variant (workloads/apps/via.hpp): Fig. 10 shows the paper's, via=monitor


def series(df: pd.DataFrame):
    """series — [(label, backend, processors, summary)] per line: summary per M with median, interval lo/hi, min/max (s)."""
    d = df.copy()
    d[X] = pd.to_numeric(d[X], errors="coerce")
    d = d[d[X].notna()]
    extra = []
    if "param.N" in d.columns and d["param.N"].nunique() > 1:
        extra.append("param.N")
    multi_p = d["processors"].nunique() > 1
    keys = ["backend"] + extra + (["processors"] if multi_p else [])
    out = []
    for key, g in d.groupby(keys[0] if len(keys) == 1 else keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        s = cr.summarize(g, X).sort_values(X)
        # value is in ms (the workload's unit); the figure shows seconds like the paper.
        for c in ("median", "lo", "hi", "min", "max"):
            s[c] = s[c] / 1e3
        label = " ".join([str(key[0])] + [f"N={int(v)}" for v in key[1:1 + len(extra)]]
                         + ([f"P={int(key[-1])}"] if multi_p else []))
        out.append((label, key[0], int(g["processors"].max()), s))
    return out


def make(res, outdir):
    """make — the Fig. 10 item, or [] when the results hold no `matrix` rows."""
    df = res.workload(WORKLOAD)
    if VIA in df.columns:  # the paper's program only (rows without a via are monitor rows)
        v = df[VIA].fillna("").astype(str).str.strip()
        df = df[v.isin(("", "monitor"))].drop(columns=[VIA])
    if df.empty or X not in df.columns:
        return []
    lines = series(df)
    if not lines:
        return []
    fig, (ax_a, ax_b) = plt.subplots(1, 2, figsize=(cr.FIG_WIDTH, 3.6))
    # Run times in the unit that gives them few digits (0.000175 s read as 175 µs).
    top = max((float(s["median"].max()) for *_, s in lines if (s["n_ok"] > 0).any()), default=1.0)
    scale, unit = (1e6, "µs") if top < 1e-3 else (1e3, "ms") if top < 1.0 else (1.0, "s")
    any_failed = False
    procs = set()
    all_procs = sorted({p for *_, p, _ in lines})
    for label, backend, p, s in lines:
        style = cr.backend_style(backend)
        if len(all_procs) > 1:  # P=1 and P=2 of one backend: its colour and marker, a line style per P
            style["linestyle"] = P_LINESTYLES[all_procs.index(p) % len(P_LINESTYLES)]
        procs.add(p)
        ok = s[s["n_ok"] > 0]
        bad = s[s["n_ok"] == 0]
        any_failed |= not bad.empty
        base = ok[ok[X] == ok[X].min()]
        if len(ok) and float(base[X].iloc[0]) == 1.0:
            ax_a.plot(ok[X], float(base["median"].iloc[0]) / ok["median"], label=label, markersize=5, **style)
        ax_b.plot(ok[X], ok["median"] * scale, label=label, markersize=5, **style)
        if (ok["hi"] > ok["lo"]).any():  # the median's interval over forks (hierarchical bootstrap) (coopbench.stats)
            ax_b.fill_between(ok[X], ok["lo"] * scale, ok["hi"] * scale, color=style["color"], alpha=0.18, linewidth=0)
        for ax in (ax_a, ax_b):
            if not bad.empty:
                ax.plot(bad[X], [0] * len(bad), linestyle="none", marker="x", markersize=10, markeredgewidth=2.2,
                        color=style["color"], clip_on=False)
    ms = sorted(pd.to_numeric(df[X], errors="coerce").dropna().unique())
    for i, p in enumerate(sorted(procs)):
        # Each P's ideal in its own grey and its P's line style (drawn alike, the two ideals were one line).
        ax_a.plot(ms, [min(m, p) for m in ms], color=IDEAL_GREYS[i % len(IDEAL_GREYS)],
                  linestyle=P_LINESTYLES[all_procs.index(p) % len(P_LINESTYLES)], linewidth=1.2,
                  label=f"ideal min(M, {p})")
    for ax, title, ylabel in ((ax_a, "(a) speedup over 1 thread", "speedup"),
                              (ax_b, "(b) absolute run time", f"time [{unit}]")):
        ax.set_xlabel("threads (M)")
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        if 0 < len(ms) <= 24:
            ax.set_xticks(ms)
        ax.grid(True, alpha=0.35)
    handles, labels = cr.legend_entries([ax_a, ax_b], failed=any_failed)
    n_vals = sorted(pd.to_numeric(df.get("param.N"), errors="coerce").dropna().unique())
    fig.suptitle("Fig. 10 — matrix multiplication" + (f" (N={', '.join(str(int(n)) for n in n_vals)})"
                                                       if n_vals else ""), fontsize=11)
    cr.tight_layout(fig)
    # The legend below both panels (beside them, the figure was 1,900 px wide).
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), fontsize=8, frameon=False,
               ncol=min(len(labels), 4))
    cr.add_caption(fig, res.context, df)
    return [{"title": "Fig. 10 — matrix multiplication: (a) speedup, (b) run time (matrix)",
             "files": cr.save_figure(fig, outdir, NAME)}]


def main(argv=None) -> int:
    def produce(res, out):
        items = make(res, out)
        return "", items[0]["files"] if items else []
    return cr.standalone_main(argv, __doc__, "fig10_matrix.py", produce, "no matrix rows in these results")


if __name__ == "__main__":
    sys.exit(main())
