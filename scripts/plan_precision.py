#!/usr/bin/env python3
"""plan_precision.py — per point, the forks and timed iterations per fork that reach a precision at the least machine time.

Usage: plan_precision.py FOLDER [FOLDER...] [--precision 2%] [--budget MINUTES] [--fork-overhead SECONDS]
                         [--workload W] [--format text|csv|r]

From a pilot (or resumed) results folder, per point:

  1. the variance at each level (Kalibera and Jones, "Rigorous Benchmarking in Reasonable
     Time", ISMM 2013: a random-effects model with one level per kind of repetition, here
     forks (fresh processes) over iterations; the variance estimators as the authors corrected
     them in their updated version of the paper):
        T1² = S1² — the mean over forks of the variance among a fork's timed iterations;
        T2² = S2² − T1²/n — the variance among the forks' means S2², less what the iteration
              noise contributes to it (n: timed iterations per fork; 0 when negative);
     the cold first iteration (iteration 0, a fresh process) is a level of its own: it is
     never a timed iteration, and its own variance over forks is reported beside (cold_cv);
  2. the costs: c1, the median seconds of one timed iteration; c2, what one more fork costs
     besides its timed iterations: its cold and warm-up iterations (their seconds) plus
     --fork-overhead (process start, default 0.05 s);
  3. the optimal iterations per fork (Kalibera and Jones's optimal repetition count for the
     lower level, which minimises the machine time for a given variance of the mean):
        n1 = ceil( sqrt( (c2 / c1) · (T1² / T2²) ) )   (capped at --max-iterations; 1 when T1² = 0)
  4. the forks for the requested relative half-width h of the 95 % interval of the mean:
        the least n2 with  t(0.975, n2 − 1) · sqrt( T2²/n2 + T1²/(n1·n2) )  <=  h · mean,
     then at least stats.MIN_FORKS_TWO (4), the fewest with which a comparison can be called
     (a rank test on k forks a side cannot reach p < 0.05 below 4); "verdict forks" shows
     stats.MIN_FORKS_ONE (6) where a single point's interval is tested;
  5. the machine time n2 · (c2 + n1 · c1).

--budget MINUTES: when the whole plan takes longer, the precision is relaxed (the same for every
point) until it fits, and both are printed. --format r prints only the repetitions to pass to
`coopbench run -r` for the whole run, keeping each point's own iterations per fork (run_forks: the forks 90 % of
the points need, at least 4, at most what --budget pays for): what scripts/reproduce.sh uses
(COOPBENCH_PRECISION, COOPBENCH_BUDGET_MIN).

The precision is that of the mean, a model the planning needs (Kalibera and Jones plan for the
mean); the reports' intervals are the hierarchical bootstrap's of the median, whose width is
close to it for the symmetric spread of most points and wider for skewed ones.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import coopbench as cr  # noqa: E402
from coopbench import stats  # noqa: E402

FIELDS = ["point", "workload", "forks", "iterations", "mean", "iter_cv", "fork_cv", "cold_cv", "c1_s", "c2_s",
          "n1", "n2", "verdict_forks", "seconds", "note"]


def _t(df: int) -> float:
    from scipy.stats import t  # Debian's python3-scipy
    return float(t.ppf(0.975, df))


def levels(g: pd.DataFrame, fork_overhead: float) -> dict | None:
    """levels — one point's variance components (T1², T2²), costs (c1, c2) and its cold spread, or None."""
    ok = g[(g["status"] == "ok") & g["value"].notna()]
    timed = ok[ok["phase"] == "measure"]
    by = stats.timed_forks(g)
    if len(by) < 2:
        return None
    n = float(np.mean([len(b) for b in by]))
    t1 = float(np.mean([np.var(b, ddof=1) for b in by if len(b) > 1])) if any(len(b) > 1 for b in by) else 0.0
    s2 = float(np.var([b.mean() for b in by], ddof=1))
    t2 = max(s2 - t1 / n, 0.0)
    mean = float(np.mean(np.concatenate(by)))
    secs = timed["seconds"].dropna() if "seconds" in timed.columns else pd.Series(dtype=float)
    c1 = float(secs.median()) if len(secs) else math.nan
    untimed = ok[ok["phase"] != "measure"]
    if "seconds" in untimed.columns and len(untimed):
        c2 = float(untimed.groupby(stats.fork_labels(untimed))["seconds"].sum().median()) + fork_overhead
    else:
        c2 = fork_overhead
    cold = ok[ok["iteration"] == 0]["value"].to_numpy(dtype=float)
    cold_cv = float(np.std(cold, ddof=1) / np.mean(cold)) if len(cold) > 1 and np.mean(cold) > 0 else math.nan
    return {"forks": len(by), "iterations": n, "mean": mean, "t1": t1, "t2": t2, "c1": c1, "c2": c2,
            "cold_cv": cold_cv}


def plan_point(lv: dict, precision: float, max_iterations: int = 100, max_forks: int = 1000) -> tuple:
    """plan_point — (n1, n2, seconds): iterations per fork, forks, machine time for the relative half-width."""
    t1, t2, c1, c2, mean = lv["t1"], lv["t2"], lv["c1"], lv["c2"], lv["mean"]
    if not (c1 > 0):
        c1 = 1e-3
    if t1 <= 0:
        n1 = 1
    elif t2 <= 0:
        n1 = max_iterations
    else:
        n1 = min(max_iterations, max(1, math.ceil(math.sqrt((c2 / c1) * (t1 / t2)))))
    target = precision * abs(mean)
    n2 = 2
    while n2 < max_forks and _t(n2 - 1) * math.sqrt(t2 / n2 + t1 / (n1 * n2)) > target:
        n2 += 1
    n2 = max(n2, stats.MIN_FORKS_TWO)
    return n1, n2, n2 * (c2 + n1 * c1)


def plan(df: pd.DataFrame, precision: float, fork_overhead: float, max_iterations: int = 100) -> pd.DataFrame:
    rows = []
    for point, g in df.groupby("point", sort=True):
        lv = levels(g, fork_overhead)
        if lv is None:
            rows.append({"point": point, "workload": g["workload"].iloc[0], "forks": int(g["repetition"].nunique()),
                         "note": "fewer than 2 forks with timed values: no variance between forks to estimate"})
            continue
        n1, n2, secs = plan_point(lv, precision, max_iterations)
        note = "" if lv["t2"] > 0 else "no variance between forks seen"
        rows.append({"point": point, "workload": g["workload"].iloc[0], "forks": lv["forks"],
                     "iterations": lv["iterations"], "mean": lv["mean"],
                     "iter_cv": math.sqrt(lv["t1"]) / lv["mean"] if lv["mean"] else math.nan,
                     "fork_cv": math.sqrt(lv["t2"]) / lv["mean"] if lv["mean"] else math.nan,
                     "cold_cv": lv["cold_cv"], "c1_s": lv["c1"], "c2_s": lv["c2"], "n1": n1, "n2": n2,
                     "verdict_forks": max(n2, stats.MIN_FORKS_ONE), "seconds": secs, "note": note})
    return pd.DataFrame(rows, columns=FIELDS)


def run_forks(planned: pd.DataFrame, budget_min: float | None, share: float = 0.9,
              round_seconds: float | None = None) -> tuple:
    """run_forks — (R, why): one -r for a whole run that keeps each point's own iterations per fork: the forks
    that `share` of the points need for the precision (n2), at least stats.MIN_FORKS_TWO, at most what the
    budget pays for (a fork of every point costs c2 + iterations · c1, as in the pilot, or round_seconds:
    the wall time one fork of every point took, process starts and the driver's own work included)."""
    need = int(math.ceil(np.quantile(planned["n2"].astype(float), share)))
    per_fork = round_seconds or float((planned["c2_s"] + planned["iterations"] * planned["c1_s"].fillna(0)).sum())
    r = max(need, stats.MIN_FORKS_TWO)
    why = f"{share:.0%} of the {len(planned)} points reach the precision with {need} forks"
    if budget_min is not None and per_fork > 0:
        fit = int(budget_min * 60 // per_fork)
        if fit < r:
            r = max(fit, stats.MIN_FORKS_TWO)
            why += (f"; the budget of {budget_min:g} min pays for {fit} forks of every point "
                    f"({per_fork:.0f} s a round)" + (f", raised to {r}: a comparison's fewest" if fit < r else ""))
    return r, why


def parse_precision(s: str) -> float:
    v = float(s[:-1]) / 100 if s.endswith("%") else float(s)
    if not 0 < v < 1:
        raise ValueError(s)
    return v


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", type=Path, nargs="+", help="pilot or resumed results folders (2 or more forks a point)")
    ap.add_argument("--precision", default="2%", help="relative half-width of the 95 %% interval (default 2%%)")
    ap.add_argument("--budget", type=float, help="machine time in minutes the whole plan may take")
    ap.add_argument("--fork-overhead", type=float, default=0.05,
                    help="seconds a fresh process costs besides its iterations (default 0.05)")
    ap.add_argument("--max-iterations", type=int, default=100, help="cap on timed iterations per fork (default 100)")
    ap.add_argument("--round-seconds", type=float,
                    help="--format r: wall seconds one fork of every point takes (default: from the pilot's "
                         "iteration times and --fork-overhead, which leave out the driver's own work)")
    ap.add_argument("--workload", action="append", default=[], help="only this workload (repeatable)")
    ap.add_argument("--format", choices=("text", "csv", "r"), default="text")
    a = ap.parse_args(argv)
    try:
        precision = parse_precision(a.precision)
    except ValueError:
        print(f"plan_precision.py: --precision must be a share in (0, 1) or a percentage, not {a.precision}",
              file=sys.stderr)
        return 2
    frames = []
    for d in a.folders:
        try:
            frames.append(cr.load(d).df.assign(folder=str(d)))  # two folders' forks stay two (stats.fork_labels)
        except cr.ResultsError as e:
            print(f"plan_precision.py: {e}", file=sys.stderr)
            return 2
    df = pd.concat(frames, ignore_index=True)
    if a.workload:
        df = df[df["workload"].isin(a.workload)]
    p = plan(df, precision, a.fork_overhead, a.max_iterations)
    planned = p[p["n2"].notna()]
    if planned.empty:
        print("plan_precision.py: no point with 2 or more forks of timed values to plan from", file=sys.stderr)
        return 1
    reached = precision
    total = float(planned["seconds"].sum())
    if a.budget is not None and total > a.budget * 60:
        lo, hi = precision, 1.0  # relax the precision until the plan fits (bisection on a monotone total)
        for _ in range(40):
            mid = (lo + hi) / 2
            if float(plan(df, mid, a.fork_overhead, a.max_iterations)["seconds"].sum()) > a.budget * 60:
                lo = mid
            else:
                hi = mid
        reached = hi
        p = plan(df, reached, a.fork_overhead, a.max_iterations)
        planned = p[p["n2"].notna()]
        total = float(planned["seconds"].sum())
    if a.format == "r":
        r, why = run_forks(planned, a.budget, round_seconds=a.round_seconds)
        print(r)
        print(f"plan_precision.py: -r {r}: {why}", file=sys.stderr)
        return 0
    if a.format == "csv":
        p.to_csv(sys.stdout, index=False)
        return 0
    print(f"Plan for a {precision:.1%} relative half-width of the 95 % interval (Kalibera and Jones's optimal "
          f"repetition counts; fork overhead {a.fork_overhead:g} s besides the cold and warm-up iterations)")
    if reached != precision:
        print(f"over the budget of {a.budget:g} min: relaxed to {reached:.1%}, the best this budget allows")
    print(f"\n{'point':<52} {'forks':>5} {'iters':>5} {'iter cv':>7} {'fork cv':>7} {'cold cv':>7} "
          f"{'n1':>4} {'n2':>4} {'verdict':>7} {'seconds':>8}")
    for _, r in p.iterrows():
        if r["n2"] != r["n2"]:
            print(f"{r['point']:<52} {r['forks']:>5}  {r['note']}")
            continue
        print(f"{r['point']:<52} {r['forks']:>5} {r['iterations']:>5.0f} {r['iter_cv']:>7.2%} {r['fork_cv']:>7.2%} "
              f"{r['cold_cv']:>7.2%} {int(r['n1']):>4} {int(r['n2']):>4} {int(r['verdict_forks']):>7} "
              f"{r['seconds']:>8.1f}" + (f"  {r['note']}" if r["note"] else ""))
    print(f"\nn1: timed iterations per fork, n2: forks (at least {stats.MIN_FORKS_TWO}: a comparison's fewest), "
          f"verdict: forks for a single point's interval (at least {stats.MIN_FORKS_ONE}).\n"
          f"Machine time of the plan: {total / 60:.1f} min ({len(planned)} points; the run's own overhead apart). "
          f"Forks needed: median point {int(planned['n2'].median())}, 90 % of the points "
          f"{int(math.ceil(np.quantile(planned['n2'].astype(float), 0.9)))}, the worst {int(planned['n2'].max())} "
          f"(a pilot of few forks estimates the variance between forks coarsely: plan again from the bigger run).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
