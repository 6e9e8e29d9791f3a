"""coopbench.stats — medians with hierarchical-bootstrap intervals over forks, cold/warm per point, the U test.

The method (said in every figure and report that uses it, see METHOD):
  * the unit of replication is the fork (a fresh process), not the iteration: iterations
    of one process share its heap layout, code placement, page mapping and warmed
    scheduler state, and on this machine forks differ more than iterations do (Georges,
    Buytaert and Eeckhout, "Statistically Rigorous Java Performance Evaluation",
    OOPSLA 2007, section 4: the VM invocation is the unit; Kalibera and Jones, "Rigorous
    Benchmarking in Reasonable Time", ISMM 2013, section 3: one random effect per level);
  * warm value of a point: the median of every timed iteration (phase = measure, status
    ok) of every fork; its interval: the order-statistic (distribution-free) confidence
    interval of the median over forks: from k forks' medians sorted, [j-th smallest,
    j-th largest], j the largest whose exact coverage 1 - 2 P(Binomial(k, 1/2) < j) is at
    least 95 % (Conover, "Practical Nonparametric Statistics", 3rd ed., section 3.2: the
    confidence interval for a quantile). From k <= 5 forks no such j exists: the interval
    is then [smallest, largest] and its coverage, 1 - 2 * 0.5^k (50 % at 2 forks, 75 % at
    3, 87.5 % at 4, 93.75 % at 5; labelled 50, 75, 85, 90 %, rounded down to 5 %) is what its
    label says (interval_label, fmt_ci). It covers
    the median over fresh processes of this machine in this state; a re-run's median
    falls inside it less often (the re-run has its own error);
  * cold value of a point: the iteration-0 row of each fork (the first run in a fresh
    process), median and the same interval (one value per fork);
  * the ratio (or the difference) of two points: median(b) / median(a), each side
    resampled hierarchically and independently of the other (the two runs are independent);
  * one fork: there is no interval across processes. The bootstrap then resamples the one
    process's iterations: that band shows the variation within one process only, and is
    labelled so ("1 fork: variation within one process only"), never "95 %";
  * verdicts and faster/slower calls need enough forks (MIN_FORKS_ONE, MIN_FORKS_TWO, why
    in FORKS_RULE); fewer gives "cannot be tested: N forks, need M";
  * compare.py's p-value: the two-sided Mann–Whitney U test on the forks' medians (one
    value per fork, so forks are what it counts).
The hierarchical bootstrap of the median (Kalibera and Jones, ISMM 2013, section 4: forks
with replacement, then each drawn fork's iterations: method="hierarchical") was this
interval before; from 3-6 forks it covered 81-90 % under a "95 %" label (a synthetic
study: ../shared reviews, tests/scripts/test_coverage.py), so a point's interval is now
the order statistics, whose coverage is exact. The bootstrap stays for ratios and
differences (ratio_ci, diff_ci: over-conservative, 97-99 % from 4 forks a side in the same
study) and for one fork. The pooled bootstrap (every iteration of every fork as if
independent: method="pooled") is kept only for scripts/coverage_study.py and the tests
that show why it is wrong.
A point is noisy when any of its forks is (the harness's `noisy` column).

Samples carry their forks: warm_sample / cold_sample return a Series whose index (named
"fork") labels each value's fork. A sample without that index (a plain list or array)
counts each value as a fork of its own (independent values).

numpy (Debian's python3-numpy) does the resampling; scipy (python3-scipy) is imported
only by u_test.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

LEVEL = 0.95
RESAMPLES = 2000
SEED = 20170101  # fixed: the same data give the same intervals, so re-plots diff clean
FORK = "fork"  # the index name of a sample's fork labels
FORK_COLUMNS = ("folder", "host", "point", "repetition")  # what tells one fork from another
METHOD = ("median; interval: the order-statistic confidence interval of the median over forks (the forks' medians, "
          "[j-th smallest, j-th largest], exact binomial coverage: at least 95 % from 6 forks; from 2-5 forks "
          "[smallest, largest], whose coverage 1 − 2·0.5^k (labelled 50, 75, 85, 90 %) is printed beside it); "
          "with 1 fork: variation within one process only, not a confidence interval; ratios: "
          f"{LEVEL:.0%} hierarchical bootstrap, forks then iterations ({RESAMPLES} resamples, fixed seed; Kalibera and "
          "Jones, ISMM 2013, section 4), each side resampled independently")
ONE_FORK = "1 fork: variation within one process only"

# How many forks a verdict needs. Both numbers are the fewest forks at which a
# distribution-free statement at the 95 % level is possible at all, whatever the data:
#  * one point's interval (value_within, a rank correlation or share over forks): the best a
#    distribution-free interval of a median from k forks can be is [smallest, largest fork],
#    which covers the median with probability 1 - 2 * 0.5^k: 0.75 at k = 3, 0.94 at k = 5,
#    0.97 at k = 6; a percentile bootstrap of k <= 5 forks reaches that [min, max] (its 2.5 %
#    tail is a resample made of the extreme fork) and so covers less than 95 % too;
#  * two points compared (a ratio or a difference, faster/slower): the smallest two-sided
#    p-value a rank test on k forks a side can reach is 2 / C(2k, k): 0.10 at k = 3, 0.029 at
#    k = 4; with 3 forks a side no data can show a difference at the 5 % level.
#  * two backends of one sweep compared round by round (a paired test): the smallest two-sided
#    p-value of the signed-rank test on k pairs is 2 / 2^k: 0.0625 at k = 5, 0.031 at k = 6.
MIN_FORKS_ONE = 6
MIN_FORKS_TWO = 4
MIN_PAIRS = 6
WHY_ONE = ("the best distribution-free 95 % interval of a median from k forks, [min, max], covers it with "
           "probability 1 − 2·0.5^k: 0.94 at 5 forks, 0.97 at 6")
WHY_TWO = "a rank test on k forks a side cannot reach a two-sided p below 2/C(2k, k): 0.10 at 3 forks, 0.029 at 4"
FORKS_RULE = (f"a point's interval needs {MIN_FORKS_ONE} forks ({WHY_ONE}); a comparison needs {MIN_FORKS_TWO} "
              f"forks a side ({WHY_TWO})")


def forks_why(need: int) -> str:
    """forks_why — why a rule needs `need` forks (WHY_ONE or WHY_TWO)."""
    return WHY_ONE if need >= MIN_FORKS_ONE else WHY_TWO


# ----------------------------------------------------------------------------- samples and their forks

def fork_labels(g: pd.DataFrame) -> pd.Index:
    """fork_labels — per row of g, the label of its fork: folder, host, point and repetition (those g has)."""
    cols = [c for c in FORK_COLUMNS if c in g.columns]
    if not cols:
        return pd.Index(range(len(g)), name=FORK)
    if len(cols) > 1:  # columns constant over g tell no forks apart: the common case, one point, is fast
        cols = [c for c in cols[:-1] if g[c].nunique(dropna=False) > 1] + cols[-1:]
    if len(cols) == 1:
        return pd.Index(g[cols[0]].to_numpy(), name=FORK)
    lab = g[cols[0]].astype(str)
    for c in cols[1:]:
        lab = lab + "#" + g[c].astype(str)
    return pd.Index(lab.to_numpy(), name=FORK)


def with_forks(s: pd.Series, g: pd.DataFrame) -> pd.Series:
    """with_forks — the values s (rows of g) indexed by their forks' labels (index name "fork")."""
    return pd.Series(s.to_numpy(dtype=float), index=fork_labels(g.loc[s.index]), name=s.name)


def _clean(x) -> np.ndarray:
    a = np.asarray(list(x) if not isinstance(x, np.ndarray) else x, dtype=float)
    return a[~np.isnan(a)]


def fork_groups(x, forks=None) -> list:
    """fork_groups — the values of x grouped by fork (a list of arrays, NaNs dropped, in order of first sight).

    forks: labels, one per value; else the index of x when it is named "fork"; else every
    value is its own fork."""
    if forks is None and isinstance(x, pd.Series) and x.index.name == FORK:
        forks = x.index
    v = np.asarray(x.to_numpy() if isinstance(x, pd.Series) else (list(x) if not isinstance(x, np.ndarray) else x),
                   dtype=float)
    if forks is None:
        v = v[~np.isnan(v)]
        return [v[i:i + 1] for i in range(len(v))]
    codes, _ = pd.factorize(np.asarray(forks))
    keep = ~np.isnan(v)
    v, codes = v[keep], codes[keep]
    order = np.argsort(codes, kind="stable")  # codes number the forks in order of first sight
    return np.split(v[order], np.flatnonzero(np.diff(codes[order])) + 1) if len(v) else []


def n_forks(x, forks=None) -> int:
    """n_forks — how many forks the sample x has values from (see fork_groups)."""
    return len(fork_groups(x, forks))


def hierarchical_index(sizes, resamples: int, rng: np.random.Generator):
    """hierarchical_index — (fork, iteration, mask), each shaped (resamples, k, nmax): resample k forks of the
    given sizes with replacement, then each drawn fork's own number of iterations with replacement.

    fork[b, j] is the j-th drawn fork of resample b; iteration[b, j, i] an index into that fork's
    values; mask[b, j, i] is False where i is beyond the drawn fork's size (ragged forks)."""
    ns = np.asarray(sizes, dtype=np.int64)
    k, nmax = len(ns), int(ns.max())
    f = rng.integers(0, k, size=(resamples, k))
    nf = ns[f]
    if (ns == nmax).all():
        it = rng.integers(0, nmax, size=(resamples, k, nmax))
        return f, it, None
    it = (rng.random((resamples, k, nmax)) * nf[:, :, None]).astype(np.int64)
    mask = np.arange(nmax)[None, None, :] < nf[:, :, None]
    return f, it, mask


def _padded(groups) -> np.ndarray:
    nmax = max(len(g) for g in groups)
    m = np.full((len(groups), nmax), np.nan)
    for i, g in enumerate(groups):
        m[i, :len(g)] = g
    return m


def boot_medians(groups, rng: np.random.Generator, resamples: int = RESAMPLES,
                 method: str = "hierarchical") -> np.ndarray:
    """boot_medians — the medians of `resamples` bootstrap resamples of the forks' values (see METHOD).

    groups: one array of values per fork (fork_groups), at least one value in all; rng draws
    the resamples (np.random.default_rng(SEED) for the reports' intervals, so that they repeat).

    method "hierarchical": forks, then iterations within each drawn fork (Kalibera and Jones,
    section 4); "pooled": all values as one independent sample (what coopbench did before:
    too narrow when forks differ). Vectorised in chunks of about 2 million drawn values."""
    if method == "pooled":
        a = np.concatenate(groups)
        out = np.empty(resamples)
        chunk = max(1, 2_000_000 // len(a))
        for s in range(0, resamples, chunk):
            b = min(chunk, resamples - s)
            out[s:s + b] = np.median(a[rng.integers(0, len(a), size=(b, len(a)))], axis=1)
        return out
    if method != "hierarchical":
        raise ValueError(f"method must be 'hierarchical' or 'pooled', not {method!r}")
    V = _padded(groups)
    k, nmax = V.shape
    out = np.empty(resamples)
    chunk = max(1, 2_000_000 // (k * nmax))
    for s in range(0, resamples, chunk):
        b = min(chunk, resamples - s)
        f, it, mask = hierarchical_index([len(g) for g in groups], b, rng)
        vals = V[f[:, :, None], it]
        if mask is None:
            out[s:s + b] = np.median(vals.reshape(b, -1), axis=1)
        else:
            vals[~mask] = np.nan
            out[s:s + b] = np.nanmedian(vals.reshape(b, -1), axis=1)
    return out


def percentile_interval(v, level: float = LEVEL):
    """percentile_interval — (lo, hi): the (1 − level)/2 and (1 + level)/2 quantiles of the bootstrap
    values v (the percentile interval; v should hold no NaN or infinity)."""
    alpha = (1 - level) / 2
    lo, hi = np.quantile(v, [alpha, 1 - alpha])
    return float(lo), float(hi)


def order_rank(k: int, level: float = LEVEL):
    """order_rank — (j, coverage): the order-statistic interval of a median from k independent values,
    [x_(j), x_(k+1-j)], with j the largest whose exact coverage 1 - 2 P(Binomial(k, 1/2) <= j - 1) is at
    least `level`; when none is (k <= 5 at 95 %), j = 1, [min, max], and its coverage 1 - 2 * 0.5^k.
    Exact for any continuous distribution of the values (Conover, Practical Nonparametric Statistics,
    section 3.2). k < 2: (1, 0.0), no interval."""
    if k < 2:
        return 1, 0.0
    best = (1, 1 - 2 * 0.5 ** k)
    tail = 0
    for j in range(1, k // 2 + 1):
        tail += math.comb(k, j - 1)  # P(Binomial(k, 1/2) <= j - 1) * 2^k
        cov = 1 - 2 * tail / 2 ** k
        if cov < level:
            break
        best = (j, cov)
    return best


def coverage(forks: int, level: float = LEVEL) -> float:
    """coverage — the exact coverage of a point's interval from `forks` forks (order_rank); 0 for one fork."""
    return order_rank(int(forks), level)[1]


def coverage_pct(forks: int, level: float = LEVEL) -> int:
    """coverage_pct — the coverage a label states for `forks` forks: coverage(forks) rounded down to a multiple
    of 5 % (50, 75, 85, 90, then 95). The exact coverage assumes independent forks; a point's forks on a host
    whose slow state lasts minutes are slightly dependent, and in the statistics review's model of this VM
    (tests/scripts/test_coverage.py) 4 forks covered 85 % (exact 87.5 %) and 6 forks 95.6 % (exact 96.9 %):
    rounded down so, a label holds there too."""
    return int(math.floor(coverage(forks, level) * 20 + 1e-9)) * 5


def median_ci(x, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED, forks=None,
              method: str = "order"):
    """median_ci — (median, lo, hi) of the sample x: the median of all its values and the interval of that
    median over forks (forks as in fork_groups; NaNs ignored).

    method "order" (the default, see METHOD): from k >= 2 forks, the order-statistic interval of the
    forks' medians (order_rank: exact coverage, coverage(k)), widened to hold the median of all values
    when it falls outside; "hierarchical" / "pooled": the bootstrap (boot_medians; what the interval was
    before, kept for scripts/coverage_study.py and the tests that compare). One value gives (v, v, v); no
    value gives three NaNs. One fork: the bootstrap of its iterations alone (variation within one
    process, ONE_FORK; n_forks tells)."""
    groups = fork_groups(x, forks)
    if not groups:
        return (math.nan, math.nan, math.nan)
    a = np.concatenate(groups)
    med = float(np.median(a))
    if len(a) == 1:
        return (med, med, med)
    if method == "order" and len(groups) >= 2:
        fm = np.sort([float(np.median(g)) for g in groups])
        j, _ = order_rank(len(fm), level)
        lo, hi = float(fm[j - 1]), float(fm[len(fm) - j])
        return (med, min(lo, med), max(hi, med))
    boot = "hierarchical" if method == "order" else method
    lo, hi = percentile_interval(boot_medians(groups, np.random.default_rng(seed), resamples, boot), level)
    return (med, lo, hi)


def sides_resampled(*samples, resamples: int = RESAMPLES, seed: int = SEED, method: str = "hierarchical"):
    """sides_resampled — (medians, boots) for independent samples (each its own set of processes): medians[i]
    the median of samples[i], boots[i] its `resamples` bootstrap medians (boot_medians; a sample of one
    value: that value every time), all drawn from one generator seeded `seed`, one sample after the other.
    None when a sample has no value. What ratio_ci, diff_ci and a quotient of two ratios are made of."""
    groups = [fork_groups(x) for x in samples]
    if not all(groups):
        return None
    meds = [float(np.median(np.concatenate(g))) for g in groups]
    rng = np.random.default_rng(seed)
    boots = [boot_medians(g, rng, resamples, method) if sum(map(len, g)) > 1 else np.full(resamples, m)
             for g, m in zip(groups, meds)]
    return meds, boots


def ratio_ci(a, b, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED, method: str = "hierarchical"):
    """ratio_ci — (ratio, lo, hi): median(b) / median(a) and its bootstrap interval.

    Each side is resampled hierarchically (forks, then iterations) and independently of the
    other (the two runs are independent). NaN when a sample is empty or a median is not positive."""
    t = sides_resampled(a, b, resamples=resamples, seed=seed, method=method)
    if t is None:
        return (math.nan, math.nan, math.nan)
    (ma, mb), (ra, rb) = t
    if ma <= 0 or mb <= 0:
        return (math.nan, math.nan, math.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rb / ra
    ratios = ratios[np.isfinite(ratios)]
    lo, hi = percentile_interval(ratios, level)
    return (mb / ma, lo, hi)


def diff_ci(a, b, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED, method: str = "hierarchical"):
    """diff_ci — (difference, lo, hi): median(b) - median(a) and its bootstrap interval (each side resampled
    hierarchically and independently, as ratio_ci). NaN when a sample is empty."""
    t = sides_resampled(a, b, resamples=resamples, seed=seed, method=method)
    if t is None:
        return (math.nan, math.nan, math.nan)
    (ma, mb), (ra, rb) = t
    lo, hi = percentile_interval(rb - ra, level)
    return (mb - ma, lo, hi)


def fork_shortfall(need: int, *samples) -> str:
    """fork_shortfall — "" when every sample has at least `need` forks, else "N forks, need M" (N the fewest)."""
    have = min(n_forks(s) for s in samples) if samples else 0
    if have >= need:
        return ""
    return f"{have} fork{'' if have == 1 else 's'}, need {need}"


def interval_label(forks: int, level: float = LEVEL) -> str:
    """interval_label — what a point's interval from `forks` forks is: ONE_FORK for one, else its exact
    coverage, "95 % interval (6 forks)", "85 % interval (4 forks; below 95 %)" (coverage_pct: never more
    than it has)."""
    if forks <= 1:
        return ONE_FORK
    below = "; below 95 %" if coverage(forks, level) < level else ""
    return f"{coverage_pct(forks, level)} % interval ({forks} forks{below})"


def ratio_label(forks: int, level: float = LEVEL) -> str:
    """ratio_label — what a ratio's (or difference's) bootstrap interval with `forks` forks on its smaller side
    is: "95 % interval" from MIN_FORKS_TWO forks a side (where the synthetic study measured 97-99 %), else
    that no 95 % is established for so few ("3 forks: coverage below 95 % possible")."""
    if forks <= 1:
        return ONE_FORK
    if forks < MIN_FORKS_TWO:
        return f"{forks} forks: not a 95 % interval (a ratio's needs {MIN_FORKS_TWO} forks a side)"
    return f"{level:.0%} interval"


def fork_medians(x, forks=None) -> np.ndarray:
    """fork_medians — the median of each fork's values (one value per process)."""
    return np.array([float(np.median(g)) for g in fork_groups(x, forks)])


def u_test(a, b):
    """u_test — the two-sided Mann–Whitney U test's p-value on the forks' medians of samples a and b (one value
    per fork: the fork is the unit of replication); NaN when either side has fewer than 2 forks."""
    from scipy.stats import mannwhitneyu  # Debian's python3-scipy (scripts/install-deps.sh)

    xa, xb = fork_medians(a), fork_medians(b)
    if len(xa) < 2 or len(xb) < 2:
        return math.nan
    return float(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)


def round_medians(g: pd.DataFrame, which: str = "warm", column: str = "value") -> dict:
    """round_medians — {repetition: the median of that fork's sample} for the rows g of one point (one fork per
    repetition); forks without an ok value are left out. In a sweep whose forks run in rounds (the driver's
    fork_order) repetition k of every point ran in round k, so two points' forks of one repetition ran minutes
    apart, under the same state of the machine."""
    out = {}
    for rep, gr in g.groupby("repetition", sort=True):
        x = _clean(sample(gr, which, column))
        if len(x):
            out[rep] = float(np.median(x))
    return out


def signed_rank_test(a: dict, b: dict):
    """signed_rank_test — the paired comparison of two points of one sweep, round by round: (p, pairs, ratio,
    lo, hi). a, b: round_medians of each. Each round present on both sides gives one pair and its ratio b/a;
    p: the two-sided Wilcoxon signed-rank test on the pairs' log ratios (scipy.stats.wilcoxon, exact for
    these sizes; a pair with equal values carries no sign and is dropped, Wilcoxon's own rule); ratio: the
    median of the pairs' ratios; lo, hi: the smallest and largest of them. A drift of the machine that
    moves every backend of a round together (a state lasting minutes on a shared host) cancels in each
    pair, where the unpaired U test on the forks' medians counts it as spread. NaN p for fewer than 2
    pairs."""
    from scipy.stats import wilcoxon  # Debian's python3-scipy (scripts/install-deps.sh)

    keys = sorted(set(a) & set(b))
    r = np.array([b[k] / a[k] for k in keys if a[k] > 0 and b[k] > 0])
    if not len(r):
        return math.nan, 0, math.nan, math.nan, math.nan
    ratio, lo, hi = float(np.median(r)), float(r.min()), float(r.max())
    d = np.log(r)
    if len(d) < 2 or not np.any(d != 0):
        return math.nan, len(r), ratio, lo, hi
    return float(wilcoxon(d, alternative="two-sided").pvalue), len(r), ratio, lo, hi


def rank_corr_perm_p(x, y, resamples: int = 20000, seed: int = SEED) -> float:
    """rank_corr_perm_p — one-sided permutation p-value that Spearman's ρ of (x, y) is this low by chance:
    the share of the orderings of y (all n! for n <= 8, else `resamples` random ones) whose ρ is <= the
    observed one. With n units it can be no smaller than 1/n! (1/24 for 4)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    n = len(x)
    rx, ry = _ranks(x[None, :])[0], _ranks(y[None, :])[0]
    obs = _spearman(rx[None, :], ry[None, :])[0]
    if n <= 8:
        perms = np.array(list(itertools.permutations(range(n))))
    else:
        rng = np.random.default_rng(seed)
        perms = np.argsort(rng.random((resamples, n)), axis=1)
    rho = _spearman(np.broadcast_to(rx, perms.shape), ry[perms])
    return float(np.mean(rho <= obs + 1e-12))


def _ranks(m: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata  # Debian's python3-scipy
    return rankdata(m, axis=1)


def _spearman(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation of two rank matrices (Spearman's ρ); NaN where a row is constant."""
    dx = rx - rx.mean(axis=1, keepdims=True)
    dy = ry - ry.mean(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (dx * dy).sum(axis=1) / np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))


def hierarchical_rows(rows: np.ndarray, forks, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """hierarchical_rows — per resample, the column-wise median of rows drawn hierarchically (forks, then each
    drawn fork's rows): shape (resamples, columns). rows: (n, columns), forks: n labels. For statistics of
    several columns of the same iterations (per-unit counters of one run), resampled together."""
    rows = np.asarray(rows, dtype=float)
    codes, _ = pd.factorize(np.asarray(forks))
    order = [np.flatnonzero(codes == c) for c in dict.fromkeys(codes.tolist())]
    sizes = [len(o) for o in order]
    nmax = max(sizes)
    pos = np.zeros((len(order), nmax), dtype=np.int64)
    for i, o in enumerate(order):
        pos[i, :len(o)] = o
    rng = np.random.default_rng(seed)
    f, it, mask = hierarchical_index(sizes, resamples, rng)
    picked = rows[pos[f[:, :, None], it]]  # (B, k, nmax, columns)
    if mask is not None:
        picked[~mask] = np.nan
    return np.nanmedian(picked.reshape(resamples, -1, rows.shape[1]), axis=1)


def rank_corr_ci(x_rows, y_rows, forks, level: float = LEVEL, resamples: int = RESAMPLES, seed: int = SEED):
    """rank_corr_ci — (ρ, lo, hi): Spearman's ρ between the per-column medians of x_rows and of y_rows (e.g.
    per-unit load and per-unit steals), and its hierarchical-bootstrap interval (forks, then iterations,
    the two matrices' rows drawn together). Resamples where either side is constant are left out."""
    x_rows, y_rows = np.asarray(x_rows, float), np.asarray(y_rows, float)
    mx, my = np.nanmedian(x_rows, axis=0), np.nanmedian(y_rows, axis=0)
    rho = float(_spearman(_ranks(mx[None, :]), _ranks(my[None, :]))[0])
    both = hierarchical_rows(np.hstack([x_rows, y_rows]), forks, resamples, seed)
    u = x_rows.shape[1]
    r = _spearman(_ranks(both[:, :u]), _ranks(both[:, u:]))
    r = r[np.isfinite(r)]
    if len(r) == 0:
        return (rho, math.nan, math.nan)
    lo, hi = percentile_interval(r, level)
    return (rho, lo, hi)


# ----------------------------------------------------------------------------- rows, samples, summaries

def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """ok_rows — the rows with status ok and a value that count for the warm statistics (phase measure)."""
    return df[(df["status"] == "ok") & df["value"].notna() & (df["phase"] == "measure")]


def failed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """failed_rows — the rows with status failed."""
    return df[df["status"] != "ok"]


def warm_sample(g: pd.DataFrame, column: str = "value") -> pd.Series:
    """warm_sample — the timed iterations of rows g (phase measure, status ok, `column` present), indexed by fork.

    Iteration 0 is the cold run of a fresh process: a fork that ran later iterations (W = 0, I > 1) gives
    only those; a fork whose only run is iteration 0 (W = 0, I = 1; a folder of schema version 1) keeps it,
    and is_cold_only tells a caller that such a sample is cold, not warm."""
    sub = g[(g["status"] == "ok") & (g["phase"] == "measure") & g[column].notna()]
    if len(sub) and "iteration" in sub.columns and (sub["iteration"] == 0).any() and (sub["iteration"] > 0).any():
        later = sub.groupby(fork_labels(sub).to_numpy())["iteration"].transform("max").to_numpy() > 0
        sub = sub[~((sub["iteration"].to_numpy() == 0) & later)]
    return pd.Series(sub[column].to_numpy(dtype=float), index=fork_labels(sub), name=column)


def is_cold_only(g: pd.DataFrame) -> bool:
    """is_cold_only — True when the timed rows of g (ok, phase measure) are all iteration 0: one cold run per
    fork and no warm iteration, so a "warm" line or cell drawn from them would show cold runs as warm."""
    sub = g[(g["status"] == "ok") & (g["phase"] == "measure")]
    return bool(len(sub)) and bool((sub["iteration"] == 0).all())


def timed_forks(g: pd.DataFrame, column: str = "value") -> list:
    """timed_forks — the timed iterations of rows g (warm_sample) as one array per fork, in order of first sight
    (fork_groups): forks told apart by folder, host, point and repetition (fork_labels), so that two folders'
    or two hosts' repetition 0 stay two forks. What the variance per level (plan_precision.py) and the
    subsets of forks (coverage_study.py) are computed from."""
    return fork_groups(warm_sample(g, column))


def cold_sample(g: pd.DataFrame, column: str = "value") -> pd.Series:
    """cold_sample — the cold runs of rows g (iteration 0 of each fork, status ok, `column` present), indexed by fork."""
    sub = g[(g["status"] == "ok") & (g["iteration"] == 0) & g[column].notna()]
    return pd.Series(sub[column].to_numpy(dtype=float), index=fork_labels(sub), name=column)


def sample(g: pd.DataFrame, which: str = "warm", column: str = "value") -> pd.Series:
    """sample — warm_sample or cold_sample by name ("warm" or "cold")."""
    if which == "warm":
        return warm_sample(g, column)
    if which == "cold":
        return cold_sample(g, column)
    raise ValueError(f"sample: which must be 'warm' or 'cold', not {which!r}")


def summarize(df: pd.DataFrame, x: str, which: str = "warm") -> pd.DataFrame:
    """summarize — per (backend, processors, x): median, its interval (lo, hi), min, max, counts, forks, noisy.

    which: "warm" (timed iterations of all forks, the default) or "cold" (iteration 0 of
    each fork). Columns: backend, processors, <x>, median, lo, hi, min, max, n_ok, forks
    (forks with an ok value: 1 means lo–hi is the variation within one process only),
    n_failed (failed rows), reason (first failure reason), noisy (any fork noisy), cold_only (warm: the
    point ran only iteration 0 per fork, so its "warm" value is cold; is_cold_only).
    A point is 'failed' for plotting when n_ok is 0.
    """
    keys = ["backend", "processors", x]
    cols = keys + ["median", "lo", "hi", "min", "max", "n_ok", "forks", "n_failed", "reason", "noisy", "cold_only"]
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
            "n_ok": int(len(ok)), "forks": n_forks(ok), "n_failed": int(len(bad)),
            "reason": reasons[0] if reasons else "", "noisy": bool(g["noisy"].any()),
            "cold_only": which == "warm" and is_cold_only(g),
        })
    return pd.DataFrame(rows, columns=cols)


def point_stats(df: pd.DataFrame, column: str = "value") -> pd.DataFrame:
    """point_stats — one row per point: cold and warm median with intervals, counts, noisy, failure.

    Columns: point, backend, workload, processors, unit, forks, warm_median, warm_lo,
    warm_hi, n_warm, warm_forks, cold_median, cold_lo, cold_hi, n_cold, n_failed, reason,
    noisy, has_warm (some fork ran more than one iteration: warm is more than the cold shots).
    forks counts every fork of the point, warm_forks those with an ok timed value.
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
            "warm_median": wm, "warm_lo": wl, "warm_hi": wh, "n_warm": int(len(w)), "warm_forks": n_forks(w),
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


def _one_fork(forks) -> str:
    return "; 1 fork: within one process" if forks is not None and forks <= 1 else ""


def _coverage_mark(forks) -> str:
    """"; 85 %" for a point's interval from 2-5 forks (its exact coverage, below 95 %); the 1-fork mark for one."""
    if forks is None:
        return ""
    if forks <= 1:
        return _one_fork(forks)
    return f"; {coverage_pct(forks)} %" if coverage(forks) < LEVEL else ""


def _ratio_mark(forks) -> str:
    if forks is None:
        return ""
    if forks <= 1:
        return _one_fork(forks)
    return f"; {forks} forks: not 95 %" if forks < MIN_FORKS_TWO else ""


def fmt_ci(med, lo, hi, forks: int | None = None) -> str:
    """fmt_ci — "66 (60–70)"; the median alone when the interval is a single value; – for NaN.
    forks=1 adds "; 1 fork: within one process" inside the brackets (that range is no confidence interval);
    2-5 forks add the interval's coverage, "66 (60–70; 85 %)" (interval_label); from 6 forks it is at
    least 95 % and unmarked."""
    if med != med:
        return "–"
    if lo != lo or hi != hi or lo == hi:
        return fmt_value(med)
    return f"{fmt_value(med)} ({fmt_value(lo)}–{fmt_value(hi)}{_coverage_mark(forks)})"


def fmt_ratio(r, lo, hi, forks: int | None = None) -> str:
    """fmt_ratio — "2.10× (1.90–2.40)": a ratio with its interval (2 significant digits below 0.1); the ratio
    alone when the interval is a single value (one run a side); – for NaN. forks: the fewer forks of the two
    sides; 1 adds "; 1 fork: within one process", 2-3 "; 3 forks: not 95 %" (ratio_label)."""
    if r != r:
        return "–"

    def f(v):
        return f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.2g}"

    if lo != lo or hi != hi or lo == hi:
        return f"{f(r)}×"
    return f"{f(r)}× ({f(lo)}–{f(hi)}{_ratio_mark(forks)})"
