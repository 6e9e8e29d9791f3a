#!/usr/bin/env python3
"""plot.py — draw every figure and table of a coopbench results folder and write its report.md.

Usage: plot.py RESULTS_DIR [--modules DIR] [--out DIR]

Reads RESULTS_DIR/results.csv and context.json only (never console output). Imports
every module under scripts/figures/ (or --modules DIR) in name order — files starting
with "_" are skipped — and calls its make(res, RESULTS_DIR/"figures"). Each returns []
(no data for it) or items {"title", "files"} (figures) / {"title", "markdown"} (tables);
an item may add "text", a paragraph shown under its title (what is measured, how to read it).
Then writes RESULTS_DIR/report.md. It opens with the answer (coopbench.summary): per workload and P, the
fastest backend and each peer family's best variant (coop, Go, tokio, Boost.Fiber, OS threads, Boost.Asio,
epoll) with its ratio to the fastest and that ratio's interval (a closed-loop I/O workload: also its server
CPU per request), and the failed, refused and noisy counts; then the run's context,
every figure (relative links),
every table, a generic figure for each workload no module knows (value against its first
swept parameter, a line per backend), tables of every workload's medians with their intervals over forks (exact coverage by forks)
(backends as columns, the best value of each row at its P in bold; warm = timed iterations and cold =
iteration 0 of each fork; so workloads without a figure module are still shown), the noisy points (measured
on a busy machine, also marked in the tables), the failed points with their reasons and the refused ones
(status `refused`: not run, a limit of the machine known before the run; not failures).

Lines of results.csv that are not results (no status, point, backend or workload) are left
out and named (how many, which lines) on stderr and at the top of report.md.
--out DIR writes the figures and report.md into DIR instead of RESULTS_DIR (to re-plot a
folder that is not yours, such as results/reference/*).

A module that fails to import or raises is reported on stderr and in report.md; the
other modules still run, and plot.py exits 1. Exit 2: RESULTS_DIR is not a results
folder (no readable results.csv). Runs with /usr/bin/python3 (Debian's pandas and
matplotlib), Agg backend.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

import coopbench as cr  # noqa: E402
from coopbench import schema, summary  # noqa: E402

# Context keys in report.md: in harness/schema.json's order (others, e.g. an older folder's, after).
_CONTEXT_ORDER = [c["name"] for c in schema.CONTEXT]
_CONTEXT_NULL = {c["name"]: c["null"] for c in schema.CONTEXT if "null" in c}
_BULKY = ("sweep", "points", "caches", "plans")


def md_escape(s) -> str:
    """md_escape — a value made safe for one markdown table cell."""
    return str(s).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip()


def _flatten(prefix: str, v, out: dict) -> None:
    if isinstance(v, dict) and v and not any(b in prefix for b in _BULKY):
        for k in v:
            _flatten(f"{prefix}.{k}" if prefix else str(k), v[k], out)
    else:
        out[prefix] = v


def _fmt_ctx_value(v, key: str = "") -> str:
    if v is None:  # what schema.json says null means for this key (e.g. warmup: per point)
        return _CONTEXT_NULL.get(key, "null")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list) and all(not isinstance(x, (dict, list)) for x in v):
        return ", ".join(str(x) for x in v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(", ", ": "))
    return str(v)


def context_section(res) -> str:
    """context_section — the run's context as a key/value table; bulky values (sweep) in a details block."""
    ctx = res.context
    lines = ["## Context", ""]
    if not ctx:
        lines += ["_No context.json in this folder._", ""]
    else:
        flat: dict = {}
        for k in ctx:
            _flatten(str(k), ctx[k], flat)
        order = {k: i for i, k in enumerate(_CONTEXT_ORDER)}
        keys = sorted(flat, key=lambda k: (order.get(k.split(".")[0], len(order)), k))
        bulky = [k for k in keys if isinstance(flat[k], (dict, list)) and len(_fmt_ctx_value(flat[k])) > 160]
        lines += ["| key | value |", "|---|---|"]
        for k in keys:
            if k not in bulky:
                lines.append(f"| {md_escape(k)} | {md_escape(_fmt_ctx_value(flat[k], k))} |")
        lines.append("")
        for k in bulky:
            lines += [f"<details><summary>{k}</summary>", "", "```json", json.dumps(flat[k], indent=1), "```",
                      "", "</details>", ""]
    df = res.df
    n_points = df["point"].nunique()
    failed = df[~df["status"].isin(("ok", summary.REFUSED))]
    refused = df[df["status"] == summary.REFUSED]
    reps = int(df["repetition"].max()) + 1 if len(df) else 0
    iters = int(df["iteration"].max()) + 1 if len(df) else 0
    if df.empty:
        return "\n".join(lines + ["No rows: results.csv holds no result (a sweep that measured nothing yet).", ""])
    lines += [
        f"Rows: {len(df)} ({n_points} points, up to {reps} fork(s) × {iters} iteration(s)); "
        f"ok: {int((df['status'] == 'ok').sum())}, failed: {len(failed)}, refused: {len(refused)}.",
        "",
        "Backends: " + ", ".join(f"`{b}`" for b in sorted(df["backend"].unique())) + ".  ",
        *(["Hosts (a merged sweep; figures and tables show them apart): "
           + ", ".join(f"`{h}`" for h in sorted(df["host"].unique())) + ".  "]
          if "host" in df.columns and df["host"][df["host"] != ""].nunique() > 1 else []),
        "Workloads: " + ", ".join(f"`{w}`" for w in sorted(df["workload"].unique())) + ".  ",
        "Processors (P): " + ", ".join(cr.compact_number(p) for p in sorted(df["processors"].dropna().unique())) + ".",
        "",
    ]
    return "\n".join(lines)


def context_pairs(res) -> list:
    """context_pairs — the run's context as (key, text) pairs in schema.json's order (report.html's last section)."""
    flat: dict = {}
    for k in res.context or {}:
        _flatten(str(k), res.context[k], flat)
    order = {k: i for i, k in enumerate(_CONTEXT_ORDER)}
    keys = sorted(flat, key=lambda k: (order.get(k.split(".")[0], len(order)), k))
    return [(k, _fmt_ctx_value(flat[k], k)) for k in keys]


def _param_cols(df) -> list:
    cols = []
    for c in sorted(c for c in df.columns if c.startswith("param.")):
        v = df[c]
        if (v.notna() & (v.astype(str) != "")).any():
            cols.append(c)
    return cols


NOISY_MARK = "⚠ noisy"


def _cell(st, which: str, status: str = "ok", best: bool = False) -> str:
    """One table cell: "median (lo–hi)" (bold when the best of its row), "failed" or "refused" without an ok run,
    marked when the point was noisy."""
    n = st[f"n_{which}"]
    if which == "warm" and n and not st["has_warm"]:  # one cold run per fork: shown in the cold table only
        return "cold only" + (f" {NOISY_MARK}" if st["noisy"] else "")
    if n == 0:
        text = status if status != "ok" else ("failed" if st["n_failed"] else "–")
    else:
        forks = st["warm_forks"] if which == "warm" else n  # a cold sample has one value per fork
        text = cr.fmt_ci(st[f"{which}_median"], st[f"{which}_lo"], st[f"{which}_hi"], forks=forks)
        text = f"**{text}**" if best else text
    return text + (f" {NOISY_MARK}" if st["noisy"] else "")


def _best_columns(stats: dict, which: str, higher: bool, group_of) -> set:
    """The columns holding the best median of a row, one per group of columns (a P, a host): the lowest median,
    the highest for a rate (higher is better); none when only one column ran."""
    best = {}
    for col, (st, _) in stats.items():
        m = st[f"{which}_median"] if st[f"n_{which}"] and (which != "warm" or st["has_warm"]) else float("nan")
        if m != m:
            continue
        g = group_of(col)
        best.setdefault(g, []).append((m, col))
    out = set()
    for cands in best.values():
        if len(cands) > 1:
            top = max(m for m, _ in cands) if higher else min(m for m, _ in cands)
            out |= {c for m, c in cands if m == top}
    return out


def _workload_table(d, keys, col_order, which: str) -> list:
    rows = {}
    for key, g in d.groupby(keys + ["_col"], sort=False, dropna=False) if keys else d.groupby("_col", sort=False):
        key = key if isinstance(key, tuple) else (key,)
        rk, col = key[:-1], key[-1]
        # A cell holds one point (of one host, in a merged sweep): its statistics from its own rows.
        rows.setdefault(rk, {})[col] = (cr.point_stats(g).iloc[0], summary.point_status(g))
    higher = summary.higher_is_better(next((u for u in d["unit"] if u), ""))

    def group_of(col):  # the columns a best value is chosen among: one P (and host), every backend
        return col.split(" P=", 1)[1] if " P=" in col else col.split(" @", 1)[1] if " @" in col else ""

    def sort_key(rk):
        return tuple((0, float(v), "") if isinstance(v, (int, float)) and v == v else (1, 0.0, str(v)) for v in rk)

    header = [c[len("param."):] for c in keys] + col_order
    out = ["| " + " | ".join(md_escape(h) for h in header) + " |",
           "|" + "---|" * len(keys) + "---:|" * len(col_order)]
    for rk in sorted(rows, key=sort_key):
        cells = [cr.compact_number(v) if isinstance(v, (int, float)) and v == v else str(v) for v in rk]
        cells = [c if c != "nan" else "" for c in cells]
        best = _best_columns(rows[rk], which, higher, group_of)
        cells += [_cell(rows[rk][c][0], which, rows[rk][c][1], best=c in best) if c in rows[rk] else "–"
                  for c in col_order]
        out.append("| " + " | ".join(md_escape(c) for c in cells) + " |")
    return out + [""]


def _forks_line(df) -> str:
    """_forks_line — how many forks (fresh processes) the points had: the unit every interval counts."""
    f = df.groupby("point")["repetition"].nunique()
    lo, hi = (int(f.min()), int(f.max())) if len(f) else (0, 0)
    txt = f"Forks per point: {lo}" + (f"–{hi}" if hi != lo else "") + "."
    if lo <= 1:
        txt += (f" A point with 1 fork has no interval across processes: its range is the {cr.ONE_FORK.split(': ')[1]} "
                "(its iterations resampled), marked \"1 fork\" in its cell, never a confidence interval.")
    return txt


def median_tables(res) -> str:
    """median_tables — per workload: rows = parameter values, columns = backend (× P when several).

    Each cell is the median with its interval over forks, "median (lo–hi)", its exact coverage in the cell
    below 95 % ("median (lo–hi; 85 %)" from 4 forks; a point of 1 fork: "median (lo–hi; 1 fork: within one
    process)", no confidence interval), in bold when it is the best of
    its row among the backends at the same P (lowest; highest for a rate, a unit per second); a workload
    whose forks ran more than one iteration gets a warm table (timed iterations) and a cold
    table (iteration 0 of each fork); one whose forks ran once gets the cold table alone.
    A noisy point (any fork measured on a busy machine) is marked "⚠ noisy".
    """
    df = res.df
    out = ["## Median values", "",
           f"Each cell: {cr.METHOD}, written \"median (low–high)\". **Warm**: every timed (measure-phase) "
           "iteration of every fork of the point. **Cold**: iteration 0 of each fork, the first run of the "
           "workload in a fresh process (median and interval over the forks). **Bold**: the best value of the row "
           "at its P (the lowest; the highest for a rate, a unit per second). `failed`: no ok run (reasons below); "
           "`refused`: not run, a system limit known before the run (*Refused points*); –: not measured; "
           f"`{NOISY_MARK}`: a fork of the point ran while the machine was busy (see *Noisy points*).", "",
           _forks_line(df), ""]
    for w in sorted(df["workload"].unique()):
        d = df[df["workload"] == w].copy()
        params = _param_cols(d)
        multi_p = d["processors"].nunique() > 1
        d["_col"] = d["backend"] + (" P=" + d["processors"].map(cr.compact_number) if multi_p else "")
        if "host" in d.columns and d["host"][d["host"] != ""].nunique() > 1:
            d["_col"] = d["_col"] + " @" + d["host"]  # a merged sweep from several hosts
        col_order = sorted(d["_col"].unique(), key=lambda c: (c.split(" P=")[0], float(d[d["_col"] == c]["processors"].iloc[0])))
        if not multi_p:
            col_order = sorted(d["_col"].unique())
        units = sorted({u for u in d["unit"] if u})
        out += [f"### {w}" + (f" ({', '.join(units)})" if units else ""), ""]
        if bool((d["iteration"] > 0).any()):
            out += ["Warm (timed iterations of all forks):", ""] + _workload_table(d, params, col_order, "warm")
            out += ["Cold (iteration 0 of each fork):", ""] + _workload_table(d, params, col_order, "cold")
        else:
            out += ["Cold (one run per fork: iteration 0; no warm iterations measured):", ""]
            out += _workload_table(d, params, col_order, "cold")
    return "\n".join(out)


STEAL_SEEN = 0.05  # CPUs' worth of steal that a fork is said to have seen (a tick's rounding is already off)


def _steal_lines(df) -> list:
    """_steal_lines — how many forks saw VM steal time (`steal_cpus`) and the most any saw: the host slowing a
    fork while nothing here was runnable, which the noisy rule counts only inside other_cpus."""
    if "steal_cpus" not in df.columns or df["steal_cpus"].isna().all():
        return []
    forks = df.drop_duplicates(["point", "repetition"])
    st = forks["steal_cpus"].dropna()
    seen = st[st > STEAL_SEEN]
    if seen.empty:
        return [f"VM steal time (`steal_cpus`): none above {STEAL_SEEN} CPUs in any of {len(st)} forks.", ""]
    worst = forks.loc[seen.idxmax()]
    return [f"VM steal time (`steal_cpus`, CPUs' worth of time the host ran something else): {len(seen)} of {len(st)} "
            f"forks above {STEAL_SEEN}, the most {cr.fmt_value(seen.max())} (`{md_escape(worst['point'])}`, fork "
            f"{int(worst['repetition'])}). A fork that saw steal ran slower with nothing runnable here.", ""]


def noisy_section(res) -> str:
    """noisy_section — every noisy point: which forks, the other processes' CPU time and runnable threads (the
    rule), and the load average around them."""
    df = res.df
    out = ["## Noisy points", ""]
    n = df[df["noisy"]]
    if df.empty:
        return "\n".join(out + ["None (no rows).", ""])
    if n.empty:
        known = df["load_before"].notna().any()
        return "\n".join(out + ["None." if known else
                                "Not recorded (a folder from before the noise guard, schema version 1).", ""]
                         + _steal_lines(df))
    out += ["The harness marks a fork noisy when other processes had more runnable threads than the point left "
            "cores free, or used more CPU time than that (`other_cpus`: CPUs' worth of busy time, from /proc/stat, "
            "that the fork did not spend itself; docs/results-format.md, *Noise guard*); its values may be slower "
            "than on a quiet machine. The load average is recorded for the reader but is not part of the rule.", "",
            "Columns: *noisy forks*, how many of the point's forks were noisy, of how many, and which (fork "
            "indices from 0); then, for each noisy fork in that order, *other_cpus* (CPUs' worth of other processes' "
            "busy time during the fork), the other processes' runnable threads and the 1-minute load average, "
            "before → after the fork.", "",
            "| point | noisy forks (of the point's) | other_cpus | runnable before → after | load before → after |",
            "|---|---|---|---|---|"]
    forks_of = df.groupby("point")["repetition"].nunique()
    for point, g in n.groupby("point", sort=True):
        forks = g.drop_duplicates("repetition").sort_values("repetition")
        other = forks["other_cpus"] if "other_cpus" in forks else [float("nan")] * len(forks)
        which = ", ".join(str(int(r)) for r in forks["repetition"])
        out.append(f"| `{md_escape(point)}` {NOISY_MARK} | {len(forks)} of {int(forks_of[point])}: "
                   f"fork{'s' if len(forks) > 1 else ''} {which}"
                   + " | " + ", ".join(cr.fmt_value(o) for o in other)
                   + " | " + ", ".join(f"{cr.fmt_value(a)} → {cr.fmt_value(b)}"
                                       for a, b in zip(forks["runnable_before"], forks["runnable_after"]))
                   + " | " + ", ".join(f"{cr.fmt_value(a)} → {cr.fmt_value(b)}"
                                       for a, b in zip(forks["load_before"], forks["load_after"])) + " |")
    return "\n".join(out + [""] + _steal_lines(df))


def failed_section(res) -> str:
    """failed_section — every failed point: its failed repetitions and reason (one row per point and reason).
    A refused point (status refused: never run) is not failed: refused_section lists it."""
    f = res.df[~res.df["status"].isin(("ok", summary.REFUSED))].copy()
    out = ["## Failed points", ""]
    if f.empty:
        return "\n".join(out + ["None.", ""])
    f["reason"] = f["reason"].where(f["reason"] != "", "(no reason given)")
    out += ["| point | failed repetitions | reason |", "|---|---|---|"]
    for (_, _, point, reason), g in f.groupby(["workload", "backend", "point", "reason"], sort=True):
        reps = ", ".join(str(int(r)) for r in sorted(g["repetition"].dropna().unique()))
        out.append(f"| `{md_escape(point)}` | {reps} | {md_escape(reason)} |")
    out.append("")
    return "\n".join(out)


def refused_section(res) -> str:
    """refused_section — every refused point (status refused: the harness did not run it, a system limit known
    before the run, e.g. more threads than pid_max) with its reason: a result about the machine, not a failure."""
    df = res.df
    pts = summary.refused_points(df)
    out = ["## Refused points", ""]
    if not pts:
        return "\n".join(out + ["None.", ""])
    out += ["Not run: the harness refused them before they started, for a limit of this machine (the reason); "
            "they do not count as failed.", "", "| point | reason |", "|---|---|"]
    r = df[df["point"].isin(pts)]
    for point, g in r.groupby("point", sort=True):
        reasons = [x for x in g["reason"].astype(str).unique() if x] or ["(no reason given)"]
        out.append(f"| `{md_escape(point)}` | {md_escape('; '.join(reasons))} |")
    return "\n".join(out + [""])


def load_module(path: Path):
    """load_module — import one figure module from its file, under a private name."""
    spec = importlib.util.spec_from_file_location(f"coopbench_figure_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_modules(res, modules_dir: Path, figdir: Path):
    """run_modules — (items, errors): items as (module, item) in module order; errors as (module, text)."""
    items, errors = [], []
    for path in sorted(modules_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            mod = load_module(path)
            if not hasattr(mod, "make"):
                raise AttributeError(f"{path.name} defines no make(res, outdir)")
            res.asked.clear()
            got = mod.make(res, figdir)
            if got is None:
                got = []
            if not isinstance(got, list) or not all(
                    isinstance(i, dict) and "title" in i and ("files" in i or "markdown" in i) for i in got):
                raise TypeError(f"{path.name}: make() must return a list of items "
                                "{'title', 'files'} or {'title', 'markdown'}")
            # The workloads a module knows: those it asked res.workload() for, when it drew something.
            items += [(path.stem, dict(i, workloads=i.get("workloads", sorted(res.asked)))) for i in got]
        except Exception:  # noqa: BLE001 — one broken module must not stop the others
            tb = traceback.format_exc()
            print(f"plot.py: figure module {path.name} failed:\n{tb}", file=sys.stderr)
            errors.append((path.name, tb))
    return items, errors


def known_workloads(res, items) -> set:
    """known_workloads — the workloads some item shows: asked for through res.workload() by a module that drew
    something, named in an item's "workloads", or in a cell of a table item (a module reading res.df itself)."""
    import re

    def norm(s) -> str:
        return re.sub(r"[^a-z0-9]", "", str(s).lower())

    known = set()
    for _, i in items:
        known |= set(i.get("workloads", ()))
        if "markdown" in i:
            # A table row whose first cell is the workload's name, however spelled ("| Token Ring |", "| `news` |").
            firsts = {norm(ln.split("|")[1]) for ln in str(i["markdown"]).splitlines()
                      if ln.startswith("|") and ln.count("|") > 1}
            known |= {w for w in res.df["workload"].unique() if norm(w) and norm(w) in firsts}
    return known


def generic_items(res, figdir: Path, known: set) -> list:
    """generic_items — a figure for each workload no module knows: its value against its first swept
    (numeric, more than one value) parameter, a line per backend (per P when several), as Fig. 8 draws."""
    out, unswept = [], []
    for w in sorted(set(res.df["workload"].unique()) - known):
        df = res.df[res.df["workload"] == w]
        swept = [c for c in _param_cols(df) if pd_numeric(df[c]).nunique() > 1]
        title = f"{w} — a generic figure (no module in scripts/figures/ knows this workload)"
        if not swept:
            unswept.append(w)
            continue
        x = swept[0]
        unit = next((u for u in df["unit"] if u), "value")
        # x on a log axis unless the parameter takes 0 or a negative value (a channel's C=0).
        fig, _ = cr.line_figure([{"df": df, "ylabel": f"{w} [{unit}]"}], x, xlabel=x[len("param."):],
                                suptitle=f"{w} (generic figure)", xscale="auto")
        cr.add_caption(fig, res.context, df)
        files = cr.save_figure(fig, figdir, f"generic_{''.join(ch if ch.isalnum() or ch in '-_' else '_' for ch in w)}")
        out.append({"title": title, "files": files, "workloads": [w],
                    "text": f"No figure module draws `{w}`, so plot.py draws its value against its first swept "
                            f"parameter, {x[len('param.'):]}, a line per backend (and per P and other parameter "
                            "when they vary); write a module in scripts/figures/ for a better one."})
    if unswept:
        out.append({"title": "Workloads without a figure", "workloads": unswept,
                    "markdown": "No module in scripts/figures/ knows " + ", ".join(f"`{w}`" for w in unswept)
                                + ", and none of their numeric parameters takes more than one value, so plot.py "
                                  "draws no generic figure of them either: their medians are in *Median values*."})
    return out


def pd_numeric(s):
    """The numbers of a column (NaN where not a number)."""
    import pandas as pd

    return pd.to_numeric(s, errors="coerce")


def item_markdown(item: dict, results_dir: Path) -> str:
    """item_markdown — one figure (PNG shown, every file linked) or table item."""
    out = [f"### {item['title']}", ""]
    if item.get("text"):
        out += [str(item["text"]).rstrip(), ""]
    if "files" in item:
        files = [Path(f) for f in item["files"]]
        rel = [os.path.relpath(f.resolve(), results_dir.resolve()).replace(os.sep, "/") for f in files]
        for r in (r for r in rel if r.endswith(".png")):
            out += [f"![{item['title']}]({r})", ""]
        if any(not r.endswith(".png") for r in rel):
            out += ["Files: " + ", ".join(f"[{Path(r).name}]({r})" for r in rel), ""]
    if "markdown" in item:
        out += [str(item["markdown"]).rstrip(), ""]
    return "\n".join(out)


def write_report(res, items, errors, out_dir: Path | None = None) -> Path:
    """write_report — report.md (in out_dir, default RESULTS_DIR) from the context, items, medians, failures and errors."""
    d = Path(out_dir) if out_dir is not None else res.dir
    parts = [f"# coopbench results — {res.dir.resolve().name}", "", f"_{cr.caption(res.context)}_", ""]
    if errors:
        parts += [f"**Warning: {len(errors)} figure module(s) failed — see [Errors](#errors).**", ""]
    if res.dropped:
        lines = ", ".join(str(n) for n, _ in res.dropped)
        parts += [f"**Warning: {len(res.dropped)} row(s) of results.csv dropped** (line(s) {lines}): they are not "
                  "results (no status, point, backend or workload: a line cut short by a sweep still writing, or "
                  f"damage), e.g. `{md_escape(res.dropped[0][1])}`.", ""]
    parts.append(summary.summary_section(res.df, md_escape))
    parts.append(context_section(res))
    figs = [i for _, i in items if "files" in i]
    tables = [i for _, i in items if "files" not in i]
    parts += ["## Figures", ""]
    parts += [item_markdown(i, d) for i in figs] if figs else ["_No figure for these results._", ""]
    if tables:
        parts += ["## Tables", ""] + [item_markdown(i, d) for i in tables]
    parts.append(median_tables(res))
    parts.append(noisy_section(res))
    parts.append(failed_section(res))
    parts.append(refused_section(res))
    if errors:
        parts += ["## Errors", ""]
        for name, tb in errors:
            parts += [f"### {name}", "", "```", tb.rstrip(), "```", ""]
    out = d / "report.md"
    out.write_text("\n".join(parts).rstrip() + "\n")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Draw the figures and report.md of a coopbench results folder.")
    ap.add_argument("results_dir", type=Path)
    ap.add_argument("--modules", type=Path, default=SCRIPTS / "figures",
                    help="folder of figure/table modules (default: scripts/figures)")
    ap.add_argument("--out", type=Path, default=None,
                    help="write figures/ and report.md here (default: RESULTS_DIR itself)")
    a = ap.parse_args(argv)
    try:
        res = cr.load(a.results_dir)
    except cr.ResultsError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    if res.dropped:
        print(f"plot.py: {a.results_dir}: {res.dropped_note()}", file=sys.stderr)
    out = a.out if a.out is not None else a.results_dir
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    items, errors = run_modules(res, a.modules, figdir)
    try:
        items += [("generic", i) for i in generic_items(res, figdir, known_workloads(res, items))]
    except Exception:  # noqa: BLE001 — the report is still written
        tb = traceback.format_exc()
        print(f"plot.py: generic figures failed:\n{tb}", file=sys.stderr)
        errors.append(("generic figures (plot.py)", tb))
    report = write_report(res, items, errors, out)
    try:  # report.html beside report.md (scripts/report_html.py): the page a person opens in a browser
        import report_html
        page = report_html.write_html(res, items, errors, out, context=context_pairs(res))
        print(f"plot.py: wrote {page}")
    except Exception:  # noqa: BLE001 — report.md is written all the same
        tb = traceback.format_exc()
        print(f"plot.py: report.html failed:\n{tb}", file=sys.stderr)
        errors.append(("report.html (report_html.py)", tb))
    n_files = sum(len(i.get("files", [])) for _, i in items)
    print(f"plot.py: {len(items)} item(s), {n_files} file(s) in {figdir}; wrote {report}"
          + (f"; {len(errors)} module(s) FAILED" if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
