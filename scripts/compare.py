#!/usr/bin/env python3
"""compare.py — per-point ratios B/A between two coopbench results folders.

Usage: compare.py A B [--workload W ...] [--column C] [--format text|csv]

Points are matched by their `point` id (backend/workload/params/P). Each side's value
of a point is the median of its ok repetitions of the primary `value` (or of --column,
e.g. peak_rss_kib, cpu_seconds, seconds, counter.<name>). For each workload, prints every point
with A's median, B's median and the ratio B/A (for times, > 1 means B is slower), then
the geometric mean of the ratios of the workload's matched points; finally the
geometric mean over all matched points. Points measured on one side only, or with no
ok repetition on a side, are listed with their state ("only in A", "failed in B", ...)
and left out of the means.

Exit status: 0 when at least one point is matched; 1 when no point is matched; 2 when
A or B is not a results folder (no readable results.csv) or lacks --column. Reads
results.csv only.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402

import coopbench_results as cr  # noqa: E402


def point_medians(df: pd.DataFrame, column: str = "value") -> pd.DataFrame:
    """point_medians — per point: workload, unit, median of `column` over ok repetitions (NaN if none), counts."""
    rows = []
    for point, g in df.groupby("point", sort=True):
        ok = g[(g["status"] == "ok") & g[column].notna()][column]
        units = [u for u in g["unit"] if u] if column == "value" else [column]
        rows.append({"point": point, "workload": g["workload"].iloc[0], "unit": units[0] if units else "",
                     "median": ok.median() if len(ok) else math.nan, "n_ok": len(ok), "n": len(g)})
    return pd.DataFrame(rows, columns=["point", "workload", "unit", "median", "n_ok", "n"])


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """compare — the outer join of two point_medians frames with `ratio` (B/A) and `state`."""
    m = a.merge(b, on="point", how="outer", suffixes=("_a", "_b"))
    m["workload"] = m["workload_a"].fillna(m["workload_b"])
    m["unit"] = m["unit_a"].fillna(m["unit_b"])
    states, ratios = [], []
    for _, r in m.iterrows():
        in_a, in_b = r["n_a"] == r["n_a"], r["n_b"] == r["n_b"]  # NaN when absent
        ma, mb = r["median_a"], r["median_b"]
        if not in_a:
            states.append("only in B")
        elif not in_b:
            states.append("only in A")
        elif ma != ma and mb != mb:
            states.append("failed in A and B")
        elif ma != ma:
            states.append("failed in A")
        elif mb != mb:
            states.append("failed in B")
        elif ma <= 0 or mb <= 0:
            states.append("not positive")
        else:
            states.append("ok")
            ratios.append(mb / ma)
            continue
        ratios.append(math.nan)
    m["state"] = states
    m["ratio"] = ratios
    return m.sort_values(["workload", "point"]).reset_index(drop=True)


def geomean(xs) -> float:
    """geomean — geometric mean of positive numbers (NaN for none)."""
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def _num(v) -> str:
    if v != v:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def print_text(m: pd.DataFrame, a_name: str, b_name: str, out=sys.stdout) -> None:
    """print_text — the comparison as aligned text, one block per workload."""
    print(f"A = {a_name}\nB = {b_name}\nratio = B/A of the per-point medians (for times: > 1 means B is slower)",
          file=out)
    width = max([len(p) for p in m["point"]] + [5])
    for w, g in m.groupby("workload", sort=True):
        units = [u for u in g["unit"] if isinstance(u, str) and u]
        print(f"\n== {w}" + (f" ({units[0]})" if units else ""), file=out)
        print(f"{'point':<{width}}  {'A':>11}  {'B':>11}  {'B/A':>8}", file=out)
        for _, r in g.iterrows():
            ratio = f"{r['ratio']:.3f}" if r["state"] == "ok" else r["state"]
            print(f"{r['point']:<{width}}  {_num(r['median_a']):>11}  {_num(r['median_b']):>11}  {ratio:>8}", file=out)
        ok = g[g["state"] == "ok"]
        gm = geomean(ok["ratio"])
        print(f"geomean B/A {w}: " + (f"{gm:.3f}" if gm == gm else "-") + f" ({len(ok)} of {len(g)} points matched)",
              file=out)
    ok = m[m["state"] == "ok"]
    gm = geomean(ok["ratio"])
    print("\ngeomean B/A all: " + (f"{gm:.3f}" if gm == gm else "-") + f" ({len(ok)} of {len(m)} points matched)",
          file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Per-point ratios B/A between two coopbench results folders.")
    ap.add_argument("a", type=Path, help="results folder A (the baseline)")
    ap.add_argument("b", type=Path, help="results folder B")
    ap.add_argument("--workload", action="append", default=[], help="only this workload (repeatable)")
    ap.add_argument("--column", default="value",
                    help="what to compare: value (default), seconds, peak_rss_kib, cpu_seconds, counter.<name>")
    ap.add_argument("--format", choices=("text", "csv"), default="text")
    args = ap.parse_args(argv)
    frames = []
    for d in (args.a, args.b):
        try:
            frames.append(cr.load(d).df)
        except cr.ResultsError as e:
            print(f"compare.py: {e}", file=sys.stderr)
            return 2
    if args.workload:
        frames = [f[f["workload"].isin(args.workload)] for f in frames]
    for f, d in zip(frames, (args.a, args.b)):
        if args.column not in f.columns:
            print(f"compare.py: {d}: no column '{args.column}' in results.csv", file=sys.stderr)
            return 2
        f[args.column] = pd.to_numeric(f[args.column], errors="coerce")
    m = compare(point_medians(frames[0], args.column), point_medians(frames[1], args.column))
    if args.format == "csv":
        m[["point", "workload", "unit", "median_a", "median_b", "ratio", "state"]].to_csv(sys.stdout, index=False)
    else:
        print_text(m, str(args.a), str(args.b))
    if not (m["state"] == "ok").any():
        print("compare.py: no point measured in both A and B", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(0)
