"""coopbench.claims — the papers' claims (results/paper/claims-<paper>.json) checked against results.

Each claim names a quantity (workload, metric, the series that tells the compared things
apart — `backend`, `param.lock`, `param.guard` — and fixed parameters) and a rule with
arguments. `evaluate(claim, data)` computes, from the results only, a Verdict:

    holds                  the measured interval lies on the claim's side of its threshold
                           (or, labelled so, a system limit refused the runs before they
                           started: fails_at on a refusal)
    does not hold          the interval lies on the other side (with one line of why)
    cannot be tested here  with its kind (KINDS): the claim needs more cores than the run
                           had, the paper's system has no counterpart, too few forks, the
                           interval straddles the threshold (more repetitions would decide),
                           a refusal before running, points missing or failed, only noisy
                           forks measured them

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

    faster(a, b, over=X | at={..}, factor, at_most)
                                               a better than b by more than `factor` (and
                                               less than `at_most`) (ratio of medians; lower
                                               or higher is better by the quantity's
                                               `better`), at every X; b a list: each of them
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
    relative_trend(a, b, x, direction, factor) (a/b at the largest x) / (a/b at the smallest)
                                               above factor (up), below 1/factor (down),
                                               outside [1/factor, factor] (differs)
    all(parts)                                 every part (a rule, optionally with its own
                                               quantity keys) holds: one sentence, one claim

The words of degree ("significantly", "comparable", "much", ...) map to one threshold each:
docs/reproducing.md, "Words of degree".

Argument values "cores" (the run's core count), "max" and "min" (the largest/smallest
value measured) are resolved against the data.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from .stats import (MIN_FORKS_ONE, MIN_FORKS_TWO, coverage_pct, diff_ci, fmt_ci, fmt_ratio, fmt_value, fork_labels, fork_shortfall,
                    forks_why, median_ci, n_forks, percentile_interval, rank_corr_ci, rank_corr_perm_p, ratio_ci,
                    sides_resampled, u_test, with_forks)

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

    @property
    def kind(self) -> str:
        """kind — which kind of outcome (KINDS): for "cannot be tested here" why it could not be; for
        "holds" whether it rests on a refusal checked before running instead of a measurement."""
        return outcome_kind(self.status, self.why)

    @property
    def label(self) -> str:
        """label — the verdict as the report prints it: the status, and its kind where that matters."""
        k = self.kind
        if self.status == HOLDS and k == "refused":
            return f"{HOLDS} (by a system limit checked before running, not a measurement)"
        if self.status == CANNOT:
            m = re.search(r"^needs (\d+) cores", self.why)
            if k in ("regime", "definition"):
                return UNTESTABLE + KINDS[k]
            return f"{CANNOT}: " + (f"needs {m.group(1)} cores" if m else KINDS[k])
        return self.status


# The kinds of "cannot be tested here" (and of a "holds" that rests on a refusal), in the order
# the report's summary counts them. The paper's processor count and a missing counterpart are
# limits of this machine and this project; too few forks and a straddling interval are limits
# of the run (more forks would decide); missing or noisy points are limits of the data.
KINDS = {
    "cores": "needs the paper's processor count",
    "regime": "the claim's regime does not occur or the metric cannot show it",
    "definition": "a definition, not a claim",
    "counterpart": "the paper's system has no counterpart here",
    "forks": "too few forks",
    "straddles": "the interval straddles the threshold",
    "refused": "a system limit refused the runs before they started",
    "missing": "points missing or failed",
    "noisy": "measured only on a busy machine",
    "unreadable": "the rule could not read the data",
    "sweeps": "a point measured by two sweeps (not pooled)",
}
# The same kinds as the summary counts them ("3 with too few forks").
KINDS_COUNTED = {
    "cores": "needing the paper's processor count",
    "regime": "whose regime does not occur here or whose metric cannot show it",
    "definition": "that are definitions, not claims",
    "counterpart": "without a counterpart of the paper's system",
    "forks": "with too few forks",
    "straddles": "whose interval straddles the threshold",
    "refused": "refused by a system limit before running",
    "missing": "with points missing or failed",
    "noisy": "measured only on a busy machine",
    "unreadable": "whose data the rule could not read",
    "sweeps": "resting on a point two sweeps measured",
}
UNTESTABLE = "not testable here: "  # needs.untestable: the claim's regime or metric, not the run, rules it out
REFUSAL_PREFIX = "system limit: "  # harness/runner.hpp kRefusalPrefix: a fork refused before it ran


def outcome_kind(status: str, why: str) -> str:
    """outcome_kind — the kind (a KINDS key, or "" for a plain holds / does not hold) of a verdict's why."""
    if status == NOT:
        return ""
    if status == HOLDS:
        return "refused" if "checked before running" in why else ""
    if re.search(r"^needs \d+ cores", why):
        return "cores"
    if why.startswith(UNTESTABLE):
        return "definition" if why.startswith(UNTESTABLE + "a definition") else "regime"
    if "no counterpart" in why:
        return "counterpart"
    if re.search(r"\d+ forks?, need \d+", why):
        return "forks"
    if "straddles" in why or "too wide to decide" in why:
        return "straddles"
    if "refused before running" in why:
        return "refused"
    if why.startswith("noisy points") or ": noisy points" in why:
        return "noisy"
    if why.startswith("the rule could not read"):
        return "unreadable"
    if "two sweeps measured" in why:
        return "sweeps"
    return "missing"


# ----------------------------------------------------------------------------- claims files

def claims_path(paper: str) -> Path:
    return PAPER_DIR / f"claims-{paper}.json"


def load_claims(paper: str, path: Path | None = None) -> dict:
    """load_claims — the claims document of a paper. Table 1's rows are not claims: its sentence is descriptive,
    and the rows stand beside ours in the report's table (table1_section); the sentences about them are claims."""
    doc = json.loads(Path(path or claims_path(paper)).read_text())
    doc["claims"] = list(doc.get("claims", []))
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


def _cpu_util(df: pd.DataFrame) -> pd.Series:
    """_cpu_util — process CPU time over (run time x processors): the workload's own counter.cpu_util where it
    records one (ddb), else counter.cpu_s / (seconds x processors) (fib records its CPU time only)."""
    own = pd.to_numeric(df.get("counter.cpu_util", pd.Series(np.nan, index=df.index)), errors="coerce")
    cpu = pd.to_numeric(df.get("counter.cpu_s", pd.Series(np.nan, index=df.index)), errors="coerce")
    secs = pd.to_numeric(df["seconds"], errors="coerce") if "seconds" in df.columns else pd.Series(np.nan, index=df.index)
    return own.fillna(cpu / (secs * pd.to_numeric(df["processors"], errors="coerce")))


# Metrics a claim may name that are computed from a row's columns (the same definition for every workload).
DERIVED = {"cpu_util": _cpu_util}


class Ctx:
    """Ctx — one claim's view of the data: the quantity's rows, the series, the metric."""

    def __init__(self, claim: dict, data: Data, backends: dict):
        q = claim["quantity"]
        self.claim, self.data, self.q, self.backends = claim, data, q, backends
        self.metric = q.get("metric", "value")
        self.higher = q.get("better", "lower") == "higher"
        self.series = q.get("series", "backend")
        df = data.df
        # a list of workloads: compared with one another (series "workload"), e.g. Quirk's ddb against fib
        names = q["workload"] if isinstance(q["workload"], list) else [q["workload"]]
        if df.empty or "workload" not in df.columns or not df["workload"].isin(names).any():
            raise CannotTest(f"missing data: no {' or '.join(names)} points in these results")
        df = df[df["workload"].isin(names)]
        if self.metric in DERIVED:
            df = df.assign(**{self.metric: DERIVED[self.metric](df)})
        if q.get("backend") and self.series != "backend":
            df = df[df["backend"] == q["backend"]]
        if self.series != "backend" and self.series not in df.columns:
            raise CannotTest(f"missing data: no {self.series} column")
        self.rows = df
        self.fixed = dict(q.get("params", {}))

    # the series value that a claim's name stands for ("Linux" -> pthreads; "Windows" -> none)
    def label(self, name: str) -> str:
        """label — a compared thing as the report names it: a backend or lock by its name, a parameter's value as
        NAME=value (work=0)."""
        m = self.member(name)
        return f"{self.series[len('param.'):]}={m}" if self.series.startswith("param.") and self.series != "param.lock" \
            and self.series != "param.guard" else m

    def member(self, name: str) -> str:
        if name in self.backends:
            m = self.backends[name]
            if m is None:
                raise CannotTest(f"the paper's {name} has no counterpart here")
            return m
        return name

    def of(self, name: str) -> pd.DataFrame:
        m = self.member(name)
        g = self.rows[_eq(self.rows[self.series], m)]  # numerically for a parameter series ("0" is 0.0)
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
        if isinstance(v, str) and v.startswith("cores*"):  # e.g. cores*4/3: the paper's 40 threads on 30 CPUs
            num, _, den = v[len("cores*"):].partition("/")
            return math.ceil(self.data.cores * int(num) / int(den or 1))
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
        if "folder" in clean.columns and clean["folder"].nunique() > 1:
            # Two sweeps' forks are two moments of the machine (scripts/compare.py, SWEEP_FACTOR), not one
            # sample: pooled, their interval would lie between two states and a comparison would test the
            # moments as much as the systems.
            names = ", ".join(sorted(Path(str(f)).name for f in clean["folder"].unique()))
            raise CannotTest(f"two sweeps measured {what} ({names}): their forks are not pooled into one sample")
        return with_forks(clean[self.metric], clean)

    def enough_forks(self, need: int, *samples) -> None:
        """enough_forks — raise CannotTest("N forks, need M") unless every sample has `need` forks (FORKS_RULE)."""
        short = fork_shortfall(need, *samples)
        if short:
            raise CannotTest(f"{short} ({forks_why(need)})")

    def failed(self, g: pd.DataFrame) -> bool:
        return len(g) > 0 and (g["status"] != "ok").all()

    def refused(self, g: pd.DataFrame) -> str:
        """refused — the reason when every run of g failed because the harness refused it before it ran (a
        system limit known in advance, e.g. kernel.pid_max against the threads asked for), else "". Such a
        point has no measurement: it is never counted as a loss or a win, and a verdict resting on it says so."""
        if not self.failed(g):
            return ""
        reasons = g["reason"].fillna("").astype(str)
        return str(reasons.iloc[0]) if reasons.str.startswith(REFUSAL_PREFIX).all() else ""


# ----------------------------------------------------------------------------- decisions

# U_ALPHA — the two-sided level at which the forks' medians count as separated (a "faster" that holds needs it).
U_ALPHA = 0.05


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


def _all_verdicts(vs: list, claim_id: str) -> Verdict:
    """_all_verdicts — one verdict from several (the parts of one sentence): does not hold if any part does
    not, cannot be tested if any part cannot (the first such part's why), holds if all hold."""
    measured = "; ".join(v.measured for v in vs if v.measured)
    for status in (NOT, CANNOT):
        bad = [v for v in vs if v.status == status]
        if bad:
            tail = f" ({len(bad)} of {len(vs)} parts)" if len(vs) > 1 and status == NOT else ""
            return Verdict(claim_id, status, measured, bad[0].why + tail)
    refused = [v.why for v in vs if v.kind == "refused"]
    return Verdict(claim_id, HOLDS, measured, refused[0] if refused else "")


def _fmt_fixed(k: str, v) -> str:
    if isinstance(v, dict):
        return " and ".join(f"{k}{'≥' if b == 'min' else '≤'}{fmt_value(x)}" for b, x in v.items())
    return f"{k}={v}"


def _fmt_ci(m, lo, hi) -> str:
    return f"{fmt_value(m)} ({fmt_value(lo)}–{fmt_value(hi)})" if lo != hi else fmt_value(m)


def _xlabel(x, v) -> str:
    return f"{x.replace('param.', '')}={fmt_value(v)}"


# ----------------------------------------------------------------------------- rules

def rule_faster(ctx: Ctx, a, b, over=None, at=None, factor=1.0, at_most=None):
    """faster — a better than b by more than `factor` (and, with `at_most`, by less than it: "the most
    efficient, while the differences are minimal"); b may be a list: a better than each of them ("performs
    best" among the systems the sentence names)."""
    if isinstance(b, list):
        vs = []
        for one in b:
            try:
                vs.append(rule_faster(ctx, a, one, over, at, factor, at_most))
            except CannotTest as e:
                vs.append(Verdict(ctx.claim["id"], CANNOT, f"{ctx.member(a)} vs {one}: –", str(e)))
        return _all_verdicts(vs, ctx.claim["id"])
    ga, gb = ctx.at(ctx.of(a), at), ctx.at(ctx.of(b), at)
    p = None
    if not (at and "processors" in at):
        try:
            p = ctx.top_p(ga, gb)
        except CannotTest:
            if not (ctx.refused(ga) or ctx.refused(gb)):
                raise
            p = int(max(ga["processors"].max(), gb["processors"].max()))  # a side refused everywhere: no ok rows
    if p is not None:
        ga, gb = ga[ga["processors"] == p], gb[gb["processors"] == p]
    points = [None]
    if over:
        points = sorted(set(ctx.xs(ga, over)) | set(ctx.xs(gb, over)))
    parts, shown, refused = [], [], []
    ma, mb = ctx.member(a), ctx.member(b)
    for v in points:
        pa = ga if v is None else ga[_eq(ga[_col(over)], v)]
        pb = gb if v is None else gb[_eq(gb[_col(over)], v)]
        lab = "" if v is None else _xlabel(over, v) + ": "
        if pa.empty or pb.empty:
            continue
        refusal = ctx.refused(pb) or ctx.refused(pa)
        if refusal:  # no run, so neither a win nor a loss: shown, not counted
            refused.append(refusal)
            shown.append(f"{lab}{mb if ctx.refused(pb) else ma} refused before running, not counted")
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
        needs = f"> {factor:g}×"
        if at_most is not None:  # and the advantage below at_most: NOT when it is shown at or above it
            d2 = _side(lo, hi, at_most, above=False)
            d = NOT if NOT in (d, d2) else (None if None in (d, d2) else HOLDS)
            needs = f"between {factor:g}× and {at_most:g}×"
        why = f"{lab}{ma} is {fmt_ratio(r, lo, hi)} as good as {mb}, needs {needs}"
        if d == HOLDS:
            # A win needs the processes themselves to separate, not only the bootstrap interval: with 4
            # forks a side, the hierarchical interval of the ratio can clear the threshold by a hair while
            # the forks' medians overlap (Mann-Whitney U on one value per fork, the test MIN_FORKS_TWO is
            # sized for; compare.py calls "faster" by the same test). Overlapping forks leave the call open.
            pu = u_test(sa, sb)
            if pu == pu and pu >= U_ALPHA:
                d = None
                why += f"; the forks' medians do not separate (U test p = {pu:.3f}, needs < {U_ALPHA:g})"
        parts.append((d, why))
    if not parts and refused:
        raise CannotTest(f"refused before running at every point both ran ({refused[0]}): no measurement")
    if not parts:
        raise CannotTest(f"missing data: no point that both {ma} and {mb} ran")
    fixed = [_xlabel(k, ctx.resolve(ga, k, v)) for k, v in (at or {}).items() if k != "processors"]
    where = " at " + ", ".join(fixed + ([f"P={p}"] if p is not None else [f"P={fmt_value(ctx.resolve(ga, 'processors', at['processors']))}"]))
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
    if ctx.refused(g1):
        raise CannotTest(f"{ma} refused before running at {_xlabel(x, to)} ({ctx.refused(g1)}): no measurement")
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
    if ctx.refused(g):
        return Verdict(ctx.claim["id"], HOLDS, f"{ma} at {_xlabel(x, at)}: refused ({ctx.refused(g)})",
                       "checked before running: the harness refused the runs at this system's limit "
                       f"({ctx.refused(g)}); nothing ran, so this is the limit, not a measured failure")
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


def _quotient_ci(a0, a1, b0, b1):
    """_quotient_ci — (q, lo, hi): (median(a1) / median(a0)) / (median(b1) / median(b0)) and its 95 % interval,
    the four samples resampled hierarchically (forks, then iterations) and independently of one another,
    as ratio_ci does for two (each point is its own set of processes)."""
    t = sides_resampled(a0, a1, b0, b1)
    if t is None:
        return (math.nan, math.nan, math.nan)
    meds, boots = t
    if min(meds) <= 0:
        return (math.nan, math.nan, math.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = (boots[1] / boots[0]) / (boots[3] / boots[2])
    lo, hi = percentile_interval(q[np.isfinite(q)])
    return ((meds[1] / meds[0]) / (meds[3] / meds[2]), lo, hi)


def rule_relative_trend(ctx: Ctx, a, b, x, direction="up", factor=1.0, at=None, **kw):
    """relative_trend — a's measured value relative to b's, a(x) / b(x) (a cost, or a rate: the direction is
    of the value, whichever is better), from the smallest x (or `from`) to the largest
    (or `to`): the quotient (a/b at the end) / (a/b at the start) above `factor` (up), below 1/`factor`
    (down), or outside [1/factor, factor] (differs: "a function of"). The comparative reading of "the
    relative cost ... increases" and of "even more so when there are more threads"."""
    ends = {}
    for name in (a, b):
        g = _series_at_p(ctx, name, at, x)
        xs = ctx.xs(g, x)
        x0 = float(ctx.resolve(g, x, kw["from"])) if "from" in kw else (xs[0] if xs else None)
        x1 = float(ctx.resolve(g, x, kw["to"])) if "to" in kw else (xs[-1] if xs else None)
        if x0 not in xs or x1 not in xs or x0 == x1:
            raise CannotTest(f"missing data: needs {ctx.member(name)} at two values of {x}"
                             + (f" ({_xlabel(x, x0)} and {_xlabel(x, x1)})" if x0 is not None else ""))
        ends[name] = (x0, x1, ctx.sample(_at_x(ctx, g, x, x0), f"{ctx.member(name)} {_xlabel(x, x0)}"),
                      ctx.sample(_at_x(ctx, g, x, x1), f"{ctx.member(name)} {_xlabel(x, x1)}"))
    x0, x1, a0, a1 = ends[a]
    _, _, b0, b1 = ends[b]
    q, lo, hi = _quotient_ci(a0, a1, b0, b1)
    ma, mb = ctx.label(a), ctx.label(b)
    ra, rb = (a1.median() / a0.median()), (b1.median() / b0.median())
    m = (f"{ma} / {mb} from {_xlabel(x, x0)} to {_xlabel(x, x1)}: {ma} ×{fmt_value(ra)}, {mb} ×{fmt_value(rb)}; "
         f"relative change {fmt_ratio(q, lo, hi)}")
    if _short(a0, a1, b0, b1):
        return Verdict(ctx.claim["id"], CANNOT, m, _short(a0, a1, b0, b1))
    if q != q:
        raise CannotTest("the quotient is undefined (a median is 0)")
    if direction == "up":
        d, need = _side(lo, hi, factor, above=True), f"> {factor:g}×"
    elif direction == "down":
        d, need = _side(lo, hi, 1 / factor, above=False), f"< {1 / factor:.3g}×"
    else:  # differs: outside [1/factor, factor]; inside it: does not hold
        inside = _inside(lo, hi, 1 / factor, factor)
        d = NOT if inside == HOLDS else (HOLDS if inside == NOT else None)
        need = f"outside [{1 / factor:.3g}, {factor:g}]"
    return _combine([(d, f"relative change {fmt_ratio(q, lo, hi)}, needs {need}")], m, ctx.claim["id"])


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
    for v in (v0, v1):
        if float(v) not in ctx.xs(g, x):
            raise CannotTest(f"missing data: no {ma} point at {_xlabel(x, v)} (measured: {x}="
                             f"{', '.join(fmt_value(u) for u in ctx.xs(g, x))})")
    if float(v0) == float(v1):
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
    lo, hi = percentile_interval(devs) if len(devs) else (math.nan, math.nan)
    k = n_forks(np.zeros(len(forks)), forks)
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
    k = n_forks(np.zeros(len(forks)), forks)
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
    "relative_trend": rule_relative_trend,
    "all": None,  # several parts of one sentence (evaluate: each part a rule, with its own quantity if given)
}


def evaluate(claim: dict, data: Data, backends: dict | None = None) -> Verdict:
    """evaluate — the verdict of one claim on the data (never raises for data problems)."""
    cid = claim["id"]
    untestable = (claim.get("needs") or {}).get("untestable")
    if untestable:
        # The claim's regime does not occur in this harness, or the metric cannot show its effect, whatever
        # the run (a "holds" or "does not hold" there would be vacuous), or the sentence is a definition:
        # counted apart from the run's own limits (Figure 5's core gate is the same reasoning for a machine).
        return Verdict(cid, CANNOT, "", UNTESTABLE + untestable)
    need = int((claim.get("needs") or {}).get("min_cores") or 1)
    if data.cores < need:
        return Verdict(cid, CANNOT, "", f"needs {need} cores; this run used at most {data.cores}")
    rule = claim["rule"]
    if rule["name"] == "all":
        vs = []
        for part in rule["args"]["parts"]:
            v = evaluate(part_claim(claim, part), data, backends)
            if part.get("quantity") and v.measured:  # which part measured what: its own workload or parameters
                v.measured = f"{_quantity_text(part['quantity'])}: {v.measured}"
            vs.append(v)
        return _all_verdicts(vs, cid)
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


def part_claim(claim: dict, part: dict) -> dict:
    """part_claim — one part of an "all" claim as a claim of its own: the part's rule, and the claim's quantity
    with the part's quantity keys over it (params merged)."""
    q = dict(claim["quantity"])
    pq = dict(part.get("quantity") or {})
    if "params" in pq:
        q["params"] = {**q.get("params", {}), **pq.pop("params")}
    q.update(pq)
    return dict(claim, quantity=q, rule={"name": part["name"], "args": part.get("args", {})})


def evaluate_all(doc: dict, data: Data) -> list[Verdict]:
    return [evaluate(c, data, doc.get("backends")) for c in doc["claims"]]


# ----------------------------------------------------------------------------- errata, predictions

def test_exists(entry: dict, root: Path = ROOT) -> bool:
    """test_exists — the file of a shown_by entry exists and, when a test (or model mutant) is named, contains that name."""
    f = root / entry["file"]
    if not f.is_file():
        return False
    return entry.get("test") is None or entry["test"] in f.read_text(errors="replace")


def _cpu(c: str) -> str:
    """_cpu — a cpu_id's processor part ("family 23 model 1"), without stepping, clock and cache."""
    m = re.match(r"\s*(family \d+ model \d+)", str(c or ""))
    return m.group(1) if m else str(c or "").split(",")[0].strip()


def predictions(doc: dict, calibration: Path | None = None, measured: Path | None = None,
                data: "Data | None" = None, run_cpus: list | None = None) -> list[dict]:
    """predictions — the P=64 predictions of scripts/scaling_model.py for the doc's "predictions" entries.

    Inputs: the calibration (docs/scaling-model/line_cost.txt) and the measured P=1 switch
    points (docs/scaling-model/measured), both from one host, as scaling_model.py uses them.
    An entry without a model column gets "no prediction". With the report's runs (run_cpus: their
    cpu_ids; data: their rows) a prediction is withdrawn — "not testable here: <why>" in `withdrawn` —
    when the calibration host's processor is not the runs' (docs/scaling-model.md: calibrate on the
    machine the prediction is for), or when its floor (the model's "at least", valid at every P > 1) is
    broken by the runs' own measurement of the same quantity at a P > 1.
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
            """model — the model's dict for the column (ns_per_switch, serial_bound_ns, ...), or None."""
            if column == "native_ns":
                return sm.predict(P, t_x, nat_local, sm.NATIVE_YIELD, hot_line_rfos=2)
            if column == "ws_ns":
                return sm.predict(P, t_x, ws_local, sm.WS_YIELD, hot_line_rfos=0)
            return None
        cpus = int(cal.get("cpus", 0) or 0)
        source = (f"scripts/scaling_model.py, calibrated on this project's {cpus or '?'}-processor machine, not on the "
                  "paper's (docs/scaling-model.md: calibrate on the machine the prediction is for): "
                  f"{calibration.relative_to(ROOT) if calibration.is_relative_to(ROOT) else calibration} "
                  f"(line transfer {t_x:.1f} ns)")
    except (OSError, ValueError, KeyError, ImportError) as e:
        source = f"scaling model unavailable: {e}"
    cal_cpu = ""
    try:
        cal_cpu = _cpu(json.loads((measured / "context.json").read_text()).get("cpu_id", ""))
    except (OSError, ValueError, AttributeError):
        pass
    runs = sorted({_cpu(c) for c in (run_cpus or []) if c})
    if model and cal_cpu:
        source += f"; calibration host: {cal_cpu}" + (f", the runs': {', '.join(runs)}" if runs else "")
    out = []
    for e in entries:
        res = model(e["model_column"], e["P"]) if (model and e.get("model_column")) else None
        v = res["ns_per_switch"] if res else None
        # The model's time per switch is max(latency / P, serial floor): where the floor wins, the
        # prediction is the floor's line transfers and nothing measured, an optimistic bound (the
        # floor leaves failed-CAS retries out), not a scaled measurement.
        bound = bool(res) and res["serial_bound_ns"] > 0 and res["serial_bound_ns"] >= res["latency_ns"] / res["P"]
        if bound:
            e = dict(e, bound=f"a bound, not a value: the model's serial floor ({res['serial_bound_ns'] / t_x:.0f} line "
                               f"transfers × {t_x:.1f} ns; failed-CAS retries left out), at least this")
        pv = e.get("paper_value")
        if v is None:
            off = "no prediction (the model predicts the context switch only)"
        elif isinstance(pv, (int, float)):
            off = f"{v / pv:.2f}× the paper's"
        else:
            off = "the paper prints no number (figure only)"
        why = []
        if res and runs and cal_cpu and runs != [cal_cpu]:
            why.append(f"the model is calibrated on {cal_cpu}, these runs ran on {', '.join(runs)} (a line transfer "
                       "differs between processors; calibrate on the runs' host)")
        low = _floor_broken(data, e, res["serial_bound_ns"]) if (bound and data is not None) else ""
        if low:
            why.append(f"its floor, at least {fmt_value(res['serial_bound_ns'])} ns at every P > 1, is broken by these "
                       f"runs' own {low}")
        withdrawn = "not testable here: " + "; and ".join(why) if why else ""
        out.append(dict(e, predicted=v, off=off, source=source, withdrawn=withdrawn))
    return out


def _floor_broken(data: "Data", entry: dict, floor: float) -> str:
    """_floor_broken — "" or the runs' measurement below the model's floor: the backend the entry's model column
    models (native_ns: native; ws_ns: native-ws), workload switch with T >= 10, any P > 1, warm median."""
    backend = {"native_ns": "native", "ws_ns": "native-ws"}.get(entry.get("model_column", ""))
    df = data.df
    if not backend or df.empty or "param.T" not in df.columns:
        return ""
    g = df[(df["backend"] == backend) & (df["workload"] == "switch") & (df["processors"] > 1)
           & (pd.to_numeric(df["param.T"], errors="coerce") >= 10)]
    g = g[(g["status"] == "ok") & (g["phase"] == "measure") & ~_noisy(g)]
    if g.empty:
        return ""
    meds = g.groupby(["processors", "param.T"])["value"].median()
    (p, t), low = meds.idxmin(), float(meds.min())
    return f"{backend} switch at P={int(p)}, T={int(float(t))}: {fmt_value(low)} ns" if low < floor else ""


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
    # A parameter the figure does not fix that still takes several values among the shown points
    # (the ParaSail plan's W=1, 2) is a row dimension of its own: pooling its values would make one
    # cell of two points, its forks counted twice and its interval spanning both.
    splits = [c for c in ok.columns if c.startswith("param.") and c not in (xc, q["series"])
              and ok[c].nunique(dropna=True) > 1]
    split_vals = [sorted(ok[c].dropna().unique(), key=_param_order) for c in splits]
    combos = list(itertools.product(*split_vals)) if splits else [()]
    header = (f"| {x or ''} | " + "".join(f"{c.replace('param.', '')} | " for c in splits)
              + " | ".join(names) + " |")
    lines += [header, "|---:|" + "---:|" * (len(splits) + len(cols))]
    # "transform": the figure's quantity relative to its value at the smallest x (Quirk's Figs. 5-6:
    # CPU time lost, cpu(P) - cpu(1), and the waste ratio, cpu(P) / cpu(1)), with its interval
    transform = fig.get("transform")
    for v, combo in itertools.product(xs, combos):
        cells = []
        for m, k in cols:
            sel = g[(g[q["series"]].astype(str) == m)]
            sok = ok[(ok[q["series"]].astype(str) == m)]
            for c, cv in zip(splits, combo):
                sel, sok = sel[_eq(sel[c], cv)], sok[_eq(sok[c], cv)]
            first = sok[_eq(sok[xc], xs[0])] if (transform and xc) else None
            if v is not None:
                sel, sok = sel[_eq(sel[xc], v)], sok[_eq(sok[xc], v)]
            if sok.empty or k not in sok.columns or sok[k].isna().all():
                cells.append("failed" if len(sel) and (sel["status"] != "ok").all() else "–")
            elif transform and (first is None or first.empty or first[k].isna().all()):
                cells.append("–")
            elif transform:
                sk, s0 = with_forks(sok[k].dropna(), sok), with_forks(first[k].dropna(), first)
                f = min(n_forks(sk), n_forks(s0))
                forks_seen.append(f)
                cells.append(fmt_ratio(*ratio_ci(s0, sk), forks=f) if transform == "ratio_to_first"
                             else fmt_ci(*diff_ci(s0, sk), forks=f))
            else:
                parts = []
                for sf in _sweeps(sok):  # one point measured by two sweeps: each its own, never pooled
                    sk = with_forks(sf[k].dropna(), sf)
                    forks_seen.append(n_forks(sk))
                    parts.append(fmt_ci(*median_ci(sk), forks=forks_seen[-1]))
                cells.append(_sweeps_cell(parts))
        lines.append(f"| {fmt_value(v) if v is not None else ''} | " + "".join(f"{_param_text(cv)} | " for cv in combo)
                     + " | ".join(cells) + " |")
    what = {"ratio_to_first": f"{metric.replace('counter.', '')} relative to the smallest {x}: median ratio",
            "diff_to_first": f"{metric.replace('counter.', '')} minus its value at the smallest {x}: median difference"
            }.get(transform, f"{unit}, median")
    return (f"Ours ({what} (interval over forks: {_coverage_note(forks_seen, transform)}), {where}; "
            f"{_forks_note(forks_seen)}; a point two sweeps measured shows each sweep apart, never pooled; failed: "
            "every run failed; –: not run):\n\n" + "\n".join(lines) + "\n")


def _sweeps(rows: pd.DataFrame) -> list:
    """_sweeps — rows split by the results folder (sweep) they came from, in order of first sight. Two sweeps
    of one point are two moments of the machine (scripts/compare.py, SWEEP_FACTOR): their forks are not one
    sample, so a table shows each apart instead of a pooled median between two states."""
    if "folder" not in rows.columns or rows["folder"].nunique() <= 1:
        return [rows]
    return [g for _, g in rows.groupby("folder", sort=False)]


def _sweeps_cell(parts: list) -> str:
    """_sweeps_cell — one cell from each sweep's text: the text alone for one sweep, else "a / b (2 sweeps, not
    pooled)"."""
    if len(parts) <= 1:
        return parts[0] if parts else "–"
    return " / ".join(parts) + f" ({len(parts)} sweeps, not pooled)"


def _param_order(v):
    """_param_order — numbers first, by value, then text: a parameter's values in a table's rows."""
    n = _num(v)
    return (0, n, "") if isinstance(n, float) else (1, 0.0, str(v))


def _param_text(v) -> str:
    n = _num(v)
    return fmt_value(n) if isinstance(n, float) else _md(v)


def _coverage_note(forks: list, transform=None) -> str:
    """_coverage_note — what the intervals of a table with these forks per point cover (coopbench.stats)."""
    if transform:
        return f"a bootstrap's, 95 % from {MIN_FORKS_TWO} forks a side, marked in the cell when fewer"
    if forks and min(forks) >= MIN_FORKS_ONE:
        return f"order statistics, at least {min(coverage_pct(f) for f in forks)} % (exact binomial)"
    return ("order statistics, exact coverage in the cell where below 95 % (85 % at 4 forks), at least 95 % "
            "where unmarked")


def _forks_note(forks: list) -> str:
    """_forks_note — how many forks the shown points had, and what a 1-fork range is."""
    if not forks:
        return "no forks"
    lo, hi = min(forks), max(forks)
    txt = f"{lo} fork{'' if lo == 1 else 's'} per point" if lo == hi else f"{lo}–{hi} forks per point"
    if lo <= 1:
        txt += " (1 fork: variation within one process only, no interval across processes)"
    return txt


def _has_clean(ctx: "Ctx", rows: pd.DataFrame) -> bool:
    try:
        ctx.sample(rows, "")
        return True
    except CannotTest:
        return False


def table1_section(doc: dict, data: Data) -> str:
    """table1_section — the paper's Table 1 beside our medians (ms) of its systems and the peers."""
    out = []
    rows = read_table1()
    cols = ["native", "pthreads"] + [p for p in doc.get("peers", [])]
    present = set(data.df["backend"]) if not data.df.empty else set()
    cols = [c for c in cols if c in present]
    out.append("| row | benchmark | paper Native | paper Linux | paper Windows | " + " | ".join(f"ours {c}" for c in cols)
               + " | ours native / pthreads | paper Native / Linux | our runs |")
    out.append("|---|---|---:|---:|---:|" + "---:|" * len(cols) + "---:|---:|---|")
    forks_seen = []
    below = []  # the paper's Native ms / ours, per row: how far the absolute times are apart
    for row in rows:
        params = parse_params(row["params"])
        cells = []
        meds, at, ctxs = {}, {}, {}
        runs = "–"
        for c in cols:
            claim = {"id": "t1", "quantity": {"workload": row["workload"], "series": "backend", "params": params}}
            try:
                ctx = Ctx(claim, data, {})
                gg = ctx.of(c)
                p = int(gg[gg["status"] == "ok"]["processors"].max()) if (gg["status"] == "ok").any() else None
                if p is None:
                    cells.append("failed")
                    continue
                gp = gg[gg["processors"] == p]
                # one point measured by two sweeps (reproduce.sh's apps and implicit-news both run tokio's
                # news): each sweep's median apart, never one pooled between two moments of the machine
                per = [ctx.sample(sf, c) for sf in _sweeps(gp) if _has_clean(ctx, sf)]
                if not per:
                    ctx.sample(gp, c)  # raises CannotTest with the reason (noisy, no ok run)
                s = per[0]
                meds[c], at[c], ctxs[c] = per, gp, ctx
                if c == "native":
                    runs = _runs_of_points(gp).split(" (")[0]
                    below.append(float(row["native_ms"]) / float(s.median()))
                cells.append(_sweeps_cell([fmt_value(float(v.median())) for v in per])
                             + (f" (P={p})" if c in ("native", "pthreads") else ""))
            except CannotTest:
                cells.append("–")
        for per in meds.values():
            forks_seen += [n_forks(v) for v in per]
        r = "–"
        if "native" in meds and "pthreads" in meds:
            # the ratio within each sweep that ran both (a ratio of two sweeps' moments is no comparison)
            ra = {str(g["folder"].iloc[0]) if "folder" in g.columns else "": g for g in _sweeps(at["pthreads"])}
            rb = {str(g["folder"].iloc[0]) if "folder" in g.columns else "": g for g in _sweeps(at["native"])}
            parts = []
            for f in [f for f in rb if f in ra and _has_clean(ctxs["native"], rb[f]) and _has_clean(ctxs["pthreads"], ra[f])]:
                a_, b_ = ctxs["pthreads"].sample(ra[f], "pthreads"), ctxs["native"].sample(rb[f], "native")
                parts.append(fmt_ratio(*ratio_ci(a_, b_), forks=min(n_forks(a_), n_forks(b_))))
            r = _sweeps_cell(parts) if parts else "– (in different sweeps)"
        out.append(f"| {row['row']} | {row['benchmark']} ({row['params'].replace(';', ', ')}) | {float(row['native_ms']):,.0f} | "
                   f"{float(row['linux_ms']):,.0f} | {float(row['windows_ms']):,.0f} | " + " | ".join(cells)
                   + f" | {r} | {float(row['native_ms']) / float(row['linux_ms']):.2f}× | {runs} |")
    why_abs = doc.get("table1_absolute", "")
    span = (f"The paper's Native times are {min(below):.2g}× to {max(below):,.0f}× ours. " if below else "")
    return ("The paper's ms (64 cores) beside our medians in ms at the largest P each system ran; the ratio with "
            f"its bootstrap interval (hierarchical over forks, 95 % from {MIN_FORKS_TWO} forks a side, marked when fewer; "
            f"{_forks_note(forks_seen)}; a point two sweeps measured shows each sweep's value apart, never pooled). "
            "Our parameters are the "
            "paper's where the run used the paper plan (the sizes above). \"our runs\": warm medians leave out each "
            "fork's first run (a fork's first run carries the program's one-time start-up costs); cold single runs are one "
            "run per fresh process. " + span + why_abs + " Only the ratios (the last two number columns) are compared."
            "\n\n" + "\n".join(out) + "\n")


def _command_summary(cmd: str) -> str:
    """_command_summary — the systems (-b), workloads (-w), plan and fixed parameters (-p) of a coopbench run command."""
    words = cmd.split()
    out = []
    for flag, name in (("-w", "workloads"), ("-b", "systems"), ("--plan", "plan"), ("-p", ""), ("-P", "P")):
        vals = [words[i + 1] for i, w in enumerate(words[:-1]) if w == flag]
        if vals:
            out.append(", ".join(vals) if not name else f"{name} {', '.join(vals)}")
    return "; ".join(out)


def _figure_links(fig: dict, results: list, out_dir: Path) -> list:
    """_figure_links — (path, markdown) of each figure file of FIG, named by the run that drew it and what that
    run measured (two runs can draw files of the same name: Fig. 10 from the matrix run and the implicit run)."""
    import os
    links = []
    for r in results:
        if not fig.get("figure_file"):
            continue
        for f in sorted(Path(r.dir, "figures").glob(fig["figure_file"] + ".png")):
            rel = os.path.relpath(f, out_dir)
            what = _command_summary(str(r.context.get("coopbench_command") or ""))
            name = f"{fig['id']}: {f.name} of run `{Path(r.dir).name}` ({what})" if what else f"{fig['id']}: {f.name} of run `{Path(r.dir).name}`"
            links.append((rel, f"![{_md(name)}]({rel})\n\n*{_md(name)}*"))
    return links


def _runs_of_points(g: pd.DataFrame) -> str:
    """_runs_of_points — whether G's points are warm medians (a warm-up run dropped, several timed runs per fork)
    or cold single runs (one timed run per fresh process), from the rows themselves."""
    meas = g[g["phase"] == "measure"]
    if meas.empty:
        return "no timed runs"
    per_fork = meas.groupby(["point", "repetition"]).size()
    warm = (g["phase"] == "warmup").any()
    k = int(per_fork.median())
    if warm:
        return f"warm medians (the first run of each fork dropped as warm-up, {k} timed run{'s' if k > 1 else ''} per fork)"
    if k <= 1:
        return "cold single runs (one timed run per fresh process, no warm-up)"
    return f"{k} timed runs per fork, none dropped (the first run included: cold and warm mixed)"


def _plain(v) -> str:
    """_plain — a parameter value without thousands separators (a list of them stays readable)."""
    if isinstance(v, str):
        return v
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def figure_sizes(fig: dict, data: Data, results: list) -> str:
    """figure_sizes — the sizes a figure's points ran at (the run, its plan, the parameters' values) and whether
    they are warm medians or cold single runs."""
    w = fig.get("workload")
    df = data.df
    if not w or df.empty:
        return ""
    g = df[df["workload"] == w]
    if g.empty:
        return ""
    parts = []
    for folder, gf in g.groupby("folder", sort=False):
        r = next((x for x in results if str(getattr(x, "dir", "")) == folder), None)
        plan = (r.context.get("plan") if r is not None else None) or "none (the command's -p values)"
        params = []
        for c in sorted(x for x in gf.columns if x.startswith("param.")):
            vals = gf[c].dropna().unique()
            if len(vals):
                vs = sorted(vals, key=lambda v: (isinstance(v, str), v))
                params.append(f"{c[6:]}={', '.join(_plain(v) for v in vs)}")
        ps = sorted(set(gf["processors"].astype(int)))
        parts.append(f"run `{Path(folder).name}`, plan {plan}: {'; '.join(params) or 'no parameters'}; "
                     f"P={','.join(map(str, ps))}; {_runs_of_points(gf)}")
    return "**Sizes:** " + " | ".join(parts) + "."


def _rel(f: Path, base: Path) -> str:
    import os
    return os.path.relpath(f, base)


def rule_text(rule: dict) -> str:
    """rule_text — a rule as the report prints it: `name(args)`, an "all" rule as its parts joined by "and"."""
    if rule["name"] == "all":
        return " and ".join(rule_text(p) + (f" on {_quantity_text(p['quantity'])}" if p.get("quantity") else "")
                            for p in rule["args"]["parts"])
    args = ", ".join(f"{k}={json.dumps(a) if not isinstance(a, str) else a}" for k, a in rule.get("args", {}).items())
    return f"`{rule['name']}({args})`"


def _quantity_text(q: dict) -> str:
    bits = [str(q["workload"])] if "workload" in q else []
    bits += [f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in q.get("params", {}).items()]
    return " ".join(bits)


def summary_line(verdicts: list) -> str:
    """summary_line — the counts of each status, "cannot be tested here" by kind, and the holds that rest on a
    system limit checked before running rather than on a measurement."""
    counts = {s: sum(v.status == s for v in verdicts) for s in STATUSES}
    kinds = {}
    for v in verdicts:
        if v.status == CANNOT:
            kinds[v.kind] = kinds.get(v.kind, 0) + 1
    by_kind = "; ".join(f"{kinds[k]} {KINDS_COUNTED[k]}" for k in KINDS if kinds.get(k))
    refused = sum(v.status == HOLDS and v.kind == "refused" for v in verdicts)
    text = (f"**Summary:** {len(verdicts)} claims: {counts[HOLDS]} hold, {counts[NOT]} do not hold, "
            f"{counts[CANNOT]} cannot be tested here" + (f" ({by_kind})" if by_kind else "") + ".")
    if refused:
        text += (f" Of those that hold, {refused} rest{'s' if refused == 1 else ''} on a system limit the harness "
                 "checked before running (no run was made), not on a measurement.")
    return text


def table1_sizes(data: Data, results: list) -> str:
    """table1_sizes — Table 1's rows' runs: the run folders and plans they came from."""
    rows = read_table1()
    ws = {r["workload"] for r in rows}
    df = data.df
    if df.empty:
        return ""
    g = df[df["workload"].isin(ws)]
    out = []
    for folder, gf in g.groupby("folder", sort=False):
        r = next((x for x in results if str(getattr(x, "dir", "")) == folder), None)
        plan = (r.context.get("plan") if r is not None else None) or "none"
        out.append(f"run `{Path(folder).name}` (plan {plan}: {', '.join(sorted(set(gf['workload'])))})")
    return "**Sizes:** the paper's parameters (each row's), from " + ", ".join(out) + "; warm or cold per row in \"our runs\"."


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
    dirty = []
    for r in results:
        if str(r.context.get("git_commit") or "").endswith("-dirty"):
            diff = Path(r.dir, "uncommitted.diff")
            dirty.append(f"`{Path(r.dir).name}`" + (f" (the changes: [{diff.name}]({_rel(diff, out.parent)}))" if diff.is_file()
                                                   else " (what differed was not recorded)"))
    noisy = int(_noisy(data.df).sum()) if not data.df.empty else 0
    # Every run's processor, named whole (model, family, clock, cache): a reproduction's runs made on two
    # different processors (a cloud host changes under a VM between sessions) cannot be read as one machine.
    def processor(c: dict) -> str:
        return str(c.get("cpu_model") or "?") + (f" ({c['cpu_id']})" if c.get("cpu_id") else "")
    runs_on = {}  # processor -> the runs made on it, in the order given
    for r in results:
        runs_on.setdefault(processor(r.context), []).append(f"`{Path(r.dir).name}`")
    machine = next(iter(runs_on)) if len(runs_on) == 1 else (
        "**the runs were made on different processors**: "
        + "; ".join(f"{m} ({', '.join(names)})" for m, names in runs_on.items()))
    L.append(f"Machine: {machine}, {data.cores} cores available (the paper: "
             f"{doc.get('paper_cores') or 'not stated'}); commit {commits}; plan {plans}. Statistics: {METHOD}; "
             f"the {noisy} rows the harness marked noisy (a busy machine) are left out."
             + (f" Made from a tree with uncommitted changes (the commit's `-dirty`): {', '.join(dirty)}; "
                "`scripts/reproduce.sh` now refuses such a tree unless `--allow-dirty`, which records the changes."
                if dirty else ""))
    L += ["", "Runs (sizes: the paper's where the plan is `paper` or the parameters are given, the quick plan's otherwise):", ""]
    for r in results:
        cmd = r.context.get("coopbench_command") or "coopbench run (command not recorded)"
        fk = r.df.groupby("point")["repetition"].nunique()
        L.append(f"- `{Path(r.dir).name}`: {len(r.df['point'].unique())} points, {len(r.df)} rows, "
                 f"{_forks_note(sorted(set(fk.astype(int))))}; `{_md(cmd)}`")
    from .stats import FORKS_RULE
    L += ["", summary_line(verdicts), "", f"Forks: {FORKS_RULE}. A claim with fewer shows what it measured and says "
          "\"N forks, need M\".", ""]
    L += ["## Figures and tables: ours beside the paper's", ""]
    shown_files = set()
    for fig in doc.get("figures", []):
        L += [f"### {fig['id']}: {fig['title']}", ""]
        L.append(f"**Paper:** {fig['shape']}" + (f" Numbers: {fig['paper_data']}." if fig.get("paper_data") and fig["paper_data"] != "table1.csv" else ""))
        L.append("")
        if fig.get("absolute"):
            L += [f"**Absolute values:** {fig['absolute']}", ""]
        if fig["id"] == "Table 1":
            L += [table1_sizes(data, results), ""]
            L.append(table1_section(doc, data))
        else:
            sizes = figure_sizes(fig, data, results)
            L += [sizes, ""] if sizes else []
            L.append(figure_table(doc, fig, data))
        links = _figure_links(fig, results, out.parent)
        for rel, md in links:
            if rel in shown_files:
                L.append(f"(drawn in {Path(rel).name} above)")
            else:
                L.append(md)
        shown_files |= {rel for rel, _ in links}
        L += [""]
    L += ["## Claims", "",
          "| id | figure (section) | the paper says | rule | ours (interval) | verdict | why |",
          "|---|---|---|---|---|---|---|"]
    for c, v in zip(doc["claims"], verdicts):
        note = (c.get("needs") or {}).get("note", "")
        reading = " (a design statement; the performance reading is the project's)" if c.get("reading") == "project" else ""
        # the forks rule is said once above the table, not in every row
        why = v.why.replace(f" ({forks_why(MIN_FORKS_TWO)})", "").replace(f" ({forks_why(MIN_FORKS_ONE)})", "")
        if c.get("cause") and (v.status == NOT or v.kind in ("cores", "straddles", "refused", "missing")):
            why = f"Cause: {c['cause']}" + (f" (rule: {why})" if why else "")
        L.append(f"| {c['id']} | {c['figure']} (§{c.get('section', '?')}) | “{_md(c['quote'])}”{reading} | {_md(rule_text(c['rule']))}"
                 f"{'<br>' + _md(note) if note else ''} | {_md(v.measured) or '–'} | **{v.label}** | {_md(why)} |")
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
    preds = predictions(doc, data=data, run_cpus=[(r.context or {}).get("cpu_id", "") for r in results])
    L += ["", "## Predictions at P = 64" + (" (a model calibrated on this machine, not the paper's), marked predicted"
                                          if preds else ""), ""]
    if preds:
        L += [f"From {preds[0]['source']}. The model predicts the context switch only; a line transfer on the paper's "
              "four-socket Opteron differs from this VM's, so these say what this machine's costs would give at 64 "
              "processors, not what the paper's machine measured. Where the paper prints a number it stands beside "
              "the prediction; for Figs. 7-9 it prints none.", "",
              "| figure | quantity | paper (64 cores) | **predicted** (P = 64) | how far off |", "|---|---|---:|---:|---|"]
        for p in preds:
            pv = p.get("paper_value")
            pv = "see Table 1" if pv == "table1.csv" else (fmt_value(pv) if isinstance(pv, (int, float)) else "no number printed")
            pr = (("≥ " if p.get("bound") else "") + f"{fmt_value(p['predicted'])} (predicted"
                  + (f"; {p['bound']}" if p.get("bound") else "") + ")") if p["predicted"] is not None else "no prediction"
            if p.get("withdrawn"):  # the model's number stays visible, struck, beside why it is no prediction
                pr = f"~~{pr}~~ {p['withdrawn']}"
            L.append(f"| {p['figure']} | {_md(p['quantity'])} | {pv} | {_md(pr)} | {'–' if p.get('withdrawn') else p['off']} |")
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
    claims = []
    for c in doc["claims"]:
        r = c.get("rule", {})
        if r.get("name") == "all":
            parts = r.get("args", {}).get("parts") or []
            if not parts or any(p.get("name") == "all" for p in parts):
                problems.append(f"{c['id']}: all needs parts, none of them all")
            claims += [part_claim(c, p) for p in parts if p.get("name") != "all"]
        else:
            claims.append(c)
    for c in claims:
        r = c.get("rule", {})
        if r.get("name") not in RULES or RULES[r.get("name")] is None:
            problems.append(f"{c['id']}: unknown rule {r.get('name')}")
            continue
        sig = inspect.signature(RULES[r["name"]])
        names = set(sig.parameters) - {"ctx", "kw"}
        extra = set(r.get("args", {})) - names - ({"from", "at", "to"} if "kw" in sig.parameters else set())
        if extra:
            problems.append(f"{c['id']}: {r['name']} takes no {sorted(extra)}")
        w = c["quantity"]["workload"]
        for name in (w if isinstance(w, list) else [w]):
            if name not in known_w:
                problems.append(f"{c['id']}: unknown workload {name}")
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
