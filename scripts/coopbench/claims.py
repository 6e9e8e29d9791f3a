"""coopbench.claims — the papers' claims (results/paper/claims-<paper>.json) checked against results.

Each claim names a quantity (workload, metric, the series that tells the compared things
apart — `backend`, `param.lock`, `param.guard` — and fixed parameters) and a rule with
arguments. `evaluate(claim, data)` computes, from the results only, a Verdict:

    holds                  the measured interval lies on the claim's side of its threshold
    does not hold          the interval lies on the other side (with one line of why)
    cannot be tested here  the claim needs more cores than the run had, the points are
                           missing or failed, only noisy forks measured them, or the
                           interval straddles the threshold (more repetitions would decide)

Statistics are the package's (coopbench.stats): medians with the 95 % interval of a
hierarchical bootstrap over forks, then iterations (median_ci), ratios and differences of
medians with theirs, each side resampled independently (ratio_ci, diff_ci). The fork (a
fresh process) is the unit of replication, so a verdict needs enough of them: a comparison
of two points MIN_FORKS_TWO (4) forks a side, a single point's interval, a correlation or a
share MIN_FORKS_ONE (6); fewer gives "cannot be tested here: N forks, need M" (why:
stats.FORKS_RULE). `anticorrelated` and `shares_match` get the same bootstrap (of ρ, of the
largest share difference) and `anticorrelated` also a permutation test; both are "cannot be
tested" when the interval reaches across the threshold. Forks marked noisy by the harness
(the machine was busy) are left out; a point with only noisy forks cannot be tested.

The rules (RULES; each is tested on hand-made tables where it holds and where it does not,
tests/scripts/test_claims.py):

    faster(a, b, over=X | at={..}, factor)     a better than b by more than `factor`
                                               (ratio of medians; lower or higher is better
                                               by the quantity's `better`), at every X
    comparable(a, b, tolerance)                median(a)/median(b) within [1/tol, tol]
    ratio_within(a, b, paper_ratio, factor)    median(a)/median(b) within [p/f, p*f]
    no_degradation(a, x, from, to, factor)     value at x=to at most factor * value at x=from
    fails_at(a, x, at)                         every run of a at x=at failed
    constant_beyond(a, x, from, tolerance)     every x >= from within tolerance of x=from
    trend(a, x, direction)                     value at the largest x above (up) / below
                                               (down) the value at the smallest x
    scales_linearly(a, x, up_to, efficiency)   speed-up t(1)/t(x) >= efficiency * min(x, P)
    scales_as(a, b, x, tolerance)              a's gain from smallest to largest x at least
                                               b's gain / tolerance
    value_within(a, at, low, high)             median interval inside [low, high]
    change(a, x, from, to, at_least|at_most)   value(to) - value(from) bounded
    degrades_suddenly(a, x, min_step)          as x decreases, some step adds >= min_step
    degrades_gracefully(a, x, max_step)        as x decreases, no step adds > max_step
    shares_match(a, per_processor, per_unit, tolerance)
                                               sorted shares of work per processor vs per
                                               unit (counter columns prefix0, prefix1, ...)
    anticorrelated(a, load, stolen)            Spearman correlation of per-unit load and
                                               per-unit steals below 0 (its bootstrap interval
                                               over forks below 0, permutation p < 0.05)

Argument values "cores" (the run's core count), "max" and "min" (the largest/smallest
value measured) are resolved against the data.
"""

from __future__ import annotations

import csv
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .stats import (MIN_FORKS_ONE, MIN_FORKS_TWO, diff_ci, fmt_ci, fmt_ratio, fmt_value, fork_labels, fork_shortfall,
                    forks_why, median_ci, n_forks, rank_corr_ci, rank_corr_perm_p, ratio_ci, with_forks)

ROOT = Path(__file__).resolve().parents[2]
PAPER_DIR = ROOT / "results" / "paper"
PAPERS = ("negele", "marathe", "quirk", "parasail")

HOLDS = "holds"
NOT = "does not hold"
CANNOT = "cannot be tested here"
STATUSES = (HOLDS, NOT, CANNOT)


class CannotTest(Exception):
    """CannotTest — a claim cannot be tested on these results (the message says why)."""


@dataclass
class Verdict:
    """Verdict — the outcome of one claim: status, what was measured (with interval), why."""

    claim: str
    status: str
    measured: str = ""
    why: str = ""
    details: list = field(default_factory=list)


# ----------------------------------------------------------------------------- claims files

def claims_path(paper: str) -> Path:
    return PAPER_DIR / f"claims-{paper}.json"


def load_claims(paper: str, path: Path | None = None) -> dict:
    """load_claims — the claims document of a paper, with Table 1's rows expanded into claims."""
    doc = json.loads(Path(path or claims_path(paper)).read_text())
    doc["claims"] = list(doc.get("claims", [])) + table1_claims(doc, Path(path or claims_path(paper)).parent)
    return doc


def read_table1(directory: Path = PAPER_DIR) -> list[dict]:
    """read_table1 — the rows of table1.csv (the paper's Table 1), '#' lines skipped."""
    with open(directory / "table1.csv", newline="") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def parse_params(s: str) -> dict:
    out = {}
    for kv in s.split(";"):
        if "=" in kv:
            k, v = kv.split("=", 1)
            out[k.strip()] = float(v) if re.fullmatch(r"-?[0-9.eE+]+", v.strip()) else v.strip()
    return out


def table1_claims(doc: dict, directory: Path) -> list[dict]:
    """table1_claims — one ratio_within claim per row of table1.csv (when the doc has a "table1" block)."""
    t = doc.get("table1")
    if not t:
        return []
    out = []
    for row in read_table1(directory):
        params = parse_params(row["params"])
        native, linux = float(row["native_ms"]), float(row["linux_ms"])
        out.append({
            "id": f"table1-row{row['row']}-{row['workload']}", "figure": "Table 1", "section": "6",
            "quote": t["quote"],
            "quantity": {"workload": row["workload"], "metric": "value", "better": "lower", "series": "backend",
                         "params": params},
            "rule": {"name": "ratio_within", "args": {"a": t["a"], "b": t["b"], "paper_ratio": round(native / linux, 3),
                                                       "factor": t["factor"]}},
            "needs": {"min_cores": 1, "note": f"{row['benchmark']} ({row['params']}): paper Native {native:g} ms, "
                                              f"Linux {linux:g} ms, Windows {float(row['windows_ms']):g} ms at 64 cores; "
                                              + t.get("note", "")},
            "paper_row": row,
        })
    return out


# ----------------------------------------------------------------------------- data access

@dataclass
class Data:
    """Data — the rows of one or more results folders, and the core count of the run."""

    df: pd.DataFrame
    cores: int
    context: dict = field(default_factory=dict)


def data_from(results_list) -> Data:
    """data_from — concatenate coopbench.load Results (one or more) into a Data."""
    results_list = list(results_list)
    # "folder": which results folder a row came from, so that two folders' forks of one point
    # stay two forks (coopbench.stats.fork_labels).
    df = (pd.concat([r.df.assign(folder=str(getattr(r, "dir", i))) for i, r in enumerate(results_list)],
                    ignore_index=True) if results_list else pd.DataFrame())
    ctx = results_list[0].context if results_list else {}
    # The processors the runs used (not the machine's cores: a 64-core host running -P 2 tests
    # nothing that needs 64); the context's core count only when there are no rows.
    if not df.empty:
        cores = int(df["processors"].max())
    else:
        cores = max([int(r.context.get("cores_available") or r.context.get("logical_cpus") or 0)
                     for r in results_list] + [0])
    return Data(df=df, cores=cores, context=ctx)


def _noisy(df: pd.DataFrame) -> pd.Series:
    """_noisy — the harness's noisy mark per row (False where a folder has none)."""
    if "noisy" not in df.columns:
        return pd.Series(False, index=df.index)
    return df["noisy"].fillna(False).astype(bool)


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _col(name: str) -> str:
    return name if name == "processors" or name.startswith("param.") else "param." + name


def _eq(series: pd.Series, value) -> pd.Series:
    v = _num(value)
    if isinstance(v, float):
        return pd.to_numeric(series, errors="coerce") == v
    return series.astype(str) == str(value)


class Ctx:
    """Ctx — one claim's view of the data: the quantity's rows, the series, the metric."""

    def __init__(self, claim: dict, data: Data, backends: dict):
        q = claim["quantity"]
        self.claim, self.data, self.q, self.backends = claim, data, q, backends
        self.metric = q.get("metric", "value")
        self.higher = q.get("better", "lower") == "higher"
        self.series = q.get("series", "backend")
        df = data.df
        if df.empty or "workload" not in df.columns or not (df["workload"] == q["workload"]).any():
            raise CannotTest(f"missing data: no {q['workload']} points in these results")
        df = df[df["workload"] == q["workload"]]
        if q.get("backend") and self.series != "backend":
            df = df[df["backend"] == q["backend"]]
        if self.series != "backend" and self.series not in df.columns:
            raise CannotTest(f"missing data: no {self.series} column")
        self.rows = df
        self.fixed = dict(q.get("params", {}))

    # the series value that a claim's name stands for ("Linux" -> pthreads; "Windows" -> none)
    def member(self, name: str) -> str:
        if name in self.backends:
            m = self.backends[name]
            if m is None:
                raise CannotTest(f"the paper's {name} has no counterpart here")
            return m
        return name

    def of(self, name: str) -> pd.DataFrame:
        m = self.member(name)
        g = self.rows[self.rows[self.series].astype(str) == m]
        if g.empty:
            raise CannotTest(f"missing data: no {m} points of {self.q['workload']}")
        for k, v in self.fixed.items():
            g = self._fix(g, k, v)
            if g.empty:
                raise CannotTest(f"missing data: no {m} point with {_fmt_fixed(k, v)}")
        return g

    def _fix(self, g: pd.DataFrame, k: str, v) -> pd.DataFrame:
        c = _col(k)
        if c not in g.columns:
            raise CannotTest(f"missing data: no parameter {k}")
        if isinstance(v, dict):  # a range: {"min": lo, "max": hi}, either bound optional
            x = pd.to_numeric(g[c], errors="coerce")
            return g[(x >= v.get("min", -math.inf)) & (x <= v.get("max", math.inf))]
        return g[_eq(g[c], self.resolve(g, k, v))]

    def resolve(self, g: pd.DataFrame, k: str, v):
        if v == "cores":
            return self.data.cores
        if isinstance(v, str) and v.startswith("cores+"):  # e.g. one thread more than processors
            return self.data.cores + int(v[len("cores+"):])
        if v in ("max", "min"):
            vals = pd.to_numeric(g[_col(k)], errors="coerce").dropna()
            if vals.empty:
                raise CannotTest(f"missing data: no values of {k}")
            return vals.max() if v == "max" else vals.min()
        return v

    def at(self, g: pd.DataFrame, at: dict | None) -> pd.DataFrame:
        for k, v in (at or {}).items():
            g = self._fix(g, k, v)
            if g.empty:
                raise CannotTest(f"missing data: no point with {k}={v}")
        return g

    def xs(self, g: pd.DataFrame, x: str) -> list:
        return sorted(pd.to_numeric(g[_col(x)], errors="coerce").dropna().unique().tolist())

    def top_p(self, *groups) -> int:
        """top_p — the largest processor count that every group has ok rows at."""
        sets = [set(g[g["status"] == "ok"]["processors"].astype(int)) for g in groups]
        common = set.intersection(*sets) if sets else set()
        if not common:
            raise CannotTest("missing data: no processor count where all compared series completed")
        return max(common)

    def sample(self, g: pd.DataFrame, what: str) -> pd.Series:
        """sample — the timed iterations (phase measure, status ok) of the non-noisy forks of g."""
        if self.metric not in g.columns:
            raise CannotTest(f"missing data: no {self.metric} in {what}")
        ok = g[(g["status"] == "ok") & (g["phase"] == "measure") & g[self.metric].notna()]
        clean = ok[~_noisy(ok)]
        if clean.empty:
            if not ok.empty:
                raise CannotTest(f"noisy points: {what} measured only by forks on a busy machine")
            bad = g[g["status"] != "ok"]
            reason = str(bad["reason"].iloc[0]) if len(bad) else "no rows"
            raise CannotTest(f"missing data: {what} has no ok run ({reason})")
        return with_forks(clean[self.metric], clean)

    def enough_forks(self, need: int, *samples) -> None:
        """enough_forks — raise CannotTest("N forks, need M") unless every sample has `need` forks (FORKS_RULE)."""
        short = fork_shortfall(need, *samples)
        if short:
            raise CannotTest(f"{short} ({forks_why(need)})")

    def failed(self, g: pd.DataFrame) -> bool:
        return len(g) > 0 and (g["status"] != "ok").all()


# ----------------------------------------------------------------------------- decisions

def _side(lo: float, hi: float, threshold: float, above: bool):
    """_side — HOLDS when [lo, hi] is above (below) threshold, NOT when on the other side, None when it straddles."""
    if above:
        return HOLDS if lo > threshold else (NOT if hi <= threshold else None)
    return HOLDS if hi < threshold else (NOT if lo >= threshold else None)


def _inside(lo: float, hi: float, low: float, high: float):
    """_inside — HOLDS when [lo, hi] lies in [low, high], NOT when disjoint from it, None otherwise."""
    if low <= lo and hi <= high:
        return HOLDS
    if hi < low or lo > high:
        return NOT
    return None


def _combine(parts: list, measured: str, claim_id: str) -> Verdict:
    """_combine — NOT if any part does not hold, HOLDS if all hold, else cannot test (straddling)."""
    bad = [p for p in parts if p[0] == NOT]
    if bad:
        tail = f" ({len(bad)} of {len(parts)} points fail)" if len(parts) > 1 else ""
        return Verdict(claim_id, NOT, measured, bad[0][1] + tail)
    cannot = [p for p in parts if p[0] == CANNOT]
    if cannot:
        return Verdict(claim_id, CANNOT, measured, cannot[0][1])
    und = [p for p in parts if p[0] is None]
    if und:
        return Verdict(claim_id, CANNOT, measured, f"interval straddles the threshold ({und[0][1]}): more repetitions needed")
    return Verdict(claim_id, HOLDS, measured, "")


def _fmt_fixed(k: str, v) -> str:
    if isinstance(v, dict):
        return " and ".join(f"{k}{'≥' if b == 'min' else '≤'}{fmt_value(x)}" for b, x in v.items())
    return f"{k}={v}"


def _fmt_ci(m, lo, hi) -> str:
    return f"{fmt_value(m)} ({fmt_value(lo)}–{fmt_value(hi)})" if lo != hi else fmt_value(m)


def _xlabel(x, v) -> str:
    return f"{x.replace('param.', '')}={fmt_value(v)}"


# ----------------------------------------------------------------------------- rules

def rule_faster(ctx: Ctx, a, b, over=None, at=None, factor=1.0):
    ga, gb = ctx.at(ctx.of(a), at), ctx.at(ctx.of(b), at)
    p = ctx.top_p(ga, gb) if not (at and "processors" in at) else None
    if p is not None:
        ga, gb = ga[ga["processors"] == p], gb[gb["processors"] == p]
    points = [None]
    if over:
        points = sorted(set(ctx.xs(ga, over)) | set(ctx.xs(gb, over)))
    parts, shown = [], []
    ma, mb = ctx.member(a), ctx.member(b)
    for v in points:
        pa = ga if v is None else ga[_eq(ga[_col(over)], v)]
        pb = gb if v is None else gb[_eq(gb[_col(over)], v)]
        lab = "" if v is None else _xlabel(over, v) + ": "
        if pa.empty or pb.empty:
            continue
        if ctx.failed(pb) and not ctx.failed(pa):
            parts.append((HOLDS, ""))
            shown.append(f"{lab}{mb} failed")
            continue
        if ctx.failed(pa):
            parts.append((NOT, f"{lab}{ma} failed ({pa['reason'].iloc[0]})"))
            shown.append(f"{lab}{ma} failed")
            continue
        try:
            sa, sb = ctx.sample(pa, f"{ma} {lab}".strip()), ctx.sample(pb, f"{mb} {lab}".strip())
        except CannotTest as e:  # this point only: the others may still refute the claim
            parts.append((CANNOT, str(e)))
            shown.append(f"{lab}–")
            continue
        r, lo, hi = ratio_ci(sb, sa) if ctx.higher else ratio_ci(sa, sb)
        # r = how many times better a is than b (b's time / a's time, or a's rate / b's rate)
        if r != r:
            parts.append((CANNOT, f"{lab}the ratio is undefined (a median is 0: {ma} {fmt_value(sa.median())}, "
                                  f"{mb} {fmt_value(sb.median())})"))
            shown.append(f"{lab}{ma} {fmt_value(sa.median())}, {mb} {fmt_value(sb.median())}")
            continue
        k = min(n_forks(sa), n_forks(sb))
        shown.append(f"{lab}{fmt_ratio(r, lo, hi, k)}" + (f" ({k} forks)" if 1 < k < MIN_FORKS_TWO else ""))
        short = fork_shortfall(MIN_FORKS_TWO, sa, sb)
        if short:  # shown, but too few processes to call it
            parts.append((CANNOT, f"{lab}{short} ({forks_why(MIN_FORKS_TWO)})"))
            continue
        d = _side(lo, hi, factor, above=True)
        parts.append((d, f"{lab}{ma} is {fmt_ratio(r, lo, hi)} as good as {mb}, needs > {factor:g}×"))
    if not parts:
        raise CannotTest(f"missing data: no point that both {ma} and {mb} ran")
    fixed = [_xlabel(k, ctx.resolve(ga, k, v)) for k, v in (at or {}).items() if k != "processors"]
    where = " at " + ", ".join(fixed + ([f"P={p}"] if p is not None else [f"P={at['processors']}"]))
    return _combine(parts, f"{ma} vs {mb}{where}: " + "; ".join(shown), ctx.claim["id"])


def _two(ctx: Ctx, a, b, at=None):
    ga, gb = ctx.at(ctx.of(a), at), ctx.at(ctx.of(b), at)
    p = ctx.top_p(ga, gb)
    ga, gb = ga[ga["processors"] == p], gb[gb["processors"] == p]
    ma, mb = ctx.member(a), ctx.member(b)
    sa, sb = ctx.sample(ga, ma), ctx.sample(gb, mb)
    r, lo, hi = ratio_ci(sb, sa)  # median(a) / median(b)
    if r != r:
        raise CannotTest(f"the ratio is undefined (a median is 0: {ma} {fmt_value(sa.median())}, {mb} {fmt_value(sb.median())})")
    short = fork_shortfall(MIN_FORKS_TWO, sa, sb)
    return ma, mb, p, r, lo, hi, (f"{short} ({forks_why(MIN_FORKS_TWO)})" if short else "")


def rule_comparable(ctx: Ctx, a, b, tolerance=1.25, at=None):
    ma, mb, p, r, lo, hi, short = _two(ctx, a, b, at)
    d = _inside(lo, hi, 1 / tolerance, tolerance)
    m = f"{ma} / {mb} at P={p}: {fmt_ratio(r, lo, hi)}"
    if short:
        return Verdict(ctx.claim["id"], CANNOT, m, short)
    return _combine([(d, f"{fmt_ratio(r, lo, hi)} vs [{1 / tolerance:.2f}, {tolerance:.2f}]")], m, ctx.claim["id"])


def rule_ratio_within(ctx: Ctx, a, b, paper_ratio, factor=2.0, at=None):
    ma, mb, p, r, lo, hi, short = _two(ctx, a, b, at)
    d = _inside(lo, hi, paper_ratio / factor, paper_ratio * factor)
    m = f"{ma} / {mb} at P={p}: {fmt_ratio(r, lo, hi)}; paper {paper_ratio:.3g}×"
    if short:
        return Verdict(ctx.claim["id"], CANNOT, m, short)
    why = f"ours {fmt_ratio(r, lo, hi)} is outside [{paper_ratio / factor:.3g}, {paper_ratio * factor:.3g}] (paper {paper_ratio:.3g}× ± {factor:g}×)"
    return _combine([(d, why)], m, ctx.claim["id"])


def _at_x(ctx: Ctx, g: pd.DataFrame, x: str, v):
    return g[_eq(g[_col(x)], v)] if x != "processors" else g[g["processors"] == int(v)]


def _series_at_p(ctx: Ctx, a, at=None, x=None):
    g = ctx.at(ctx.of(a), at)
    if x != "processors":
        p = ctx.top_p(g)
        g = g[g["processors"] == p]
    return g


def rule_no_degradation(ctx: Ctx, a, x, to, factor=2.0, **kw):
    lo_x = kw["from"]
    g = _series_at_p(ctx, a, kw.get("at"), x)
    ma = ctx.member(a)
    xs = ctx.xs(g, x)
    if float(to) not in xs:
        raise CannotTest(f"missing data: no {ma} point at {_xlabel(x, to)} (largest measured: {_xlabel(x, max(xs))})")
    g0, g1 = _at_x(ctx, g, x, lo_x), _at_x(ctx, g, x, to)
    if ctx.failed(g1):
        return Verdict(ctx.claim["id"], NOT, f"{ma} failed at {_xlabel(x, to)}", f"{ma} failed at {_xlabel(x, to)}: {g1['reason'].iloc[0]}")
    s0, s1 = ctx.sample(g0, f"{ma} {_xlabel(x, lo_x)}"), ctx.sample(g1, f"{ma} {_xlabel(x, to)}")
    r, lo, hi = ratio_ci(s0, s1)
    d = _side(lo, hi, factor, above=False)
    m = f"{ma}: value at {_xlabel(x, to)} / at {_xlabel(x, lo_x)} = {fmt_ratio(r, lo, hi)}"
    if _short(s0, s1):
        return Verdict(ctx.claim["id"], CANNOT, m, _short(s0, s1))
    return _combine([(d, f"{fmt_ratio(r, lo, hi)} exceeds {factor:g}×")], m, ctx.claim["id"])


def rule_fails_at(ctx: Ctx, a, x, at):
    g = _at_x(ctx, ctx.of(a), x, at)
    ma = ctx.member(a)
    if g.empty:
        raise CannotTest(f"missing data: no {ma} point at {_xlabel(x, at)}")
    if ctx.failed(g):
        return Verdict(ctx.claim["id"], HOLDS, f"{ma} at {_xlabel(x, at)}: failed ({g['reason'].iloc[0]})")
    ok = g[g["status"] == "ok"]
    meas = ok[ok["phase"] == "measure"]
    m, lo, hi = median_ci(with_forks(meas[ctx.metric], meas))
    ps = sorted(set(ok["processors"].astype(int)))
    return Verdict(ctx.claim["id"], NOT, f"{ma} at {_xlabel(x, at)}: completed, {_fmt_ci(m, lo, hi)} {ok['unit'].iloc[0]}",
                   f"{ma} completed {_xlabel(x, at)} (P={','.join(map(str, ps))}): the limit the paper hit is not here")


def rule_constant_beyond(ctx: Ctx, a, x, tolerance=1.5, **kw):
    start = kw["from"]
    g = _series_at_p(ctx, a, kw.get("at"), x)
    ma = ctx.member(a)
    xs = [v for v in ctx.xs(g, x) if v >= float(start)]
    if len(xs) < 2 or xs[0] != float(start):
        raise CannotTest(f"missing data: needs {ma} at {_xlabel(x, start)} and beyond")
    s0 = ctx.sample(_at_x(ctx, g, x, start), f"{ma} {_xlabel(x, start)}")
    parts, shown = [], []
    for v in xs[1:]:
        s = ctx.sample(_at_x(ctx, g, x, v), f"{ma} {_xlabel(x, v)}")
        r, lo, hi = ratio_ci(s0, s)
        shown.append(f"{_xlabel(x, v)}: {fmt_ratio(r, lo, hi)}")
        if _short(s0, s):
            parts.append((CANNOT, f"{_xlabel(x, v)}: {_short(s0, s)}"))
            continue
        parts.append((_inside(lo, hi, 1 / tolerance, tolerance), f"{_xlabel(x, v)}: {fmt_ratio(r, lo, hi)} of the {_xlabel(x, start)} value, outside ±{tolerance:g}×"))
    return _combine(parts, f"{ma}, relative to {_xlabel(x, start)}: " + "; ".join(shown), ctx.claim["id"])


def rule_trend(ctx: Ctx, a, x, direction="up", at=None):
    g = _series_at_p(ctx, a, at, x)
    ma = ctx.member(a)
    xs = ctx.xs(g, x)
    if len(xs) < 2:
        raise CannotTest(f"missing data: {ma} measured at one {x} only")
    s0 = ctx.sample(_at_x(ctx, g, x, xs[0]), f"{ma} {_xlabel(x, xs[0])}")
    s1 = ctx.sample(_at_x(ctx, g, x, xs[-1]), f"{ma} {_xlabel(x, xs[-1])}")
    r, lo, hi = ratio_ci(s0, s1)
    d = _side(lo, hi, 1.0, above=(direction == "up"))
    m = f"{ma}: {_xlabel(x, xs[-1])} / {_xlabel(x, xs[0])} = {fmt_ratio(r, lo, hi)}"
    if _short(s0, s1):
        return Verdict(ctx.claim["id"], CANNOT, m, _short(s0, s1))
    return _combine([(d, f"{fmt_ratio(r, lo, hi)}, not {'above' if direction == 'up' else 'below'} 1")], m, ctx.claim["id"])


def rule_scales_linearly(ctx: Ctx, a, x="processors", up_to="cores", efficiency=0.8, at=None):
    limit = ctx.data.cores if up_to == "cores" else int(up_to)
    g = _series_at_p(ctx, a, at, x)
    p = int(g["processors"].max())
    ma = ctx.member(a)
    xs = [v for v in ctx.xs(g, x) if v <= limit]
    if 1.0 not in xs or len(xs) < 2:
        raise CannotTest(f"missing data: {ma} needs points at {_xlabel(x, 1)} and above (up to {limit})")
    s1 = ctx.sample(_at_x(ctx, g, x, 1), f"{ma} {_xlabel(x, 1)}")
    parts, shown = [], []
    for v in xs[1:]:
        s = ctx.sample(_at_x(ctx, g, x, v), f"{ma} {_xlabel(x, v)}")
        r, lo, hi = ratio_ci(s, s1)  # t(1) / t(v)
        target = efficiency * (v if x == "processors" else min(v, p))
        shown.append(f"{_xlabel(x, v)}: speed-up {fmt_ratio(r, lo, hi)}")
        if _short(s, s1):
            parts.append((CANNOT, f"{_xlabel(x, v)}: {_short(s, s1)}"))
            continue
        d = HOLDS if lo >= target else (NOT if hi < target else None)
        parts.append((d, f"speed-up {fmt_ratio(r, lo, hi)} at {_xlabel(x, v)}, below {target:.2g}× ({efficiency:g} of linear)"))
    return _combine(parts, f"{ma}: " + "; ".join(shown), ctx.claim["id"])


def rule_scales_as(ctx: Ctx, a, b, x, tolerance=1.25, at=None):
    out = {}
    for name in (a, b):
        g = _series_at_p(ctx, name, at, x)
        xs = ctx.xs(g, x)
        if len(xs) < 2:
            raise CannotTest(f"missing data: {ctx.member(name)} measured at one {x} only")
        s0 = ctx.sample(_at_x(ctx, g, x, xs[0]), f"{ctx.member(name)} {_xlabel(x, xs[0])}")
        s1 = ctx.sample(_at_x(ctx, g, x, xs[-1]), f"{ctx.member(name)} {_xlabel(x, xs[-1])}")
        ctx.enough_forks(MIN_FORKS_TWO, s0, s1)
        out[name] = (ratio_ci(s0, s1) if ctx.higher else ratio_ci(s1, s0)), xs
    (ra, la, ha), xa = out[a]
    (rb, lb, hb), _ = out[b]
    q, qlo, qhi = ra / rb, la / hb, ha / lb
    d = HOLDS if qlo >= 1 / tolerance else (NOT if qhi < 1 / tolerance else None)
    m = (f"gain from {_xlabel(x, xa[0])} to {_xlabel(x, xa[-1])}: {ctx.member(a)} {fmt_ratio(ra, la, ha)}, "
         f"{ctx.member(b)} {fmt_ratio(rb, lb, hb)}; quotient {fmt_ratio(q, qlo, qhi)}")
    return _combine([(d, f"{ctx.member(a)} gains {fmt_ratio(q, qlo, qhi)} of {ctx.member(b)}'s, needs ≥ {1 / tolerance:.2f}")], m, ctx.claim["id"])


def rule_value_within(ctx: Ctx, a, at=None, low=-math.inf, high=math.inf):
    g = ctx.at(ctx.of(a), at)
    if not (at and "processors" in at):
        g = g[g["processors"] == ctx.top_p(g)]
    ma = ctx.member(a)
    s = ctx.sample(g, ma)
    m, lo, hi = median_ci(s)
    where = ", ".join(_xlabel(k, ctx.resolve(ctx.of(a), k, v)) for k, v in (at or {}).items())
    d = _inside(lo, hi, low, high)
    mm = f"{ma}{' at ' + where if where else ''}, P={int(g['processors'].max())}: {ctx.metric.replace('counter.', '')} {_fmt_ci(m, lo, hi)}"
    if _short(s, need=MIN_FORKS_ONE):
        return Verdict(ctx.claim["id"], CANNOT, mm, _short(s, need=MIN_FORKS_ONE))
    return _combine([(d, f"{_fmt_ci(m, lo, hi)} outside [{fmt_value(low)}, {fmt_value(high)}]")], mm, ctx.claim["id"])


def _short(*samples, need: int = MIN_FORKS_TWO) -> str:
    """_short — "N forks, need M (why)" when a sample has fewer than `need` forks, else ""."""
    short = fork_shortfall(need, *samples)
    return f"{short} ({forks_why(need)})" if short else ""


def _diff(ctx: Ctx, s0, s1):
    """_diff — median(s1) - median(s0) and its interval (each side resampled over forks, independently)."""
    ctx.enough_forks(MIN_FORKS_TWO, s0, s1)
    return diff_ci(s0, s1)


def rule_change(ctx: Ctx, a, x, to="max", at_least=None, at_most=None, **kw):
    g = _series_at_p(ctx, a, kw.get("at"), x)
    ma = ctx.member(a)
    v0, v1 = ctx.resolve(g, x, kw["from"]), ctx.resolve(g, x, to)
    if float(v0) not in ctx.xs(g, x) or float(v1) not in ctx.xs(g, x) or float(v0) == float(v1):
        raise CannotTest(f"missing data: needs {ma} at {_xlabel(x, v0)} and at a larger {x}")
    d, lo, hi = _diff(ctx, ctx.sample(_at_x(ctx, g, x, v0), f"{ma} {_xlabel(x, v0)}"),
                      ctx.sample(_at_x(ctx, g, x, v1), f"{ma} {_xlabel(x, v1)}"))
    m = f"{ma}: change from {_xlabel(x, v0)} to {_xlabel(x, v1)}: {_fmt_ci(d, lo, hi)}"
    if at_most is not None:
        dec = HOLDS if hi <= at_most else (NOT if lo > at_most else None)
        why = f"increase {_fmt_ci(d, lo, hi)} exceeds {at_most:g}"
    else:
        dec = HOLDS if lo >= at_least else (NOT if hi < at_least else None)
        why = f"increase {_fmt_ci(d, lo, hi)} is below {at_least:g}"
    return _combine([(dec, why)], m, ctx.claim["id"])


def _steps(ctx: Ctx, a, x, at=None):
    g = _series_at_p(ctx, a, at, x)
    ma = ctx.member(a)
    xs = ctx.xs(g, x)[::-1]  # decreasing x (e.g. patience)
    if len(xs) < 2:
        raise CannotTest(f"missing data: {ma} measured at one {x} only")
    samples = [ctx.sample(_at_x(ctx, g, x, v), f"{ma} {_xlabel(x, v)}") for v in xs]
    steps = [(xs[i], xs[i + 1]) + _diff(ctx, samples[i], samples[i + 1]) for i in range(len(xs) - 1)]
    return ma, steps


def rule_degrades_suddenly(ctx: Ctx, a, x, min_step, at=None):
    ma, steps = _steps(ctx, a, x, at)
    big = max(steps, key=lambda s: s[2])
    m = f"{ma}: largest step {_xlabel(x, big[0])} → {_xlabel(x, big[1])}: {_fmt_ci(big[2], big[3], big[4])}"
    if any(s[3] >= min_step for s in steps):
        return Verdict(ctx.claim["id"], HOLDS, m)
    if all(s[4] < min_step for s in steps):
        return Verdict(ctx.claim["id"], NOT, m, f"no step as {x} decreases adds {min_step:g} or more (largest {fmt_value(big[2])})")
    return Verdict(ctx.claim["id"], CANNOT, m, f"interval straddles the threshold {min_step:g}: more repetitions needed")


def rule_degrades_gracefully(ctx: Ctx, a, x, max_step, at=None):
    ma, steps = _steps(ctx, a, x, at)
    big = max(steps, key=lambda s: s[2])
    m = f"{ma}: largest step {_xlabel(x, big[0])} → {_xlabel(x, big[1])}: {_fmt_ci(big[2], big[3], big[4])}"
    if all(s[4] <= max_step for s in steps):
        return Verdict(ctx.claim["id"], HOLDS, m)
    if any(s[3] > max_step for s in steps):
        return Verdict(ctx.claim["id"], NOT, m, f"a step as {x} decreases adds {fmt_value(big[2])} (> {max_step:g})")
    return Verdict(ctx.claim["id"], CANNOT, m, f"interval straddles the threshold {max_step:g}: more repetitions needed")


def _counter_cols(g: pd.DataFrame, prefix: str) -> list:
    return sorted((c for c in g.columns if re.fullmatch(re.escape(prefix) + r"[0-9]+", c)), key=lambda c: int(c[len(prefix):]))


def _counter_rows(ctx: Ctx, g: pd.DataFrame, prefix: str):
    """_counter_rows — (rows, forks): the counters prefix0, prefix1, ... of each timed, non-noisy iteration of g
    (a missing counter counts 0) as a matrix, one row per iteration, and each row's fork label."""
    cols = _counter_cols(g, prefix)
    ok = g[(g["status"] == "ok") & (g["phase"] == "measure") & ~_noisy(g)]
    if not cols or ok.empty:
        raise CannotTest(f"missing data: no {prefix}N counters")
    m = ok[cols].apply(pd.to_numeric, errors="coerce")
    present = [c for c in cols if m[c].notna().any()]
    m = m.fillna(0.0)
    for c in cols:
        if c not in present:
            m[c] = 0.0
    return m.to_numpy(dtype=float), fork_labels(ok)


def _counter_medians(ctx: Ctx, g: pd.DataFrame, prefix: str) -> list:
    rows, _ = _counter_rows(ctx, g, prefix)
    return [float(v) for v in np.median(rows, axis=0)]


def _shares(pp: np.ndarray, pu: np.ndarray, p: int) -> np.ndarray:
    """_shares — per row (a resample), the largest difference between the sorted shares of work per processor
    (the first p columns of pp) and per unit (pu), padded with zeros to the same length; NaN where none counted."""
    pp = pp[:, :p]
    n = max(pp.shape[1], pu.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        sp = pp / pp.sum(axis=1, keepdims=True)
        su = pu / pu.sum(axis=1, keepdims=True)
    sp = np.pad(sp, ((0, 0), (0, n - sp.shape[1])))
    su = np.pad(su, ((0, 0), (0, n - su.shape[1])))
    return np.abs(np.sort(sp, axis=1) - np.sort(su, axis=1)).max(axis=1)  # sorted alike: rank i against rank i


def rule_shares_match(ctx: Ctx, a, per_processor, per_unit, tolerance=0.1, at=None):
    from .stats import LEVEL, hierarchical_rows
    g = _series_at_p(ctx, a, at, None)
    rp, forks = _counter_rows(ctx, g, per_processor)
    ru, _ = _counter_rows(ctx, g, per_unit)
    p = int(g["processors"].max())
    pp, pu = np.median(rp, axis=0)[:p], np.median(ru, axis=0)
    if pp.sum() <= 0 or pu.sum() <= 0:
        raise CannotTest("missing data: no work counted")
    n = max(len(pp), len(pu))
    sp = sorted([v / pp.sum() for v in pp] + [0.0] * (n - len(pp)), reverse=True)
    su = sorted([v / pu.sum() for v in pu] + [0.0] * (n - len(pu)), reverse=True)
    dev = max(abs(x - y) for x, y in zip(sp, su))
    # Its uncertainty: the same largest difference on hierarchical resamples (forks, then
    # iterations; the per-processor and per-unit counters of an iteration drawn together).
    both = hierarchical_rows(np.hstack([rp, ru]), forks)
    devs = _shares(both[:, :rp.shape[1]], both[:, rp.shape[1]:], p)
    devs = devs[np.isfinite(devs)]
    lo, hi = (np.quantile(devs, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]) if len(devs) else (math.nan, math.nan))
    k = n_forks(pd.Series(np.zeros(len(forks)), index=forks))
    m = (f"{ctx.member(a)} at P={p}: per-processor shares {', '.join(f'{v:.2f}' for v in sp[:8])}; per-unit "
         f"{', '.join(f'{v:.2f}' for v in su[:8])}; largest difference {dev:.3f} "
         f"({LEVEL:.0%} interval {lo:.3f}–{hi:.3f} over {k} fork{'' if k == 1 else 's'})")
    if k < MIN_FORKS_ONE:
        return Verdict(ctx.claim["id"], CANNOT, m, f"{k} fork{'' if k == 1 else 's'}, need {MIN_FORKS_ONE} ({forks_why(MIN_FORKS_ONE)})")
    if hi <= tolerance:
        return Verdict(ctx.claim["id"], HOLDS, m)
    if lo > tolerance:
        return Verdict(ctx.claim["id"], NOT, m, f"shares differ by {dev:.2f} (> {tolerance:g}; interval {lo:.2f}–{hi:.2f})")
    return Verdict(ctx.claim["id"], CANNOT, m, f"interval of the largest share difference ({lo:.2f}–{hi:.2f}) "
                                                f"straddles the tolerance {tolerance:g}: too wide to decide")


def rule_anticorrelated(ctx: Ctx, a, load, stolen, at=None):
    g = _series_at_p(ctx, a, at, None)
    p = int(g["processors"].max())
    rl, forks = _counter_rows(ctx, g, load)
    rs, _ = _counter_rows(ctx, g, stolen)
    n = min(rl.shape[1], rs.shape[1])
    if n < 3:
        raise CannotTest(f"missing data: {n} units (needs 3 or more)")
    rl, rs = rl[:, :n], rs[:, :n]
    ld, st = np.median(rl, axis=0), np.median(rs, axis=0)
    if p < 2 or st.sum() == 0:
        raise CannotTest(f"missing data: no steals at P={p}")
    rho = float(pd.Series(ld).rank().corr(pd.Series(st).rank()))
    if rho != rho:
        raise CannotTest("the correlation is undefined (constant load or steals)")
    # Its uncertainty: a hierarchical bootstrap of ρ (forks, then iterations; an iteration's
    # load and steal counters drawn together) and a one-sided permutation test over the units
    # (with n units no p below 1/n! is possible: 1/24 for 4).
    _, lo, hi = rank_corr_ci(rl, rs, forks)
    pv = rank_corr_perm_p(ld, st)
    k = n_forks(pd.Series(np.zeros(len(forks)), index=forks))
    m = (f"{ctx.member(a)} at P={p}, per unit (load, steals): "
         + ", ".join(f"({fmt_value(x)}, {fmt_value(y)})" for x, y in zip(ld, st))
         + f"; Spearman ρ = {rho:.2f} (95 % interval {lo:.2f}–{hi:.2f} over {k} fork{'' if k == 1 else 's'}; "
           f"permutation p = {pv:.2g})")
    if k < MIN_FORKS_ONE:
        return Verdict(ctx.claim["id"], CANNOT, m, f"{k} fork{'' if k == 1 else 's'}, need {MIN_FORKS_ONE} ({forks_why(MIN_FORKS_ONE)})")
    if hi < 0 and pv < 0.05:
        return Verdict(ctx.claim["id"], HOLDS, m)
    if lo >= 0:
        return Verdict(ctx.claim["id"], NOT, m, f"units with more load were not stolen less (ρ = {rho:.2f}, interval "
                                                f"{lo:.2f}–{hi:.2f} ≥ 0)")
    return Verdict(ctx.claim["id"], CANNOT, m, f"ρ = {rho:.2f} is not shown below 0 (interval {lo:.2f}–{hi:.2f}, "
                                                f"permutation p = {pv:.2g}): too wide to decide")


RULES = {
    "faster": rule_faster,
    "comparable": rule_comparable,
    "ratio_within": rule_ratio_within,
    "no_degradation": rule_no_degradation,
    "fails_at": rule_fails_at,
    "constant_beyond": rule_constant_beyond,
    "trend": rule_trend,
    "scales_linearly": rule_scales_linearly,
    "scales_as": rule_scales_as,
    "value_within": rule_value_within,
    "change": rule_change,
    "degrades_suddenly": rule_degrades_suddenly,
    "degrades_gracefully": rule_degrades_gracefully,
    "shares_match": rule_shares_match,
    "anticorrelated": rule_anticorrelated,
}


def evaluate(claim: dict, data: Data, backends: dict | None = None) -> Verdict:
    """evaluate — the verdict of one claim on the data (never raises for data problems)."""
    cid = claim["id"]
    need = int((claim.get("needs") or {}).get("min_cores") or 1)
    if data.cores < need:
        return Verdict(cid, CANNOT, "", f"needs {need} cores; this run used at most {data.cores}")
    rule = claim["rule"]
    fn = RULES[rule["name"]]
    try:
        ctx = Ctx(claim, data, backends or {})
        return fn(ctx, **rule.get("args", {}))
    except CannotTest as e:
        return Verdict(cid, CANNOT, "", str(e))
    except (KeyError, ValueError, TypeError, ZeroDivisionError) as e:
        # data the rule cannot read (a column of another type, an empty group): one claim
        # untested, the report still written; the rules' own tests keep this path rare.
        return Verdict(cid, CANNOT, "", f"the rule could not read the data ({type(e).__name__}: {e})")


def evaluate_all(doc: dict, data: Data) -> list[Verdict]:
    return [evaluate(c, data, doc.get("backends")) for c in doc["claims"]]


# ----------------------------------------------------------------------------- errata, predictions

def test_exists(entry: dict, root: Path = ROOT) -> bool:
    """test_exists — the file of a shown_by entry exists and, when a test (or model mutant) is named, contains that name."""
    f = root / entry["file"]
    if not f.is_file():
        return False
    return entry.get("test") is None or entry["test"] in f.read_text(errors="replace")


def predictions(doc: dict, calibration: Path | None = None, measured: Path | None = None) -> list[dict]:
    """predictions — the P=64 predictions of scripts/scaling_model.py for the doc's "predictions" entries.

    Inputs: the calibration (docs/scaling-model/line_cost.txt) and the measured P=1 switch
    points (docs/scaling-model/measured), both from one host, as scaling_model.py uses them.
    An entry without a model column gets "no prediction".
    """
    import sys
    entries = doc.get("predictions") or []
    if not entries:
        return []
    calibration = calibration or ROOT / "docs" / "scaling-model" / "line_cost.txt"
    measured = measured or ROOT / "docs" / "scaling-model" / "measured"
    sys.path.insert(0, str(ROOT / "scripts"))
    model = None
    try:
        import scaling_model as sm
        cal = sm.read_calibration(calibration)
        nat = sm.read_measured(measured)
        ws = sm.read_measured(measured, "native-ws", required=False)
        nat_local = nat[(nat["param.T"] >= 10) & (nat.processors == 1)]["value"].median()
        wsb = ws[(ws["param.T"] >= 10) & (ws.processors == 1)] if not ws.empty else ws
        ws_local = (wsb["value"].median() if not wsb.empty
                    else nat_local - cal["queue_enqueue_dequeue_ns"] + cal["ring_push_pop_ns"])
        t_x = cal["line_transfer_ns"]

        def model(column, P):
            if column == "native_ns":
                return sm.predict(P, t_x, nat_local, sm.NATIVE_YIELD, hot_line_rfos=2)["ns_per_switch"]
            if column == "ws_ns":
                return sm.predict(P, t_x, ws_local, sm.WS_YIELD, hot_line_rfos=0)["ns_per_switch"]
            return None
        source = f"scripts/scaling_model.py, calibration {calibration.relative_to(ROOT) if calibration.is_relative_to(ROOT) else calibration} (line transfer {t_x:.0f} ns)"
    except (OSError, ValueError, KeyError, ImportError) as e:
        source = f"scaling model unavailable: {e}"
    out = []
    for e in entries:
        v = model(e["model_column"], e["P"]) if (model and e.get("model_column")) else None
        pv = e.get("paper_value")
        if v is None:
            off = "no prediction (the model predicts the context switch only)"
        elif isinstance(pv, (int, float)):
            off = f"{v / pv:.2f}× the paper's"
        else:
            off = "the paper prints no number (figure only)"
        out.append(dict(e, predicted=v, off=off, source=source))
    return out


# ----------------------------------------------------------------------------- the report

def _md(s) -> str:
    return str(s).replace("|", "\\|").replace("\n", " ")


def _members(doc: dict, fig: dict, g: pd.DataFrame, series: str) -> list:
    present = list(dict.fromkeys(g[series].astype(str)))
    want = [m for m in doc.get("backends", {}).values() if m] + list(doc.get("peers", []))
    if series == "backend":
        # every Boost.Fiber variant counts as the peer "boostfiber/..."; keep the paper's first.
        want += [b for b in present if b.startswith("boostfiber/")]
    return [m for m in dict.fromkeys(want) if m in present]


def figure_table(doc: dict, fig: dict, data: Data) -> str:
    """figure_table — our medians (interval) for a figure: x down, the paper's systems and the peers across."""
    df = data.df
    w = fig.get("workload")
    if not w or df.empty or not (df["workload"] == w).any():
        return "_no points of this figure in these results_\n"
    q = {"workload": w, "metric": fig.get("metric", "value"), "series": fig.get("series", "backend"),
         "params": fig.get("params", {})}
    if q["series"] != "backend":
        q["backend"] = "pthreads"
    try:
        ctx = Ctx({"id": fig["id"], "quantity": q}, data, doc.get("backends", {}))
        g = ctx.rows
        for k, v in ctx.fixed.items():
            g = ctx._fix(g, k, v)
    except CannotTest as e:
        return f"_{e}_\n"
    x = fig.get("x")
    xc = _col(x) if x else None
    members = _members(doc, fig, g, q["series"])
    if not members:
        return "_none of the paper's systems or the peers in these results_\n"
    lines, header = [], None
    forks_seen = []
    ok = g[(g["status"] == "ok") & (g["phase"] == "measure") & ~_noisy(g)]
    metric = q["metric"]
    unit = (ok["unit"].iloc[0] if len(ok) and metric == "value" else metric.replace("counter.", ""))
    if x != "processors":
        pmax = int(g["processors"].max())
        g, ok = g[g["processors"] == pmax], ok[ok["processors"] == pmax]
        where = f"P={pmax}"
    else:
        where = "over processors"
    xs = sorted(pd.to_numeric(g[xc], errors="coerce").dropna().unique()) if xc in g.columns else [None]
    # "metrics": several columns (counter globs such as counter.ops_s*) of the paper's own system
    metrics = [metric]
    if fig.get("metrics"):
        import fnmatch
        metrics = [c for pat in fig["metrics"] for c in sorted(g.columns) if fnmatch.fnmatch(c, pat)
                   and g[c].notna().any()]
        members = members[:1]
        unit = "counters"
    cols = [(m, k) for m in members for k in metrics]
    names = [m if len(metrics) == 1 else f"{m} {k.replace('counter.', '')}" for m, k in cols]
    header = f"| {x or ''} | " + " | ".join(names) + " |"
    lines += [header, "|---:|" + "---:|" * len(cols)]
    for v in xs:
        cells = []
        for m, k in cols:
            sel = g[(g[q["series"]].astype(str) == m)]
            sok = ok[(ok[q["series"]].astype(str) == m)]
            if v is not None:
                sel, sok = sel[_eq(sel[xc], v)], sok[_eq(sok[xc], v)]
            if sok.empty or k not in sok.columns or sok[k].isna().all():
                cells.append("failed" if len(sel) and (sel["status"] != "ok").all() else "–")
            else:
                sk = with_forks(sok[k].dropna(), sok)
                forks_seen.append(n_forks(sk))
                cells.append(fmt_ci(*median_ci(sk), forks=forks_seen[-1]))
        lines.append(f"| {fmt_value(v) if v is not None else ''} | " + " | ".join(cells) + " |")
    return (f"Ours ({unit}, median (95 % interval), {where}; {_forks_note(forks_seen)}; failed: every run failed; "
            "–: not run):\n\n" + "\n".join(lines) + "\n")


def _forks_note(forks: list) -> str:
    """_forks_note — how many forks the shown points had, and what a 1-fork range is."""
    if not forks:
        return "no forks"
    lo, hi = min(forks), max(forks)
    txt = f"{lo} fork{'' if lo == 1 else 's'} per point" if lo == hi else f"{lo}–{hi} forks per point"
    if lo <= 1:
        txt += " (1 fork: variation within one process only, no interval across processes)"
    return txt


def table1_section(doc: dict, data: Data) -> str:
    """table1_section — the paper's Table 1 beside our medians (ms) of its systems and the peers."""
    out = []
    rows = read_table1()
    cols = ["native", "pthreads"] + [p for p in doc.get("peers", [])]
    present = set(data.df["backend"]) if not data.df.empty else set()
    cols = [c for c in cols if c in present]
    out.append("| row | benchmark | paper Native | paper Linux | paper Windows | " + " | ".join(f"ours {c}" for c in cols)
               + " | ours native / pthreads | paper Native / Linux |")
    out.append("|---|---|---:|---:|---:|" + "---:|" * len(cols) + "---:|---:|")
    forks_seen = []
    for row in rows:
        params = parse_params(row["params"])
        cells = []
        meds = {}
        for c in cols:
            claim = {"id": "t1", "quantity": {"workload": row["workload"], "series": "backend", "params": params}}
            try:
                ctx = Ctx(claim, data, {})
                gg = ctx.of(c)
                p = int(gg[gg["status"] == "ok"]["processors"].max()) if (gg["status"] == "ok").any() else None
                if p is None:
                    cells.append("failed")
                    continue
                s = ctx.sample(gg[gg["processors"] == p], c)
                meds[c] = s
                cells.append(fmt_value(float(s.median())) + (f" (P={p})" if c in ("native", "pthreads") else ""))
            except CannotTest:
                cells.append("–")
        for v in meds.values():
            forks_seen.append(n_forks(v))
        r = (fmt_ratio(*ratio_ci(meds["pthreads"], meds["native"]), forks=min(n_forks(meds["pthreads"]), n_forks(meds["native"])))
             if "native" in meds and "pthreads" in meds else "–")
        out.append(f"| {row['row']} | {row['benchmark']} ({row['params'].replace(';', ', ')}) | {float(row['native_ms']):,.0f} | "
                   f"{float(row['linux_ms']):,.0f} | {float(row['windows_ms']):,.0f} | " + " | ".join(cells)
                   + f" | {r} | {float(row['native_ms']) / float(row['linux_ms']):.2f}× |")
    return ("The paper's ms (64 cores) beside our medians in ms at the largest P each system ran; the ratio with "
            f"its 95 % interval (hierarchical bootstrap over forks; {_forks_note(forks_seen)}). Our parameters are the "
            "paper's where the run used the paper plan.\n\n"
            + "\n".join(out) + "\n")


def _figure_links(fig: dict, dirs: list, out_dir: Path) -> list:
    import os
    links = []
    for d in dirs:
        for f in sorted(Path(d, "figures").glob(fig.get("figure_file", "-") + ".png")) if fig.get("figure_file") else []:
            links.append(f"![{fig['id']}]({os.path.relpath(f, out_dir)})")
    return links


def render_report(paper: str, dirs: list, out: Path, doc: dict | None = None) -> str:
    """render_report — REPRODUCTION.md for PAPER from results folders DIRS (written to OUT); returns the text."""
    from .load import load
    from .stats import METHOD
    doc = doc or load_claims(paper)
    results = [load(d) for d in dirs]
    data = data_from(results)
    verdicts = evaluate_all(doc, data)
    ctx = data.context
    out = Path(out)
    L = [f"# Reproduction: {doc['title']}", ""]
    L.append(f"Made by `scripts/reproduce.sh` from {', '.join(f'`{Path(d).name}`' for d in dirs)}; claims from "
             f"`results/paper/claims-{paper}.json` (the paper's text: `{doc['text']}`). Every verdict below is computed "
             "from the results by the rule next to the claim (`scripts/coopbench/claims.py`); none is written by hand.")
    L.append("")
    plans = ", ".join(dict.fromkeys(str(r.context.get("plan") or "none") for r in results))
    commits = ", ".join(dict.fromkeys(str(r.context.get("git_commit") or "?") for r in results))
    noisy = int(_noisy(data.df).sum()) if not data.df.empty else 0
    L.append(f"Machine: {ctx.get('cpu_model', '?')}, {data.cores} cores available (the paper: "
             f"{doc.get('paper_cores') or 'not stated'}); commit {commits}; plan {plans}. Statistics: {METHOD}; "
             f"the {noisy} rows the harness marked noisy (a busy machine) are left out.")
    L += ["", "Runs (sizes: the paper's where the plan is `paper` or the parameters are given, the quick plan's otherwise):", ""]
    for r in results:
        cmd = r.context.get("coopbench_command") or "coopbench run (command not recorded)"
        fk = r.df.groupby("point")["repetition"].nunique()
        L.append(f"- `{Path(r.dir).name}`: {len(r.df['point'].unique())} points, {len(r.df)} rows, "
                 f"{_forks_note(sorted(set(fk.astype(int))))}; `{_md(cmd)}`")
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    L += ["", f"**Summary:** {len(verdicts)} claims: {counts[HOLDS]} hold, {counts[NOT]} do not hold, "
              f"{counts[CANNOT]} cannot be tested here.", ""]
    L += ["## Figures and tables: ours beside the paper's", ""]
    shown_files = set()
    for fig in doc.get("figures", []):
        L += [f"### {fig['id']}: {fig['title']}", ""]
        L.append(f"**Paper:** {fig['shape']}" + (f" Numbers: {fig['paper_data']}." if fig.get("paper_data") and fig["paper_data"] != "table1.csv" else ""))
        L.append("")
        if fig["id"] == "Table 1" and doc.get("table1"):
            L.append(table1_section(doc, data))
        else:
            L.append(figure_table(doc, fig, data))
        links = [x for x in _figure_links(fig, dirs, out.parent) if x.split("](")[1] not in shown_files]
        shown_files |= {x.split("](")[1] for x in links}
        L += links + [""]
    L += ["## Claims", "",
          "| id | figure (section) | the paper says | rule | ours (95 % interval) | verdict | why |",
          "|---|---|---|---|---|---|---|"]
    for c, v in zip(doc["claims"], verdicts):
        args = ", ".join(f"{k}={json.dumps(a) if not isinstance(a, str) else a}" for k, a in c["rule"].get("args", {}).items())
        note = (c.get("needs") or {}).get("note", "")
        L.append(f"| {c['id']} | {c['figure']} (§{c.get('section', '?')}) | “{_md(c['quote'])}” | `{c['rule']['name']}({_md(args)})`"
                 f"{'<br>' + _md(note) if note else ''} | {_md(v.measured) or '–'} | **{v.status}** | {_md(v.why)} |")
    L += ["", "## Errata: where reproducing found the paper's text wrong", ""]
    if doc.get("errata"):
        L += ["| id | where | what | shown by |", "|---|---|---|---|"]
        for e in doc["errata"]:
            shown = []
            for sb in e.get("shown_by", []):
                ok = test_exists(sb)
                shown.append(f"`{sb['file']}`" + (f" {sb['test']}" if sb.get("test") else "") + ("" if ok else " (NOT FOUND)"))
            if e.get("note"):
                shown.append(_md(e["note"]))
            L.append(f"| {e['id']} | {_md(e['where'])} | {_md(e['text'])} | {'<br>'.join(shown)} |")
    else:
        L.append("None found for this paper.")
    L += ["", "## Predictions for the paper's machine (P = 64), marked predicted", ""]
    preds = predictions(doc)
    if preds:
        L += [f"From {preds[0]['source']}. The model predicts the context switch only.", "",
              "| figure | quantity | paper (64 cores) | **predicted** (P = 64) | how far off |", "|---|---|---:|---:|---|"]
        for p in preds:
            pv = p.get("paper_value")
            pv = "see Table 1" if pv == "table1.csv" else (fmt_value(pv) if isinstance(pv, (int, float)) else "no number printed")
            pr = f"{fmt_value(p['predicted'])} (predicted)" if p["predicted"] is not None else "no prediction"
            L.append(f"| {p['figure']} | {_md(p['quantity'])} | {pv} | {pr} | {p['off']} |")
    else:
        L.append("The paper gives no 64-core numbers to predict.")
    text = "\n".join(L) + "\n"
    out.write_text(text)
    return text


def check(doc: dict, papers_dir: Path | None = None) -> list[str]:
    """check — problems of a claims document: unknown rules or arguments, unknown workloads, quotes not in the paper."""
    import inspect
    problems = []
    known_w = known_workloads()
    for c in doc["claims"]:
        r = c.get("rule", {})
        if r.get("name") not in RULES:
            problems.append(f"{c['id']}: unknown rule {r.get('name')}")
            continue
        sig = inspect.signature(RULES[r["name"]])
        names = set(sig.parameters) - {"ctx", "kw"}
        extra = set(r.get("args", {})) - names - ({"from", "at"} if "kw" in sig.parameters else set())
        if extra:
            problems.append(f"{c['id']}: {r['name']} takes no {sorted(extra)}")
        if c["quantity"]["workload"] not in known_w:
            problems.append(f"{c['id']}: unknown workload {c['quantity']['workload']}")
    if papers_dir is not None:
        text = norm_text((papers_dir / doc["text"]).read_text())
        for c in doc["claims"]:
            if norm_text(c["quote"]) not in text:
                problems.append(f"{c['id']}: quote not in {doc['text']}: {c['quote'][:60]}")
    return problems


def norm_text(s: str) -> str:
    """norm_text — text for quote matching: markdown emphasis and code marks dropped, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"[*`]", "", s)).strip()


def known_workloads() -> set:
    """known_workloads — the workload names registered in workloads/ (w.name = "..." or info("...", ...))."""
    names = set()
    for f in (ROOT / "workloads").rglob("*.hpp"):
        t = f.read_text(errors="replace")
        names |= set(re.findall(r'w\.name\s*=\s*"([a-z0-9-]+)"', t))
        names |= set(re.findall(r'info\("([a-z0-9-]+)"', t))
    return names


def main(argv=None) -> int:
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="python3 -m coopbench.claims",
                                 description="the papers' claims checked against results folders")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report", help="write REPRODUCTION.md for PAPER from results folders")
    r.add_argument("paper", choices=PAPERS)
    r.add_argument("dirs", nargs="+")
    r.add_argument("--out", help="the report file (default: FIRST_DIR/../REPRODUCTION.md when the folders share a parent made by reproduce.sh, else FIRST_DIR/REPRODUCTION.md)")
    c = sub.add_parser("check", help="validate the claims files")
    c.add_argument("--papers", help="folder with the papers' text (checks the quotes)")
    a = ap.parse_args(argv)
    if a.cmd == "check":
        bad = []
        for p in PAPERS:
            bad += check(load_claims(p), Path(a.papers) if a.papers else None)
        print("\n".join(bad) or "ok")
        return 1 if bad else 0
    from .load import ResultsError
    try:
        out = Path(a.out) if a.out else Path(a.dirs[0]) / "REPRODUCTION.md"
        render_report(a.paper, a.dirs, out)
    except ResultsError as e:
        print(f"claims: {e}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
