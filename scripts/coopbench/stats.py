"""coopbench.stats — medians with bootstrap confidence intervals, cold/warm per point, the U test.

The method (said in every figure and report that uses it, see METHOD):
  * warm value of a point: the median of every timed iteration (phase = measure, status
    ok) of every fork of the point, with a 95 % percentile-bootstrap confidence interval
    of that median (B = 2000 resamples of the pooled iterations, fixed seed);
  * cold value of a point: the iteration-0 row of each fork (the first run in a fresh
    process), median and the same interval over the forks;
  * the ratio of two samples: median(B) / median(A), its interval by resampling both
    samples independently (B = 2000, fixed seed);
  * compare.py's verdict: the two-sided Mann–Whitney U test (scipy), as Google
    Benchmark's tools/compare.py does.
A point is noisy when any of its forks is (the harness's `noisy` column).

numpy (Debian's python3-numpy) does the resampling; scipy (python3-scipy) is imported
only by u_test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

LEVEL = 0.95
RESAMPLES = 2000
SEED = 20170101  # fixed: the same data give the same intervals, so re-plots diff clean
METHOD = (f"median; interval: {LEVEL:.0%} percentile bootstrap of the median ({RESAMPLES} resamples, fixed seed)")


def _clean(x) -> np.ndarray:
    a = np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=float)
    return a[~np.isnan(a)]


def _boot_medians(a: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    idx = rng.integers(0, len(a), size=(resamples, len(a)))
    return np.median(a[idx], axis=1)


def median_ci(x, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED):
    """median_ci — (median, lo, hi) of the sample x: its median and a percentile-bootstrap interval of the median.

    NaNs are ignored. One value gives (v, v, v); no value gives three NaNs.
    """
    a = _clean(x)
    if len(a) == 0:
        return (math.nan, math.nan, math.nan)
    med = float(np.median(a))
    if len(a) == 1:
        return (med, med, med)
    meds = _boot_medians(a, np.random.default_rng(seed), resamples)
    alpha = (1 - level) / 2
    lo, hi = np.quantile(meds, [alpha, 1 - alpha])
    return (med, float(lo), float(hi))


def ratio_ci(a, b, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED):
    """ratio_ci — (ratio, lo, hi): median(b) / median(a) and its percentile-bootstrap interval.

    Both samples are resampled independently (the two runs are independent). NaN when a
    sample is empty or a median is not positive.
    """
    xa, xb = _clean(a), _clean(b)
    if len(xa) == 0 or len(xb) == 0:
        return (math.nan, math.nan, math.nan)
    ma, mb = float(np.median(xa)), float(np.median(xb))
    if ma <= 0 or mb <= 0:
        return (math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    ra = _boot_medians(xa, rng, resamples) if len(xa) > 1 else np.full(resamples, ma)
    rb = _boot_medians(xb, rng, resamples) if len(xb) > 1 else np.full(resamples, mb)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rb / ra
    ratios = ratios[np.isfinite(ratios)]
    alpha = (1 - level) / 2
    lo, hi = np.quantile(ratios, [alpha, 1 - alpha])
    return (mb / ma, float(lo), float(hi))


def u_test(a, b):
    """u_test — the two-sided Mann–Whitney U test's p-value for samples a and b (NaN when either has < 2 values)."""
    from scipy.stats import mannwhitneyu  # Debian's python3-scipy (scripts/install-deps.sh)

    xa, xb = _clean(a), _clean(b)
    if len(xa) < 2 or len(xb) < 2:
        return math.nan
    return float(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """ok_rows — the rows with status ok and a value that count for the warm statistics (phase measure)."""
    return df[(df["status"] == "ok") & df["value"].notna() & (df["phase"] == "measure")]


def failed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """failed_rows — the rows with status failed."""
    return df[df["status"] != "ok"]


def warm_sample(g: pd.DataFrame, column: str = "value") -> pd.Series:
    """warm_sample — the timed iterations of rows g: phase measure, status ok, `column` present."""
    return g[(g["status"] == "ok") & (g["phase"] == "measure") & g[column].notna()][column]


def cold_sample(g: pd.DataFrame, column: str = "value") -> pd.Series:
    """cold_sample — the cold runs of rows g: iteration 0 of each fork, status ok, `column` present."""
    return g[(g["status"] == "ok") & (g["iteration"] == 0) & g[column].notna()][column]


def sample(g: pd.DataFrame, which: str = "warm", column: str = "value") -> pd.Series:
    """sample — warm_sample or cold_sample by name ("warm" or "cold")."""
    if which == "warm":
        return warm_sample(g, column)
    if which == "cold":
        return cold_sample(g, column)
    raise ValueError(f"sample: which must be 'warm' or 'cold', not {which!r}")


def summarize(df: pd.DataFrame, x: str, which: str = "warm") -> pd.DataFrame:
    """summarize — per (backend, processors, x): median, its interval (lo, hi), min, max, counts, noisy.

    which: "warm" (timed iterations of all forks, the default) or "cold" (iteration 0 of
    each fork). Columns: backend, processors, <x>, median, lo, hi, min, max, n_ok,
    n_failed (failed rows), reason (first failure reason), noisy (any fork noisy).
    A point is 'failed' for plotting when n_ok is 0.
    """
    keys = ["backend", "processors", x]
    cols = keys + ["median", "lo", "hi", "min", "max", "n_ok", "n_failed", "reason", "noisy"]
    d = df.dropna(subset=[x]) if x in df.columns else df.iloc[0:0]
    if d.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for k, g in d.groupby(keys, sort=True):
        ok = sample(g, which)
        bad = g[g["status"] != "ok"]
        reasons = [r for r in bad["reason"].astype(str) if r]
        med, lo, hi = median_ci(ok)
        rows.append(dict(zip(keys, k)) | {
            "median": med, "lo": lo, "hi": hi,
            "min": ok.min() if len(ok) else math.nan, "max": ok.max() if len(ok) else math.nan,
            "n_ok": int(len(ok)), "n_failed": int(len(bad)), "reason": reasons[0] if reasons else "",
            "noisy": bool(g["noisy"].any()),
        })
    return pd.DataFrame(rows, columns=cols)


def point_stats(df: pd.DataFrame, column: str = "value") -> pd.DataFrame:
    """point_stats — one row per point: cold and warm median with intervals, counts, noisy, failure.

    Columns: point, backend, workload, processors, unit, forks, warm_median, warm_lo,
    warm_hi, n_warm, cold_median, cold_lo, cold_hi, n_cold, n_failed, reason, noisy,
    has_warm (some fork ran more than one iteration: warm is more than the cold shots).
    """
    rows = []
    for point, g in df.groupby("point", sort=True):
        w, c = warm_sample(g, column), cold_sample(g, column)
        bad = g[g["status"] != "ok"]
        reasons = [r for r in bad["reason"].astype(str) if r]
        units = [u for u in g["unit"] if u] if column == "value" else [column]
        wm, wl, wh = median_ci(w)
        cm, cl, ch = median_ci(c)
        rows.append({
            "point": point, "backend": g["backend"].iloc[0], "workload": g["workload"].iloc[0],
            "processors": g["processors"].iloc[0], "unit": units[0] if units else "",
            "forks": int(g["repetition"].nunique()),
            "warm_median": wm, "warm_lo": wl, "warm_hi": wh, "n_warm": int(len(w)),
            "cold_median": cm, "cold_lo": cl, "cold_hi": ch, "n_cold": int(len(c)),
            "n_failed": int(len(bad)), "reason": reasons[0] if reasons else "",
            "noisy": bool(g["noisy"].any()), "has_warm": bool((g["iteration"] > 0).any()),
        })
    return pd.DataFrame(rows)


def fmt_value(v) -> str:
    """fmt_value — a number for a table cell: 4 significant digits, thousands separated; – for NaN."""
    if v is None or v != v:
        return "–"
    if 0 < abs(v) < 1e-2:
        return f"{v:.3g}"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.0f}"


def fmt_ci(med, lo, hi) -> str:
    """fmt_ci — "66 (60–70)"; the median alone when the interval is a single value; – for NaN."""
    if med != med:
        return "–"
    if lo != lo or hi != hi or lo == hi:
        return fmt_value(med)
    return f"{fmt_value(med)} ({fmt_value(lo)}–{fmt_value(hi)})"


def fmt_ratio(r, lo, hi) -> str:
    """fmt_ratio — "2.10× (1.90–2.40)": a ratio with its interval (2 significant digits below 0.1); the ratio
    alone when the interval is a single value (one run a side); – for NaN."""
    if r != r:
        return "–"

    def f(v):
        return f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.2g}"

    if lo != lo or hi != hi or lo == hi:
        return f"{f(r)}×"
    return f"{f(r)}× ({f(lo)}–{f(hi)})"
