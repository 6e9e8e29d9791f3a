"""quirk_ddb — Quirk 2008, Figs. 7-10: ddb's distribution of work, migrations, utilisation.

Workload `ddb` (variant units: lock-free OwnerQueue units on coop; counters per processor
and per unit) and `ddb-mutex` (variant mutex; only time and CPU utilisation exist there).
  Fig. 7  operations run by each processor (bars; one group per P, per backend)
  Fig. 8  migrations per 10^6 operations against P (units that ran on another processor
          than the time before: the coop global queue has no stealing, so every
          migration is a unit picked up by another processor), all units and the hot
          server
  Fig. 9  migrations of each server unit and of the clients together, at the largest P
  Fig. 10 utilisation against P: carriers' busy share (units) and process CPU time /
          (time x P) (both variants)
"""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import pandas as pd

import coopbench as cr

NAME = "quirk_fig7_10_ddb"


def _styles(entries):
    """(handles, labels) of black lines in the given styles: a panel's legend of what each line style means."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="black", linestyle=ls) for ls, _ in entries], [lab for _, lab in entries]


def make(res, outdir):
    """make — the ddb figure and a table, or [] without ddb rows."""
    units = res.workload("ddb")
    mutex = res.workload("ddb-mutex")
    if units.empty and mutex.empty:
        return []
    items = []
    fig, axes = plt.subplots(2, 2, figsize=(cr.FIG_WIDTH, 6.8), squeeze=False)
    ax7, ax8, ax9, ax10 = axes[0][0], axes[0][1], axes[1][0], axes[1][1]
    u = cr.ok_rows(units) if not units.empty else units
    if not u.empty:
        u = u.copy()
        u["processors"] = pd.to_numeric(u["processors"], errors="coerce")
        med = u.groupby(["backend", "processors"]).median(numeric_only=True).reset_index()
        # Fig. 7
        pcols = sorted([c for c in med.columns if re.fullmatch(r"counter\.ops_p\d+", c)],
                       key=lambda c: int(c.split("ops_p")[1]))
        x = 0
        ticks, labels = [], []
        for _, r in med.iterrows():
            for i, c in enumerate(pcols[:int(r["processors"])]):
                # align="edge": the group's bars fill [x, x + 0.8], centred on its tick at x + 0.4 (centred
                # bars sat half a bar left of their label)
                ax7.bar(x + i * 0.8 / max(1, r["processors"]), r[c], width=0.8 / max(1, r["processors"]), align="edge",
                        color=plt.cm.tab10(i % 10), label=f"processor {i}" if x == 0 or i >= x else None)
            ticks.append(x + 0.4)
            labels.append(f"{r['backend']} P={int(r['processors'])}")
            x += 1
        ax7.set_xticks(ticks)
        # Slanted, one line each: side by side the "backend P=n" labels overprinted from three backends on.
        ax7.set_xticklabels(labels, fontsize=7, rotation=60, ha="right", rotation_mode="anchor")
        ax7.set_ylabel("operations run")
        ax7.set_title("Fig. 7: operations per processor (units)", fontsize=9)
        handles, lbls = ax7.get_legend_handles_labels()
        uniq = dict(zip(lbls, handles))
        # Room above the tallest bar for the legend in one row (in a corner it overprinted a bar).
        top = max((b.get_height() for b in ax7.patches), default=0.0)
        if top > 0:
            ax7.set_ylim(0, top * 1.3)
        ax7.legend(uniq.values(), uniq.keys(), fontsize=7, frameon=False, loc="upper center",
                   ncol=max(1, min(len(uniq), 4)))
        # Fig. 8
        for backend, g in med.groupby("backend"):
            st = cr.backend_style(backend)
            ax8.plot(g["processors"], g["counter.migrations_per_1e6"], label=backend, **st)
            st2 = dict(st)
            st2["linestyle"] = "--"
            ax8.plot(g["processors"], g["counter.hot_migrations_per_1e6"], **st2)
        ax8.set_xlabel("processors P")
        ax8.set_ylabel("migrations per 10^6 operations")
        ax8.set_title("Fig. 8: migrations (units)", fontsize=9)
        ax8.legend(*_styles([("-", "all units"), ("--", "hot server")]), fontsize=7, frameon=False)
        ax8.grid(True, alpha=0.3)
        # Fig. 9: one group of bars per unit (server s0.., the clients), a bar per backend in its colour, named in
        # the legend: short tick labels that never overprint, however many backends ran.
        top = med[med["processors"] == med["processors"].max()]
        scols = sorted([c for c in med.columns if re.fullmatch(r"counter\.migrations_s\d+", c)],
                       key=lambda c: int(c.split("migrations_s")[1]))
        names = [c.split("migrations_")[1] for c in scols] + ["clients"]  # s0, s1, ...
        backends = list(top["backend"])
        width = 0.8 / max(1, len(backends))
        for j, (_, r) in enumerate(top.iterrows()):
            vals = [r[c] for c in scols] + [r.get("counter.migrations_clients", float("nan"))]
            ax9.bar([i - 0.4 + (j + 0.5) * width for i in range(len(names))], vals, width=width,
                    color=cr.backend_style(r["backend"], backends).get("color"))
        ax9.set_xticks(range(len(names)))
        ax9.set_xticklabels(names, fontsize=7)
        ax9.set_xlabel("server units s0, s1, ... and the clients")
        ax9.set_ylabel("migrations")
        ax9.set_title(f"Fig. 9: migrations per unit at P={int(med['processors'].max())} (units)", fontsize=9)
        # Fig. 10 (units part)
        for backend, g in med.groupby("backend"):
            ax10.plot(g["processors"], g["counter.utilisation"], **cr.backend_style(backend))
            st = dict(cr.backend_style(backend))
            st["linestyle"] = ":"
            ax10.plot(g["processors"], g["counter.cpu_util"], **st)
    named = set(u["backend"]) if not u.empty else set()
    m = cr.ok_rows(mutex) if not mutex.empty else mutex
    if not m.empty:
        m = m.copy()
        m["processors"] = pd.to_numeric(m["processors"], errors="coerce")
        mm = m.groupby(["backend", "processors"]).median(numeric_only=True).reset_index()
        for backend, g in mm.groupby("backend"):
            st = dict(cr.backend_style(backend))
            st["linestyle"] = "--"
            # Named in the legend unless its units line already named it (in Fig. 8).
            ax10.plot(g["processors"], g["counter.cpu_util"], label=None if backend in named else backend, **st)
    ax10.set_xlabel("processors P")
    ax10.set_ylabel("utilisation")
    ax10.set_ylim(0, 1.05)
    ax10.set_title("Fig. 10: CPU utilisation", fontsize=9)
    if ax10.get_lines():  # the line styles only: the backends' colours are in the figure's legend
        ax10.legend(*_styles([("-", "units: carriers busy"), (":", "units: CPU time"), ("--", "ddb-mutex: CPU time")]),
                    fontsize=6, frameon=False, loc="lower left")
    ax10.grid(True, alpha=0.3)
    for ax in (ax7, ax8, ax9, ax10):
        if not ax.has_data():  # no rows for this panel (ddb-mutex alone has no per-unit counters): say so
            ax.set_xticks([])
            ax.set_yticks([])
            ax.text(0.5, 0.5, "no ddb (units) rows" if ax is not ax10 else "no rows", transform=ax.transAxes,
                    ha="center", va="center", fontsize=8, color="#666666")
    fig.suptitle("ddb (Quirk 2008, Figs. 7-10):\n4 server units, 28 client units, one hot key", fontsize=10)
    cr.tight_layout(fig)
    # One legend for the backends (colour and marker, the same in the four panels), below them all: in a panel,
    # a line per backend and quantity covered half of it.
    handles, labels = cr.legend_entries([ax8, ax10])
    if handles:
        fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(len(labels), 4))
    cr.add_caption(fig, res.context, pd.concat([d for d in (units, mutex) if not d.empty]), band=False)
    items.append({"title": "Quirk Figs. 7-10 — ddb: operations per processor, migrations, utilisation",
                  "files": cr.save_figure(fig, outdir, NAME)})
    # Table: time per variant, backend, P; migrations for units.
    lines = ["| variant | backend | rounds | P | ms | ns/operation | migrations per 10^6 | hot server migr. per 10^6 "
             "| utilisation | CPU util. |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for wl, d in (("ddb (units)", u), ("ddb-mutex", m)):
        if d.empty:
            continue
        d = d.copy()
        d["processors"] = pd.to_numeric(d["processors"], errors="coerce")
        for key, g in d.groupby(["backend", "param.rounds", "processors"]):
            med = g.median(numeric_only=True)

            def f(c, fmt="{:.1f}"):
                return fmt.format(med[c]) if c in med and pd.notna(med[c]) else ""
            lines.append(f"| {wl} | {key[0]} | {int(key[1])} | {int(key[2])} | {med['value']:.2f} | "
                         f"{f('counter.ns_per_operation', '{:.0f}')} | {f('counter.migrations_per_1e6')} | "
                         f"{f('counter.hot_migrations_per_1e6')} | {f('counter.utilisation', '{:.2f}')} | "
                         f"{f('counter.cpu_util', '{:.2f}')} |")
    items.append({"title": "ddb — medians per variant", "markdown": "\n".join(lines)})
    return items
