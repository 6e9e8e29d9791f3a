"""coopbench.summary — report.md's first section: who wins where.

Per workload and processor count P: the fastest backend, and each peer family's best
variant (coopbench.families: coop, Go, tokio, Boost.Fiber, OS threads, then any other
backend as a family of its own) with its ratio to the fastest and that ratio's interval
(coopbench.stats.ratio_ci); then how many points failed, were refused, were noisy.

At one point (a workload, its parameters, P) the ratio of a backend is "how many times
worse than the fastest": value / fastest value for a time (lower is better), fastest value
/ value for a rate (a unit per second: higher is better), so 1.00× is the fastest and 2×
is twice as slow either way. Over the points of a workload at one P (its parameter values)
a cell shows the geometric mean of the per-point ratios, and as its interval the geometric
means of the per-point interval ends (every per-point ratio inside its interval puts the
geometric mean inside that one). The fastest backend of a row is the one fastest at most of
its points (ties: the lower geometric mean of its ratios).

A closed-loop I/O workload (a rate whose rows carry the load generator's counter
server_cpu_us_per_request: echo, http-hello, rpc, churn; docs/io-workloads.md) gets a second row,
"<workload>: server CPU per request" (µs/request; churn's per connection; lower is better): where the load generator's core
bounds the rate (client_bound), every server shows the client's rate, and the servers differ only in
what each request cost them.

A point is refused when every row of it has status `refused` (a system limit known before
it ran: the harness did not start it); failed when it has a row that is neither ok nor
refused.
"""

from __future__ import annotations

import math

import pandas as pd

from .families import family_label, family_of, family_rank
from .stats import METHOD, _ratio_mark, fmt_ratio, n_forks, ratio_ci, sample  # _ratio_mark: fmt_ratio's own words
from .style import compact_number

REFUSED = "refused"


def higher_is_better(unit) -> bool:
    """higher_is_better — True for a rate (a unit per second, e.g. "acquisitions/s"), False for a time or size."""
    u = str(unit or "").strip().lower()
    return u.endswith("/s") or u.endswith("/sec") or u.endswith("per second")


def point_status(g: pd.DataFrame) -> str:
    """point_status — "ok" (some ok row), "refused" (every row refused) or "failed" (no ok row, not all refused)."""
    st = g["status"]
    if bool((st == "ok").any()):
        return "ok"
    if len(st) and bool((st == REFUSED).all()):
        return REFUSED
    return "failed"


def failed_points(df: pd.DataFrame) -> list:
    """failed_points — the points with a row that is neither ok nor refused (a fork that failed), sorted."""
    return sorted(df[~df["status"].isin(("ok", REFUSED))]["point"].unique())


def refused_points(df: pd.DataFrame) -> list:
    """refused_points — the points whose rows are all refused (never started: a system limit), sorted."""
    r = df.groupby("point")["status"].agg(lambda s: bool((s == REFUSED).all()))
    return sorted(r[r].index)


def _param_key(df: pd.DataFrame) -> pd.Series:
    """The point's parameter values, P and backend left out: "K=2000/T=10" (from the param.* columns: a point id
    cannot be split, a backend's name may hold a "/")."""
    cols = sorted(c for c in df.columns if c.startswith("param.")
                  and (df[c].notna() & (df[c].astype(str) != "")).any())
    if not cols:
        return pd.Series("", index=df.index)
    text = {c: df[c].map(lambda v: "" if v != v or v == "" else f"{c[6:]}={v}") for c in cols}
    return pd.DataFrame(text, index=df.index).agg(lambda r: "/".join(x for x in r if x), axis=1)


def _geomean(xs) -> float:
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def _unit(d: pd.DataFrame) -> str:
    return next((u for u in d["unit"] if u), "")


IO_CPU = "counter.server_cpu_us_per_request"
IO_CPU_UNIT = "us/request"


def io_cpu_rows(df: pd.DataFrame) -> pd.DataFrame:
    """io_cpu_rows — the rows of each workload whose value is a rate and whose rows carry IO_CPU, again, with that
    counter as the value, the unit IO_CPU_UNIT and the workload "<name>: server CPU per request" (per what the
    rate counts: churn's "per connection", "us/connection") (failed and
    refused rows kept as they are: a point that did not run has no CPU either). Empty when there is none."""
    if IO_CPU not in df.columns or df.empty:
        return df.iloc[0:0]
    out = []
    for w, d in df.groupby("workload", sort=True):
        if not higher_is_better(_unit(d)) or not pd.to_numeric(d[IO_CPU], errors="coerce").notna().any():
            continue
        d = d.copy()
        # What the rate counts, singular: "requests/s" -> request, churn's "connections/s" -> connection.
        per = _unit(d).split("/")[0].strip().rstrip("s") or "request"
        d["value"] = pd.to_numeric(d[IO_CPU], errors="coerce").where(d["status"] == "ok")
        d["unit"] = IO_CPU_UNIT if per == "request" else f"us/{per}"
        d["workload"] = f"{w}: server CPU per {per}"
        # A point id names its workload: the copy's ids must not collide with the rate's.
        d["point"] = d["point"] + "#server_cpu"
        out.append(d)
    return pd.concat(out, ignore_index=True) if out else df.iloc[0:0]


def summary_rows(df: pd.DataFrame) -> tuple:
    """summary_rows — (rows, families): one row per (workload, P); families in column order.

    A row: {"workload", "P", "unit", "higher", "points", "fastest", "wins", "cells": {family: cell}, "alone"};
    a point counts as a win only where two or more backends have a value ("alone": the backends that ran by
    themselves when no point had two, so the row names them instead of a "fastest"),
    a cell {"ratio", "lo", "hi", "variants" (best variants, most frequent first), "ran", "failed",
    "refused", "points"}.
    """
    df = pd.concat([df, io_cpu_rows(df)], ignore_index=True)
    df["_pkey"] = _param_key(df)
    df["_family"] = df["backend"].map(family_of)
    if "host" in df.columns and df["host"][df["host"] != ""].nunique() > 1:
        # A merged sweep from several hosts: a backend on each host is a contender of its own ("native @node07"),
        # never one sample pooled across machines.
        df["backend"] = df["backend"] + " @" + df["host"]
    family_of_backend = dict(zip(df["backend"], df["_family"]))
    families = sorted(df["_family"].unique(), key=family_rank)
    rows = []
    for w, dw in df.groupby("workload", sort=True):
        which = "warm" if bool((dw["iteration"] > 0).any()) else "cold"
        unit = _unit(dw)
        higher = higher_is_better(unit)
        for p, dp in dw.groupby("processors", sort=True):
            per_fam = {f: {"ratios": [], "variants": [], "forks": [], "failed": 0, "refused": 0} for f in families}
            wins: dict = {}
            alone: set = set()  # backends that were the only one with a value at some point
            ratios_of: dict = {}
            pkeys = sorted(dp["_pkey"].unique())
            for _, dk in dp.groupby("_pkey", sort=True):
                samples, status = {}, {}
                for b, g in dk.groupby("backend", sort=True):
                    status[b] = point_status(g)
                    s = sample(g, which)
                    if len(s):
                        samples[b] = s
                if not samples:
                    best_b = None
                else:
                    meds = {b: float(s.median()) for b, s in samples.items()}
                    best_b = (max if higher else min)(sorted(meds), key=lambda b: meds[b])
                    if len(samples) >= 2:  # a backend that ran alone at a point won nothing there
                        wins[best_b] = wins.get(best_b, 0) + 1
                    else:
                        alone.add(best_b)
                for f in families:
                    members = sorted(b for b in status if family_of_backend[b] == f)
                    if not members:
                        continue
                    ran = [b for b in members if b in samples]
                    if not ran:
                        if all(status[b] == REFUSED for b in members):
                            per_fam[f]["refused"] += 1
                        else:
                            per_fam[f]["failed"] += 1
                        continue
                    meds = {b: float(samples[b].median()) for b in ran}
                    v = (max if higher else min)(ran, key=lambda b: meds[b])
                    a, b_ = (samples[best_b], samples[v]) if not higher else (samples[v], samples[best_b])
                    r = ratio_ci(a, b_)
                    per_fam[f]["ratios"].append(r)
                    per_fam[f]["variants"].append(v)
                    per_fam[f]["forks"].append(min(n_forks(a), n_forks(b_)))
                fast = float(samples[best_b].median()) if best_b is not None else math.nan
                for b in samples:  # every backend's ratio of medians, to break ties between equally winning ones
                    m = float(samples[b].median())
                    ratios_of.setdefault(b, []).append((fast / m if higher else m / fast) if m > 0 and fast > 0
                                                       else math.nan)
            fastest = None
            if wins:
                fastest = min(wins, key=lambda b: (-wins[b], _geomean(ratios_of.get(b, [])), b))
            cells = {}
            for f in families:
                c = per_fam[f]
                rs = c["ratios"]
                counts = pd.Series(c["variants"]).value_counts(sort=False) if c["variants"] else pd.Series(dtype=int)
                variants = sorted(counts.index, key=lambda v: (-counts[v], v))
                cells[f] = {"ratio": _geomean([r[0] for r in rs]), "lo": _geomean([r[1] for r in rs]),
                            "hi": _geomean([r[2] for r in rs]), "variants": variants, "ran": len(rs),
                            "forks": min(c["forks"]) if c["forks"] else None,
                            "failed": c["failed"], "refused": c["refused"], "points": len(pkeys)}
            rows.append({"workload": w, "P": p, "unit": unit, "higher": higher, "points": len(pkeys),
                         "fastest": fastest, "wins": wins.get(fastest, 0), "cells": cells,
                         "alone": sorted(alone) if not wins else []})
    return rows, families


def row_forks(r: dict) -> tuple:
    """row_forks — (fewest, most) forks behind the cells of a summary row, (None, None) when no cell ran."""
    forks = [c["forks"] for c in r["cells"].values() if c.get("forks")]
    return (min(forks), max(forks)) if forks else (None, None)


def fork_mark(forks) -> str:
    """fork_mark — what a ratio's bracket is on `forks` forks a side (fmt_ratio's mark, without its "; "):
    "1 fork: within one process", "3 forks: not 95 %", "" from 4 forks (a 95 % interval)."""
    return _ratio_mark(forks)[2:]


def forks_text(r: dict) -> str:
    """forks_text — a summary row's forks column, said once for all its cells: "6", "3 forks: not 95 %",
    "1 fork: within one process" (the cells' brackets are no 95 % interval there); "1–3" when the cells differ
    (each cell then marks its own); "–" when none ran."""
    lo, hi = row_forks(r)
    if lo is None:
        return "–"
    return (fork_mark(lo) or str(lo)) if lo == hi else f"{lo}–{hi}"


def _cell_text(c: dict, marked: bool = True) -> str:
    """A cell's ratio, interval and variants; marked=False leaves out the 1-fork mark (the row's forks column says
    it once for every cell)."""
    parts = []
    if c["ran"]:
        names = ", ".join(c["variants"][:2]) + (", …" if len(c["variants"]) > 2 else "")
        parts.append(f"{fmt_ratio(c['ratio'], c['lo'], c['hi'], forks=c['forks'] if marked else None)} {names}")
    for k in ("failed", "refused"):
        if c[k]:
            parts.append(k if c[k] == c["points"] else f"{k} at {c[k]}")
    return "; ".join(parts) if parts else "–"


def summary_section(df: pd.DataFrame, escape=str) -> str:
    """summary_section — report.md's "Summary": who wins where, the failed, refused and noisy counts."""
    out = ["## Summary: who wins where", ""]
    if df.empty:
        return "\n".join(out + ["No rows: results.csv holds no result yet.", ""])
    rows, families = summary_rows(df)
    n_points = df["point"].nunique()
    failed, refused = failed_points(df), refused_points(df)
    noisy = df[df["noisy"]]["point"].nunique()
    out += [f"Per workload and processor count P: the backend fastest at most of its points, and each family's best "
            "variant (named) with its ratio to the fastest — its value over the fastest's for a time, the fastest's "
            "over its for a rate (a unit per second): **1.00× is the fastest, 2× twice as slow**. Over several "
            "points (parameter values) a cell is the geometric mean of the per-point ratios, with the geometric "
            f"means of the per-point interval ends ({METHOD}; the ratio's interval resamples both sides). "
            "*forks*: the forks behind the row's cells (the fewer of a ratio's two sides), said once for the row "
            "with what the brackets are then (1 fork: the variation within one process only, not an interval "
            "across processes; 2-3 forks: not 95 %); a range when the cells differ, each cell then saying its own. "
            "`failed`/`refused`: the family has no ok run there (*at k*: at k of the points); –: not measured.", ""]
    header = ["workload", "P", "points", "forks", "fastest (points won)"] + [family_label(f) for f in families]
    out += ["| " + " | ".join(header) + " |", "|---|---:|---:|---:|---|" + "---|" * len(families)]
    for r in rows:
        fastest = (f"**{r['fastest']}** ({r['wins']}/{r['points']})" if r["fastest"] else
                   f"only {', '.join(r['alone'])} ran (nothing to compare)" if r.get("alone") else "none ran")
        w = f"{r['workload']}" + (" (rate: higher is better)" if r["higher"] else "")
        lo, hi = row_forks(r)
        cells = [escape(w), compact_number(r["P"]), str(r["points"]), forks_text(r), escape(fastest)]
        cells += [escape(_cell_text(r["cells"][f], marked=lo != hi)) for f in families]
        out.append("| " + " | ".join(cells) + " |")
    out += ["",
            f"**Failed points: {len(failed)}** (a fork failed; reasons in *Failed points*). "
            f"**Refused points: {len(refused)}** (never started: a system limit known before the run, in *Refused "
            f"points*). **Noisy points: {noisy}** of {n_points} (measured while the machine was busy; *Noisy "
            "points*).", ""]
    return "\n".join(out)


__all__ = ["REFUSED", "IO_CPU", "IO_CPU_UNIT", "io_cpu_rows", "higher_is_better", "point_status", "failed_points", "refused_points", "summary_rows",
           "row_forks", "fork_mark", "forks_text", "summary_section"]
