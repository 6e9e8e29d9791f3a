#!/usr/bin/env python3
"""coverage_study.py — how often does a 95 % interval from k forks contain the point's value measured by the others?

Usage: coverage_study.py FOLDER [FOLDER...] [--k 3,5] [--draws 40] [--resamples 1000] [--seed S] [--format text|csv]

A benchmark of the statistics (not a test): for each point of FOLDER with at least 2k forks
(fresh processes) of timed iterations, `--draws` times: shuffle the forks, cut them into
disjoint subsets of k (as many as leave at least k others), and for each subset compute the
95 % interval of the median from its k forks alone, by

  pooled        the bootstrap coopbench used before: every timed iteration of the k forks
                resampled as if independent;
  hierarchical  the bootstrap a point's interval was until December 2026: the forks resampled,
                then the iterations of each drawn fork (Kalibera and Jones, "Rigorous
                Benchmarking in Reasonable Time", ISMM 2013);
  order         coopbench.stats.median_ci today: the order-statistic interval of the forks'
                medians, whose exact coverage (stats.coverage(k): 75 % at 3 forks, 93.75 % at 5)
                is the label it carries;

and count it covering when it contains the median of all timed iterations of the other forks
(the same point measured by independent processes). The target is itself measured, so even a
perfect interval covers it somewhat less often than 95 %; the comparison between the methods is
what counts. Prints per point and per k the share covered by each method, and overall rates.
Forks the harness marked noisy are kept (counted in the `noisy` column; --drop-noisy leaves
them out): on a shared machine they are part of the variation a reader's rerun meets.

Run a sweep with many forks first, e.g. (at low priority on a shared machine):
  nice build/release/harness/coopbench run -w switch -b native-ws,go -p T=2,1000 -P 1,2 -r 20 --out DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import coopbench as cr  # noqa: E402
from coopbench import stats  # noqa: E402


def study(df: pd.DataFrame, ks=(3, 5), draws: int = 40, resamples: int = 1000, seed: int = 1,
          drop_noisy: bool = False) -> pd.DataFrame:
    """study — one row per (point, k): forks, subsets tried, pooled and hierarchical coverage, noisy forks."""
    rows = []
    ok = df[(df["status"] == "ok") & (df["phase"] == "measure") & df["value"].notna()]
    if drop_noisy:
        ok = ok[~ok["noisy"].astype(bool)]
    rng = np.random.default_rng(seed)
    for point, g in ok.groupby("point", sort=True):
        forks = stats.timed_forks(g)
        for k in ks:
            if len(forks) < 2 * k:
                continue
            n, cov = 0, {"pooled": 0, "hierarchical": 0, "order": 0}
            for d in range(draws):
                order = rng.permutation(len(forks))
                for start in range(0, len(forks) - 2 * k + 1, k):
                    sub = order[start:start + k]
                    rest = np.setdiff1d(order, sub)
                    target = float(np.median(np.concatenate([forks[i] for i in rest])))
                    s = pd.Series(np.concatenate([forks[i] for i in sub]),
                                  index=pd.Index(np.concatenate([[i] * len(forks[i]) for i in sub]), name=stats.FORK))
                    for method in cov:
                        _, lo, hi = stats.median_ci(s, resamples=resamples, seed=seed + d * 7919 + start, method=method)
                        cov[method] += lo <= target <= hi
                    n += 1
            rows.append({"point": point, "workload": g["workload"].iloc[0], "forks": len(forks),
                         "noisy": stats.n_forks(stats.warm_sample(g[g["noisy"].astype(bool)])),
                         "iterations": int(np.median([len(f) for f in forks])), "k": k, "subsets": n,
                         "pooled": cov["pooled"] / n, "hierarchical": cov["hierarchical"] / n,
                         "order": cov["order"] / n, "labelled": stats.coverage(k)})
    return pd.DataFrame(rows, columns=["point", "workload", "forks", "noisy", "iterations", "k", "subsets", "pooled",
                                       "hierarchical", "order", "labelled"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", type=Path, nargs="+", help="results folders with many forks per point")
    ap.add_argument("--k", default="3,5", help="subset sizes in forks (default 3,5)")
    ap.add_argument("--draws", type=int, default=40, help="shuffles of the forks per point (default 40)")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval (default 1000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--drop-noisy", action="store_true",
                    help="leave out forks the harness marked noisy (default: keep them; the column counts them)")
    ap.add_argument("--format", choices=("text", "csv"), default="text")
    a = ap.parse_args(argv)
    try:
        ks = tuple(int(x) for x in a.k.split(","))
        if not ks or min(ks) < 1 or a.draws < 1 or a.resamples < 10:
            raise ValueError
    except ValueError:
        print("coverage_study.py: --k must be positive integers (comma-separated), --draws >= 1, --resamples >= 10",
              file=sys.stderr)
        return 2
    frames = []
    for d in a.folders:
        try:
            frames.append(cr.load(d).df.assign(folder=str(d)))  # two folders' forks stay two (stats.fork_labels)
        except cr.ResultsError as e:
            print(f"coverage_study.py: {e}", file=sys.stderr)
            return 2
    t = study(pd.concat(frames, ignore_index=True), ks, a.draws, a.resamples, a.seed, a.drop_noisy)
    if t.empty:
        print(f"coverage_study.py: no point has {2 * min(ks)} or more forks", file=sys.stderr)
        return 1
    if a.format == "csv":
        t.to_csv(sys.stdout, index=False)
        return 0
    print(f"{' '.join(map(str, a.folders))}: share of intervals from k forks that contain the median of the other forks "
          f"({a.draws} shuffles per point, {a.resamples} resamples)\n")
    print(f"{'point':<48} {'forks':>5} {'noisy':>5} {'iters':>5} {'k':>2} {'subsets':>7} {'pooled':>7} "
          f"{'hierarchical':>12} {'order':>7} {'label':>6}")
    for _, r in t.iterrows():
        print(f"{r['point']:<48} {r['forks']:>5} {r['noisy']:>5} {r['iterations']:>5} {r['k']:>2} {r['subsets']:>7} "
              f"{r['pooled']:>7.1%} {r['hierarchical']:>12.1%} {r['order']:>7.1%} {r['labelled']:>6.1%}")
    print()
    for k, g in t.groupby("k"):
        w = g["subsets"]
        print(f"all points, k={k}: pooled {np.average(g['pooled'], weights=w):.1%}, hierarchical "
              f"{np.average(g['hierarchical'], weights=w):.1%}, order {np.average(g['order'], weights=w):.1%} "
              f"(labelled {stats.coverage(k):.1%}; the target is itself measured, so less is expected) "
              f"({len(g)} points, {int(w.sum())} intervals in all)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
