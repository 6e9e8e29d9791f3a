#!/usr/bin/env python3
"""compare.py — per point: is B faster, slower, or not significantly different from A?

Usage: compare.py A B [options]                 two results folders (A the baseline)
       compare.py DIR --backends X Y [options]  two backends in one folder (X the baseline)

Points are matched by their `point` id (backend/workload/params/P; with --backends, by the
id without the backend) and their host: when the rows of A and B come from more than one host
(two folders measured on two machines, or a merged folder of shards from several nodes, where
the shard partition can put two backends of one point on two nodes), a point is compared with
itself on the same host only ("id @host"). A point measured on one host in A and on another in
B is one row "on different hosts (A: h1; B: h2)", not compared, and stderr says how many;
--across-hosts compares them anyway (the header names the hosts: B/A then includes the
machines' difference; not with --paired, whose rounds are one machine's). Rows without a host (a
folder whose context.json names none) match the other side's when that is one host, else none
("(unknown host)"). For each matched point the two samples are compared:

  sample    warm (default): every timed iteration (phase measure, status ok) of every
            fork; --cold: iteration 0 of each fork (the first run in a fresh process).
            A folder written before per-iteration rows (schema version 1) has one cold
            run per fork, which is its sample either way.
  A, B      median and its confidence interval over forks: the order statistics of the
            forks' medians (coopbench.stats, METHOD), whose exact coverage is printed in the
            cell from 2-5 forks ("85 %" at 4; at least 95 % from 6 forks, unmarked); a side
            with 1 fork says "1 fork: within one process" (no interval across processes)
  B/A       ratio of the medians and its 95 % bootstrap interval (both sides resampled
            hierarchically, forks then iterations, independently): "2.50× (2.45–2.55)"; for
            times > 1 means B is slower; "; 3 forks: not 95 %" below 4 forks a side
  forks     the forks (fresh processes) of each side, "3v3": the unit of replication
  p         two-sided Mann–Whitney U test (scipy.stats.mannwhitneyu) on the forks'
            medians (one value per process), as Google Benchmark's tools/compare.py
            tests its repetitions
  verdict   p < --alpha (default 0.05): "faster"/"slower" (for times: B's median
            below/above A's; for --column peak_rss_kib or counters "less"/"more"),
            else "no significant difference"; "cannot be tested: N forks, need 4" when a
            side has fewer than 4 forks: a rank test on k forks a side cannot reach a
            two-sided p below 2/C(2k, k) (0.10 at 3 forks, 0.029 at 4), whatever the
            data; "(noisy)" when a fork of either side ran on a busy machine.
  across    two folders are two sweeps, each measured at its own moment of the machine: an
  sweeps    interval covers its own sweep's state only, and the state moves between sweeps
            by more than any interval shows (the committed folders: 12 points measured in two
            sweeps of one commit on one host, ratios 0.41-1.61, i.e. up to SWEEP_FACTOR =
            2.44x apart; reproduce-negele's tokio/news 1.39x with every fork of one sweep
            above every fork of the other). So with A B a difference is called "faster"/
            "slower" only when the U test finds it AND the ratio's whole interval lies beyond
            x--sweep-factor (default 2.44) from 1; a difference inside it reads "across sweeps:
            a moment effect up to 2.44x is possible" (no verdict). Give --sweep-factor F from
            your own repeated sweeps of one commit (F = 1 asserts the state did not move); the
            design that needs no such number is both sides in one sweep, compared with
            --backends (their forks interleave by round) and --paired.
  --paired  (with --backends) the two backends' forks paired by round: in a sweep whose
            forks run in rounds (every point's first fork, then every point's second, ...),
            repetition k of both backends ran in round k, minutes apart. p is then the
            two-sided Wilcoxon signed-rank test on the rounds' log ratios of the forks'
            medians (scipy.stats.wilcoxon), and "rounds" gives the median of the per-round
            ratios B/A with the smallest and largest; a state of the machine that slows a
            whole round, every backend alike, cancels in each pair, where the unpaired U test
            counts it as spread. A verdict needs 6 rounds on both sides (2/2^k: 0.0625 at 5).

Points measured on one side only, or with no ok run on a side, are listed with their
state ("only in A", "failed in B", ...) and left out. Per workload and overall: the
geometric mean of the ratios and the count of faster / slower / no-difference points.
Iterations of one fork are not independent (they share its page layout, code placement
and warmed state): the fork is what is counted, so run -r 4 or more to get verdicts.

Exit status: 0 compared (some point matched); 1 no point measured in both (on one host); 2 bad input
(A or B not a results folder, unknown --column, a --backends name not in the folder);
3 with --fail-on-slower: some point is significantly slower (or for a non-time column,
more) in B. Reads results.csv only (through scripts/coopbench); a line of it that is not a result (no
status, point, backend or workload) is left out and named on stderr (line numbers).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd  # noqa: E402

import coopbench as cr  # noqa: E402

TIME_COLUMNS = ("value", "seconds", "cpu_seconds")
# How far apart one point's medians were in two sweeps of one commit on one host, in the committed
# folders (results/reference; points with >= 3 non-noisy forks in both): 12 such pairs, ratios 0.41 to
# 1.61 (apps-paper vs quick, news at P=2: 0.409 for boostfiber/shared_work, i.e. 2.44x), and
# reproduce-negele's apps vs implicit-news tokio/news 1.39x with every fork of one sweep above every fork
# of the other. Within-sweep intervals do not contain this level (Kalibera and Jones, ISMM 2013,
# section 3: each level of a repeated experiment carries its own random effect), so across two folders
# a verdict needs the ratio's interval beyond it.
SWEEP_FACTOR = 2.44
MOMENT = "across sweeps: a moment effect up to {f:.3g}× is possible"
FIELDS = ["point", "workload", "unit", "median_a", "lo_a", "hi_a", "n_a", "forks_a", "median_b", "lo_b", "hi_b", "n_b",
          "forks_b", "ratio", "ratio_lo", "ratio_hi", "p_value", "verdict", "state", "noisy", "pairs", "pair_ratio",
          "pair_lo", "pair_hi"]


UNKNOWN_HOST = "(unknown host)"


def samples(df: pd.DataFrame, which: str, column: str, strip_backend: bool = False, rounds: bool = False,
            by_host: bool | None = None) -> dict:
    """samples — {key: (workload, unit, sample Series, n rows, noisy, round medians)} per point; key = id
    (without backend), plus " @host" when by_host (a point of each host is its own; a row without a host is
    UNKNOWN_HOST's); by_host None: when df's rows come from more than one host (a merged folder); False: one
    key per id whatever the host (the rows of every host pooled, their forks told apart by host).
    round medians: {repetition: fork median} when `rounds`, else None."""
    out = {}
    if by_host is None:
        by_host = df["host"][df["host"] != ""].nunique() > 1
    for group, g in df.groupby(["point", "host"] if by_host else "point", sort=True):
        point = group[0] if by_host else group
        key = point[len(g["backend"].iloc[0]) + 1:] if strip_backend else point
        if by_host:
            key += f" @{group[1] or UNKNOWN_HOST}"
        units = [u for u in g["unit"] if u] if column == "value" else [column]
        out[key] = (g["workload"].iloc[0], units[0] if units else "", cr.sample(g, which, column), len(g),
                    bool(g["noisy"].any()), cr.round_medians(g, which, column) if rounds else None)
    return out


def hosts_of(df: pd.DataFrame) -> list:
    """hosts_of — the hosts df's rows were measured on, sorted (UNKNOWN_HOST for rows without one)."""
    return sorted({h or UNKNOWN_HOST for h in df["host"]})


def host_split(m: pd.DataFrame) -> tuple:
    """host_split — m (compare() of samples keyed "id @host") with each id measured on one side's hosts only and
    on the other's only, never on a host of both, as one row: point = id, state "on different hosts (A: h1, B:
    h2)", nothing compared. Returns (that frame, the number of such ids). An id matched on a common host keeps
    its rows (its other hosts' rows stay "only in A"/"only in B", with their host)."""
    base = m["point"].str.rsplit(" @", n=1).str[0]
    host = m["point"].str.rsplit(" @", n=1).str[1]
    keep, merged = [], []
    for pid, g in m.groupby(base, sort=False):
        sa, sb = g[g["state"] == "only in A"], g[g["state"] == "only in B"]
        if len(sa) + len(sb) == len(g) and len(sa) and len(sb):
            r = dict.fromkeys(FIELDS, math.nan)
            r.update(point=pid, workload=g["workload"].iloc[0], unit=g["unit"].iloc[0], verdict="",
                     noisy=bool(g["noisy"].any()),
                     state=f"on different hosts (A: {', '.join(sorted(host[sa.index]))}; "
                           f"B: {', '.join(sorted(host[sb.index]))})")
            for side, s in (("a", sa), ("b", sb)):
                r[f"forks_{side}"] = s[f"forks_{side}"].sum()
                r[f"n_{side}"] = s[f"n_{side}"].sum()
            merged.append(r)
        else:
            keep.append(g)
    parts = keep + ([pd.DataFrame(merged, columns=FIELDS)] if merged else [])
    out = pd.concat(parts, ignore_index=True) if parts else m.copy()
    out["pairs"] = out["pairs"].astype("Int64")
    return out.sort_values(["workload", "point"]).reset_index(drop=True), len(merged)


def verdict(p: float, ma: float, mb: float, alpha: float, time: bool, forks: int = cr.MIN_FORKS_TWO,
            pairs: int | None = None, sweep_factor: float | None = None, ratio_lo: float = math.nan,
            ratio_hi: float = math.nan) -> str:
    """verdict — "faster"/"slower" (times) or "less"/"more" when p < alpha, else "no significant difference";
    "cannot be tested: N forks, need M" when the side with fewer forks has fewer than MIN_FORKS_TWO (paired:
    "N pairs, need MIN_PAIRS"). ma, mb: A's and B's medians (paired: 1 and the median per-round ratio).
    sweep_factor (A and B two sweeps): a difference the test finds is a verdict only when the ratio's
    interval [ratio_lo, ratio_hi] lies wholly beyond ×sweep_factor from 1; else MOMENT (no verdict)."""
    if pairs is not None and pairs < cr.MIN_PAIRS:
        return f"cannot be tested: {pairs} pair{'' if pairs == 1 else 's'}, need {cr.MIN_PAIRS}"
    if pairs is None and forks < cr.MIN_FORKS_TWO:
        return f"cannot be tested: {forks} fork{'' if forks == 1 else 's'}, need {cr.MIN_FORKS_TWO}"
    if p != p:
        return "too few runs"
    if p >= alpha:
        return "no significant difference"
    if sweep_factor is not None and sweep_factor > 1 and not (ratio_lo > sweep_factor or ratio_hi < 1 / sweep_factor):
        return MOMENT.format(f=sweep_factor)
    if time:
        return "slower" if mb > ma else "faster"
    return "more" if mb > ma else "less"


def compare(a: dict, b: dict, alpha: float = 0.05, time: bool = True, paired: bool = False,
            sweep_factor: float | None = None) -> pd.DataFrame:
    """compare — one row per point of a or b (FIELDS): medians, intervals, ratio, U test (paired: the
    signed-rank test over the rounds, with the per-round ratios), verdict, state. sweep_factor: a and b
    are two sweeps (two folders) and a verdict must clear this between-sweep ratio (verdict())."""
    rows = []
    for key in sorted(set(a) | set(b)):
        sa, sb = a.get(key), b.get(key)
        r = dict.fromkeys(FIELDS, math.nan)
        r.update(point=key, workload=(sa or sb)[0], unit=(sa or sb)[1], verdict="",
                 noisy=bool((sa and sa[4]) or (sb and sb[4])))
        for side, s in (("a", sa), ("b", sb)):
            if s is not None:
                r[f"median_{side}"], r[f"lo_{side}"], r[f"hi_{side}"] = cr.median_ci(s[2])
                r[f"n_{side}"] = len(s[2])
                r[f"forks_{side}"] = cr.n_forks(s[2])
        if sa is None:
            r["state"] = "only in B"
        elif sb is None:
            r["state"] = "only in A"
        elif not len(sa[2]) and not len(sb[2]):
            r["state"] = "failed in A and B"
        elif not len(sa[2]):
            r["state"] = "failed in A"
        elif not len(sb[2]):
            r["state"] = "failed in B"
        elif r["median_a"] <= 0 or r["median_b"] <= 0:
            r["state"] = "not positive"
        else:
            r["state"] = "ok"
            r["ratio"], r["ratio_lo"], r["ratio_hi"] = cr.ratio_ci(sa[2], sb[2])
            if paired:
                r["p_value"], r["pairs"], r["pair_ratio"], r["pair_lo"], r["pair_hi"] = cr.signed_rank_test(sa[5], sb[5])
                r["verdict"] = verdict(r["p_value"], 1.0, r["pair_ratio"], alpha, time, pairs=r["pairs"])
            else:
                r["p_value"] = cr.u_test(sa[2], sb[2])
                r["verdict"] = verdict(r["p_value"], r["median_a"], r["median_b"], alpha, time,
                                       min(r["forks_a"], r["forks_b"]), sweep_factor=sweep_factor,
                                       ratio_lo=r["ratio_lo"], ratio_hi=r["ratio_hi"])
        rows.append(r)
    m = pd.DataFrame(rows, columns=FIELDS)
    m["pairs"] = m["pairs"].astype("Int64")  # a count (empty when not paired)
    return m.sort_values(["workload", "point"]).reset_index(drop=True)


def geomean(xs) -> float:
    """geomean — geometric mean of positive numbers (NaN for none)."""
    xs = [x for x in xs if x == x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def _tally(g: pd.DataFrame) -> str:
    v = g[g["state"] == "ok"]["verdict"]
    parts = [f"{int((v == w).sum())} {w}" for w in ("faster", "slower", "less", "more", "no significant difference",
                                                     "too few runs") if (v == w).any()]
    few = v.astype(str).str.startswith("cannot be tested")
    if few.any():
        parts.append(f"{int(few.sum())} cannot be tested (too few forks)")
    moment = v.astype(str).str.startswith("across sweeps")
    if moment.any():
        parts.append(f"{int(moment.sum())} differ within the between-sweep level (no verdict)")
    return ", ".join(parts) if parts else "none compared"


def print_text(m: pd.DataFrame, a_name: str, b_name: str, which: str, alpha: float, out=sys.stdout,
               note: str = "", paired: bool = False, sweep_factor: float | None = None) -> None:
    """print_text — the comparison as aligned text, one block per workload; note: a line under A and B
    (e.g. that their backend options differ); paired: the rounds column and the signed-rank test's header."""
    test = (f"two-sided Wilcoxon signed-rank test on the rounds' log ratios (forks paired by repetition, i.e. by "
            f"round); verdict at alpha = {alpha:g}, given at least {cr.MIN_PAIRS} rounds\nrounds: the median of the "
            f"per-round ratios B/A (smallest–largest)" if paired else
            f"two-sided Mann–Whitney U test on the forks' medians; verdict at alpha = {alpha:g}, given at least "
            f"{cr.MIN_FORKS_TWO} forks a side")
    print(f"A = {a_name}\nB = {b_name}\n" + (f"{note}\n" if note else "") +
          f"sample: {'cold (iteration 0 of each fork)' if which == 'cold' else 'warm (timed iterations of all forks)'}"
          f"; A, B: {cr.METHOD}\nB/A: ratio of the medians (for times: > 1 means B is slower), bootstrap interval "
          f"(95 % from {cr.MIN_FORKS_TWO} forks a side; a cell from fewer says so)"
          f"\np: {test}\nn: forks A v B (the unit of replication: each a fresh process)", file=out)
    if sweep_factor is not None:
        print(("A and B are two sweeps: each interval covers its own sweep's moment of the machine only. " +
               (f"A difference is a verdict only beyond ×{sweep_factor:.3g} (--sweep-factor; the default "
                f"{SWEEP_FACTOR} is the largest ratio between two sweeps of one commit on one host in the committed "
                "folders); for a verdict without it, run both in one sweep and use --backends X Y --paired."
                if sweep_factor > 1 else "--sweep-factor 1: the verdicts assume the machine's state did not move "
                "between the sweeps.")), file=out)
    width = max([len(p) for p in m["point"]] + [5])
    cols = [("A", 28), ("B", 28), ("B/A", 22)] + ([("rounds", 22)] if paired else []) + [("n", 9), ("p", 7)]
    for w, g in m.groupby("workload", sort=True):
        units = [u for u in g["unit"] if isinstance(u, str) and u]
        print(f"\n== {w}" + (f" ({units[0]})" if units else ""), file=out)
        print(f"{'point':<{width}}  " + "  ".join(f"{h:>{n}}" for h, n in cols) + "  verdict", file=out)
        for _, r in g.iterrows():
            fa = int(r["forks_a"]) if r["forks_a"] == r["forks_a"] else 0
            fb = int(r["forks_b"]) if r["forks_b"] == r["forks_b"] else 0
            a = cr.fmt_ci(r["median_a"], r["lo_a"], r["hi_a"], fa)
            b = cr.fmt_ci(r["median_b"], r["lo_b"], r["hi_b"], fb)
            ok = r["state"] == "ok"
            ratio = cr.fmt_ratio(r["ratio"], r["ratio_lo"], r["ratio_hi"], min(fa, fb)) if ok else "-"
            n = f"{fa}v{fb}"
            p = f"{r['p_value']:.4f}" if r["p_value"] == r["p_value"] else "-"
            v = (r["verdict"] if ok else r["state"]) + (" (noisy)" if r["noisy"] else "")
            rounds = ""
            if paired:
                pr = (f"{r['pair_ratio']:.2f} ({r['pair_lo']:.2f}–{r['pair_hi']:.2f})"
                      if ok and r["pair_ratio"] == r["pair_ratio"] else "-")
                rounds = f"{pr:>22}  "
            print(f"{r['point']:<{width}}  {a:>28}  {b:>28}  {ratio:>22}  {rounds}{n:>9}  {p:>7}  {v}", file=out)
        ok = g[g["state"] == "ok"]
        gm = geomean(ok["ratio"])
        print(f"geomean B/A {w}: " + (f"{gm:.3f}" if gm == gm else "-") + f" ({len(ok)} of {len(g)} points matched;"
              f" {_tally(g)})", file=out)
    ok = m[m["state"] == "ok"]
    gm = geomean(ok["ratio"])
    print("\ngeomean B/A all: " + (f"{gm:.3f}" if gm == gm else "-") + f" ({len(ok)} of {len(m)} points matched;"
          f" {_tally(m)})", file=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description="Per point: B faster, slower or not significantly different from A (Mann–Whitney U test on "
                    "the forks' medians; 4 or more forks a side), with the ratio B/A of the medians and its "
                    "hierarchical-bootstrap 95%% interval. Two folders are two sweeps: a verdict must also clear "
                    "the between-sweep level (--sweep-factor).",
        epilog="Exit status: 0 compared; 1 no point measured in both (on one host); 2 bad input (not a results folder, "
               "unknown --column or backend); 3 with --fail-on-slower: some point significantly slower in B.")
    ap.add_argument("a", type=Path, help="results folder A (the baseline)")
    ap.add_argument("b", type=Path, nargs="?", help="results folder B (omit with --backends)")
    ap.add_argument("--backends", nargs=2, metavar=("X", "Y"),
                    help="compare backend Y (as B) with backend X (as A) within folder A")
    ap.add_argument("--workload", action="append", default=[], help="only this workload (repeatable)")
    ap.add_argument("--column", default="value",
                    help="what to compare: value (default), seconds, peak_rss_kib, cpu_seconds, counter.<name>")
    ap.add_argument("--paired", action="store_true",
                    help="with --backends: pair the two backends' forks by round (repetition) and test with the "
                         "Wilcoxon signed-rank test on the per-round ratios (6 or more rounds)")
    ap.add_argument("--across-hosts", action="store_true",
                    help="compare a point measured on one host with the same point measured on another (by default "
                         "a point is compared with itself on the same host only: a ratio across two machines "
                         "includes the machines' difference)")
    ap.add_argument("--sweep-factor", type=float, default=None, metavar="F",
                    help=f"with two folders: the ratio one point's medians can take between two sweeps of the same "
                         f"code (measure it from your repeated sweeps); a difference is a verdict only beyond it "
                         f"(default {SWEEP_FACTOR}, the largest seen between two sweeps of one commit on one host in "
                         f"the committed folders; 1: assume none)")
    ap.add_argument("--cold", action="store_true",
                    help="compare the cold runs (iteration 0 of each fork) instead of the timed iterations")
    ap.add_argument("--alpha", type=float, default=0.05,
                    help="significance level of the U test (default 0.05): p below it is a difference")
    ap.add_argument("--fail-on-slower", action="store_true",
                    help="exit 3 when some point is significantly slower (non-time column: more) in B")
    ap.add_argument("--format", choices=("text", "csv"), default="text")
    args = ap.parse_args(argv)
    if (args.b is None) == (args.backends is None):
        print("compare.py: give two results folders A B, or one folder with --backends X Y", file=sys.stderr)
        return 2
    if args.paired and not args.backends:
        print("compare.py: --paired pairs two backends of one sweep by round: give --backends X Y", file=sys.stderr)
        return 2
    if args.paired and args.across_hosts:
        print("compare.py: --paired pairs the forks of one round on one machine; it does not go with --across-hosts",
              file=sys.stderr)
        return 2
    if args.sweep_factor is not None and (args.backends or not args.sweep_factor >= 1):
        print("compare.py: --sweep-factor (>= 1) is for two folders A B, two sweeps" if args.backends else
              f"compare.py: --sweep-factor must be 1 or more, not {args.sweep_factor}", file=sys.stderr)
        return 2
    sweep_factor = None if args.backends else (SWEEP_FACTOR if args.sweep_factor is None else args.sweep_factor)
    if not 0 < args.alpha < 1:
        print(f"compare.py: --alpha must be between 0 and 1, not {args.alpha}", file=sys.stderr)
        return 2
    frames, options = [], []
    for d in ((args.a,) if args.backends else (args.a, args.b)):
        try:
            res = cr.load(d)
        except cr.ResultsError as e:
            print(f"compare.py: {e}", file=sys.stderr)
            return 2
        if res.dropped:
            print(f"compare.py: {d}: {res.dropped_note()}", file=sys.stderr)
        frames.append(res.df)
        options.append(res.context.get("backend_options") or {})
    if args.backends:
        df = frames[0]
        for name in args.backends:
            if name not in set(df["backend"]):
                print(f"compare.py: {args.a}: no backend '{name}' (has: {', '.join(sorted(set(df['backend'])))})",
                      file=sys.stderr)
                return 2
        frames = [df[df["backend"] == name] for name in args.backends]
        names = [f"{args.a} {name}" for name in args.backends]
    else:
        names = [str(args.a), str(args.b)]
    if args.workload:
        frames = [f[f["workload"].isin(args.workload)] for f in frames]
    for f, n in zip(frames, names):
        if args.column not in f.columns:
            print(f"compare.py: {n}: no column '{args.column}' in results.csv", file=sys.stderr)
            return 2
    try:
        import scipy.stats  # noqa: F401  (the U test)
    except ImportError:
        print("compare.py: needs scipy for the U test: install python3-scipy (scripts/install-deps.sh)",
              file=sys.stderr)
        return 2
    # results.csv has no column for backend options (a folder is one sweep, with one set of
    # them: context.json's backend_options), so rows of A and B match by point id alone. When
    # the folders ran with different options, that difference is what is compared: say it.
    differing = ""
    if len(options) == 2 and options[0] != options[1]:
        def opts(o):
            return " ".join(f"{k}={v}" for k, v in sorted(o.items())) or "(defaults)"
        differing = f"backend options differ: A {opts(options[0])}, B {opts(options[1])}"
        print(f"compare.py: {differing}", file=sys.stderr)
    # The hosts each side was measured on (a folder's context.json, or each row's in a merged folder of shards).
    # A ratio across two machines measures the machines as much as the code: unless --across-hosts, a point is
    # compared with itself on the same host only, and a point whose two sides ran on different hosts (two
    # folders of two machines, or two backends a cluster sweep's shards put on two nodes) is named, not compared.
    hosts = [hosts_of(f) for f in frames]
    known = sorted({h for hs in hosts for h in hs if h != UNKNOWN_HOST})
    by_host = len(known) > 1 and not args.across_hosts
    if len(known) > 1:
        each = f"A: {', '.join(hosts[0]) or '-'}; B: {', '.join(hosts[1]) or '-'}"
        differing = "\n".join(x for x in (differing, (
            f"hosts: {each}: B/A includes the machines' difference (--across-hosts)" if args.across_hosts else
            f"hosts: {each}: a point is compared with itself on the same host only (\"point @host\")")) if x)
    which = "cold" if args.cold else "warm"
    s = [samples(f, which, args.column, strip_backend=bool(args.backends), rounds=args.paired, by_host=by_host)
         for f in frames]
    m = compare(s[0], s[1], args.alpha, time=args.column in TIME_COLUMNS, paired=args.paired,
                sweep_factor=sweep_factor)
    split = 0
    if by_host:
        m, split = host_split(m)
    if split:
        print(f"compare.py: A and B were measured on different hosts ({each}): {split} point"
              f"{'' if split == 1 else 's'} measured on one host in A and another in B "
              f"{'is' if split == 1 else 'are'} not compared (\"on different hosts\"); a point is compared with "
              "itself on the same host only (--across-hosts compares them anyway, the machines' difference included)",
              file=sys.stderr)
    if args.format == "csv":
        m.to_csv(sys.stdout, index=False)
    else:
        print_text(m, names[0], names[1], which, args.alpha, note=differing, paired=args.paired,
                   sweep_factor=sweep_factor)
    if not (m["state"] == "ok").any():
        print("compare.py: no point measured in both A and B" + (" on one host" if split else ""), file=sys.stderr)
        return 1
    if args.fail_on_slower and m["verdict"].isin(("slower", "more")).any():
        return 3
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(0)
