"""test_stats — the statistics of scripts/coopbench (intervals, U test, cold/warm) and the one schema.

  * median_ci: known answers (one, two, three values; the exact bootstrap distribution of
    the median of 11 distinct values, from the binomial law) and the coverage of the 95 %
    interval for a known distribution over many seeds;
  * ratio_ci and the U test on samples with a known answer; the public helpers other modules
    build on (fork_groups, boot_medians, percentile_interval, sides_resampled, timed_forks);
  * the fork as the unit: on synthetic forks whose effects are much larger than the
    iteration noise, the pooled bootstrap's 95 % interval covers the true median far less
    often than 95 %, the hierarchical one (forks, then iterations) near it; a point of one
    fork never carries a 95 % label (figure caption, report table, formatted cells);
  * compare.py on two synthetic runs that differ (slower / faster, exit 3 with
    --fail-on-slower) and two that do not (no significant difference), and on two
    backends of one folder;
  * loading: types from harness/schema.json, the legacy layout (results/reference/*
    and a synthetic version-1 folder), the cold/warm split and noisy marks in report.md,
    and the create figure's cold and warm lines.

Run: /usr/bin/python3 tests/scripts/test_stats.py (CTest scripts.stats; exits 77 = skipped
when scipy, Debian's python3-scipy, is missing).
"""

import csv
import io
import json
import math
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SCRIPTS))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import coopbench as cr  # noqa: E402
import synthetic  # noqa: E402
from synthetic import run  # noqa: E402
from coopbench import schema, stats  # noqa: E402

REFERENCE = ROOT / "results" / "reference"


def exact_bootstrap_median_quantiles(n: int, level: float = 0.95):
    """The order statistics (1-based k) at which the bootstrap distribution of the median of n distinct
    values (n odd) crosses (1-level)/2 and (1+level)/2, and the distance of the exact CDF from those
    levels at the crossing (so a test can tell that 2000 resamples resolve it).

    A resample's median is <= x_(k) iff at least (n+1)/2 of its n draws are <= x_(k): a binomial(n, k/n)
    tail. F(k) = P(median* <= x_(k)).
    """
    m = (n + 1) // 2

    def cdf(k):
        p = k / n
        return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(m, n + 1))

    a = (1 - level) / 2
    f = [cdf(k) for k in range(1, n + 1)]
    lo = next(k for k in range(1, n + 1) if f[k - 1] >= a)
    hi = next(k for k in range(1, n + 1) if f[k - 1] >= 1 - a)
    margin = min(abs(f[lo - 1] - a), abs(f[lo - 2] - a) if lo > 1 else 1,
                 abs(f[hi - 1] - (1 - a)), abs(f[hi - 2] - (1 - a)) if hi > 1 else 1)
    return lo, hi, margin


class MedianCiTest(unittest.TestCase):
    def test_small_samples_known_answers(self):
        self.assertEqual(stats.median_ci([7.0]), (7.0, 7.0, 7.0))
        self.assertTrue(all(math.isnan(v) for v in stats.median_ci([])))
        self.assertEqual(stats.median_ci([4.0, 4.0, 4.0, 4.0]), (4.0, 4.0, 4.0))
        # Two values: resampled medians are a (1/4), (a+b)/2 (1/2), b (1/4): the 2.5/97.5 % points are a, b.
        self.assertEqual(stats.median_ci([10.0, 20.0]), (15.0, 10.0, 20.0))
        # Three values: each end has probability 7/27 > 2.5 %: the interval is min–max. NaN is ignored.
        self.assertEqual(stats.median_ci([3.0, 1.0, float("nan"), 2.0]), (2.0, 1.0, 3.0))

    def test_eleven_values_match_the_exact_bootstrap_distribution(self):
        lo_k, hi_k, margin = exact_bootstrap_median_quantiles(11)
        self.assertGreater(margin, 0.005)  # 2000 resamples resolve it (standard error ~0.0035)
        x = [100.0 + 10 * i for i in range(11)]  # x_(k) = 90 + 10 k
        # eleven values, each its own fork: the bootstrap (method "hierarchical", kept for ratios and the
        # coverage study) against its exact law; the default ("order") is the order statistics' interval
        med, lo, hi = stats.median_ci(list(reversed(x)), method="hierarchical")
        self.assertEqual(med, 150.0)
        self.assertEqual((lo, hi), (x[lo_k - 1], x[hi_k - 1]), (lo_k, hi_k))
        self.assertEqual((lo_k, hi_k), (3, 9))  # the exact law, written out: x_(3) .. x_(9)
        # The same seed gives the same interval; another seed may move it only by resampling error.
        self.assertEqual(stats.median_ci(x, method="hierarchical"), stats.median_ci(x, method="hierarchical"))
        # order statistics of 11 values: j = 2 (coverage 1 - 2·12/2048 = 98.8 %; j = 3: 93.5 %)
        self.assertEqual(stats.median_ci(x), (150.0, 110.0, 190.0))

    def test_coverage_of_a_known_distribution(self):
        """95 % intervals of the median of exponential samples (true median ln 2) cover it about 95 % of the time."""
        rng = np.random.default_rng(7)
        trials, covered = 300, 0
        for i in range(trials):
            sample = rng.exponential(1.0, size=25)
            _, lo, hi = stats.median_ci(sample, seed=i)
            covered += lo <= math.log(2) <= hi
        rate = covered / trials
        # Binomial(300, 0.95) has sd 1.3 %; the percentile bootstrap of a median is slightly conservative.
        self.assertGreaterEqual(rate, 0.90, rate)
        self.assertLessEqual(rate, 0.995, rate)

    def test_interval_narrows_with_more_iterations(self):
        rng = np.random.default_rng(3)
        small, large = rng.normal(100, 5, 10), rng.normal(100, 5, 1000)
        w_small = np.subtract(*stats.median_ci(small)[2:0:-1])
        w_large = np.subtract(*stats.median_ci(large)[2:0:-1])
        self.assertLess(w_large, w_small / 4)


class ForkIsTheUnit(unittest.TestCase):
    """Fork effects (a process's layout and warmed state) much larger than the iteration noise."""

    @staticmethod
    def forks(rng, k, n, fork_sd=1.0, iter_sd=0.05, centre=100.0):
        v = (centre + rng.normal(0, fork_sd, k)[:, None] + rng.normal(0, iter_sd, (k, n))).ravel()
        return pd.Series(v, index=pd.Index(np.repeat([f"f{i}" for i in range(k)], n), name=stats.FORK))

    def test_pooled_coverage_is_far_below_95_and_hierarchical_near_it(self):
        # 6 forks (stats.MIN_FORKS_ONE) x 20 iterations; the true median of the fork-level
        # distribution is 100. 200 trials: the binomial sd of a rate near 0.93 is 1.8 %.
        rng = np.random.default_rng(20240601)
        trials, cover = 200, {"pooled": 0, "hierarchical": 0}
        for t in range(trials):
            s = self.forks(rng, 6, 20)
            for method in cover:
                _, lo, hi = stats.median_ci(s, resamples=500, seed=t, method=method)
                cover[method] += lo <= 100.0 <= hi
        pooled, hier = cover["pooled"] / trials, cover["hierarchical"] / trials
        self.assertLess(pooled, 0.6, cover)  # 120 values taken as independent: far too narrow
        self.assertGreaterEqual(hier, 0.88, cover)  # the percentile bootstrap of few forks is slightly liberal
        self.assertLessEqual(hier, 0.995, cover)

    def test_ratio_resamples_forks(self):
        rng = np.random.default_rng(5)
        a, b = self.forks(rng, 6, 20), self.forks(rng, 6, 20)
        _, plo, phi = stats.ratio_ci(a, b, method="pooled")
        _, hlo, hhi = stats.ratio_ci(a, b)
        self.assertGreater(hhi - hlo, 2 * (phi - plo))

    def test_forks_come_from_the_rows(self):
        g = pd.DataFrame({"point": ["p"] * 6, "repetition": [0, 0, 0, 1, 1, 1], "iteration": [0, 1, 2] * 2,
                          "phase": ["measure"] * 6, "status": ["ok"] * 6, "value": [1.0, 2, 3, 4, 5, 6]})
        self.assertEqual(stats.n_forks(stats.warm_sample(g)), 2)
        self.assertEqual(stats.n_forks(stats.cold_sample(g)), 2)
        self.assertEqual(stats.n_forks([1.0, 2.0, 3.0]), 3)  # a plain list: each value its own fork
        self.assertEqual(stats.fork_shortfall(4, stats.warm_sample(g)), "2 forks, need 4")
        self.assertEqual(stats.fork_shortfall(2, stats.warm_sample(g)), "")

    def test_one_fork_is_never_labelled_95(self):
        self.assertIn("1 fork", stats.fmt_ci(10, 9, 11, forks=1))
        self.assertNotIn("fork", stats.fmt_ci(10, 9, 11, forks=3))
        self.assertIn("1 fork", stats.fmt_ratio(2.0, 1.9, 2.1, forks=1))
        self.assertEqual(stats.interval_label(1), stats.ONE_FORK)
        with tempfile.TemporaryDirectory() as tmp:
            res = cr.load(synthetic.make_results(Path(tmp) / "one", backends=("native",), processors=(1,),
                                                 workloads={"create"}, repetitions=1, warmup=1, iterations=5))
            note = cr.figure_note(res.df, cold=True)
            self.assertIn("1 fork per point", note)
            self.assertIn(stats.ONE_FORK, note)
            self.assertNotRegex(note, r"95 ?%")
            sys.path.insert(0, str(SCRIPTS))
            import plot
            tables = plot.median_tables(res)
            self.assertIn("Forks per point: 1.", tables)
            rows = [ln for ln in tables.splitlines() if ln.startswith("| 1 |") and "(" in ln]  # cells with a range
            self.assertTrue(rows and all("1 fork: within one process" in r for r in rows), rows)
            # three forks: a 95 % band, no 1-fork mark
            res3 = cr.load(synthetic.make_results(Path(tmp) / "three", backends=("native",), processors=(1,),
                                                  workloads={"create"}, repetitions=3, warmup=1, iterations=5))
            note3 = cr.figure_note(res3.df)
            self.assertIn("75 %", note3)  # 3 forks: [min, max] of the forks covers 1 - 2·0.5³
            self.assertNotRegex(note3, r"95 ?% interval")
            self.assertNotIn("1 fork", note3)


class PublicHelpersTest(unittest.TestCase):
    """The functions other modules build on (claims.py, plan_precision.py, coverage_study.py): known answers."""

    def test_fork_groups(self):
        s = pd.Series([1.0, 5.0, 2.0, float("nan"), 6.0], index=pd.Index(["a", "b", "a", "b", "b"], name=stats.FORK))
        self.assertEqual([g.tolist() for g in stats.fork_groups(s)], [[1.0, 2.0], [5.0, 6.0]])  # first sight, no NaN
        self.assertEqual([g.tolist() for g in stats.fork_groups([3.0, float("nan"), 1.0])], [[3.0], [1.0]])
        self.assertEqual([g.tolist() for g in stats.fork_groups([1.0, 2.0, 3.0], forks=["y", "x", "y"])],
                         [[1.0, 3.0], [2.0]])
        self.assertEqual(stats.fork_groups([]), [])

    def test_boot_medians(self):
        # Two forks of constant values 1 and 3: a hierarchical resample draws 2 forks, so its median is 1, 2 or 3
        # with probabilities 1/4, 1/2, 1/4 (the iterations within a fork add nothing).
        g = [np.array([1.0, 1.0, 1.0]), np.array([3.0, 3.0, 3.0])]
        m = stats.boot_medians(g, np.random.default_rng(1), 4000)
        self.assertEqual(set(np.unique(m)), {1.0, 2.0, 3.0})
        self.assertAlmostEqual(float(np.mean(m == 2.0)), 0.5, delta=0.04)
        # pooled: the 6 values as if independent: the median of 6 draws is 2 when 3 are of each fork, C(6,3)/64
        p = stats.boot_medians(g, np.random.default_rng(1), 4000, method="pooled")
        self.assertAlmostEqual(float(np.mean(p == 2.0)), 20 / 64, delta=0.04)
        # the same generator state gives the same resamples; an unknown method is refused
        np.testing.assert_array_equal(m, stats.boot_medians(g, np.random.default_rng(1), 4000))
        with self.assertRaises(ValueError):
            stats.boot_medians(g, np.random.default_rng(1), 10, method="bca")
        # ragged forks: every resampled median lies between the smallest and largest value
        r = stats.boot_medians([np.array([1.0]), np.array([2.0, 4.0, 8.0])], np.random.default_rng(2), 500)
        self.assertTrue(((r >= 1.0) & (r <= 8.0)).all())

    def test_percentile_interval(self):
        np.testing.assert_allclose(stats.percentile_interval(np.arange(101.0)), (2.5, 97.5))
        np.testing.assert_allclose(stats.percentile_interval(np.arange(101.0), level=0.5), (25.0, 75.0))

    def test_sides_resampled(self):
        a, b = [10.0, 11.0, 12.0, 13.0], [20.0, 21.0, 22.0]
        meds, boots = stats.sides_resampled(a, b, resamples=300)
        self.assertEqual(meds, [11.5, 21.0])
        self.assertEqual([len(x) for x in boots], [300, 300])
        _, lo, hi = stats.ratio_ci(a, b, resamples=300)
        self.assertEqual((lo, hi), stats.percentile_interval(boots[1] / boots[0]))  # what ratio_ci is made of
        meds, boots = stats.sides_resampled([5.0], a, resamples=50)
        self.assertTrue((boots[0] == 5.0).all())  # one value: that value every time
        self.assertIsNone(stats.sides_resampled(a, [], resamples=50))

    def test_timed_forks_keep_folders_apart(self):
        rows = pd.DataFrame({"point": ["p"] * 8, "repetition": [0, 0, 0, 0] * 2, "iteration": [0, 1, 2, 3] * 2,
                             "phase": ["warmup", "measure", "measure", "measure"] * 2, "status": ["ok"] * 8,
                             "value": [9.0, 1, 2, 3, 9, 4, 5, 6], "folder": ["one"] * 4 + ["two"] * 4})
        self.assertEqual([g.tolist() for g in stats.timed_forks(rows)], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        self.assertEqual(len(stats.timed_forks(rows.drop(columns="folder"))), 1)  # one folder: repetition 0 once


class RatioAndUTest(unittest.TestCase):
    def test_ratio_known_answers(self):
        self.assertEqual(stats.ratio_ci([5.0] * 4, [10.0] * 4), (2.0, 2.0, 2.0))
        x = [98.0, 100.0, 102.0]
        r, lo, hi = stats.ratio_ci(x, [3 * v for v in x])
        self.assertEqual(r, 3.0)
        # Each resampled median lies in [98, 102] (times 3 for b): the ratio within 3 * 98/102 .. 3 * 102/98.
        self.assertGreaterEqual(lo, 3 * 98 / 102)
        self.assertLessEqual(hi, 3 * 102 / 98)
        self.assertLess(lo, 3.0)
        self.assertGreater(hi, 3.0)
        self.assertTrue(math.isnan(stats.ratio_ci([], [1.0])[0]))
        self.assertTrue(math.isnan(stats.ratio_ci([0.0], [1.0])[0]))
        self.assertEqual(stats.fmt_ratio(2.1, 1.9, 2.4), "2.10× (1.90–2.40)")
        self.assertEqual(stats.fmt_ratio(0.05, 0.04, 0.061), "0.05× (0.04–0.061)")

    def test_u_test(self):
        self.assertAlmostEqual(stats.u_test([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252)  # exact: 2 / C(10, 5)
        self.assertEqual(stats.u_test([1, 2, 3], [1, 2, 3]), 1.0)
        self.assertTrue(math.isnan(stats.u_test([1.0], [2.0, 3.0])))


def synthetic_run(folder, **kw):
    """A run of 3 forks x (1 warm-up + 5 timed) iterations: 15 timed values per point."""
    args = dict(backends=("native", "pthreads"), processors=(1,), workloads={"create"}, warmup=1, iterations=5)
    args.update(kw)
    return synthetic.make_results(folder, **args)


def scale_values(folder, factor, point=None):
    """Multiply the value of every row (or of one point's rows) of folder's results.csv by factor."""
    with open(Path(folder) / "results.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        if r["value"] and (point is None or r["point"] == point):
            r["value"] = repr(float(r["value"]) * factor)
    with open(Path(folder) / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
        w.writeheader()
        w.writerows(rows)


def compare_csv(*args):
    p = run("compare.py", *args, "--format", "csv")
    return p, {r["point"]: r for r in csv.DictReader(io.StringIO(p.stdout))}


class TempDirCase(synthetic.TempDirCase):
    prefix = "coopbench-stats-test-"


class PlanPrecisionTest(TempDirCase):
    """scripts/plan_precision.py: the variance components and Kalibera and Jones's optimal counts."""

    def test_levels_and_optimal_counts(self):
        import importlib.util
        spec = importlib.util.spec_from_file_location("plan_precision", SCRIPTS / "plan_precision.py")
        pp = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(pp)
        rng = np.random.default_rng(9)
        k, n = 40, 10
        fork = rng.normal(0, 2.0, k)  # T2 = 4
        rows = []
        for j in range(k):
            rows.append({"point": "p", "workload": "w", "repetition": j, "iteration": 0, "phase": "warmup",
                         "status": "ok", "value": 150.0, "seconds": 0.5})
            for i in range(n):  # T1 = 1
                rows.append({"point": "p", "workload": "w", "repetition": j, "iteration": i + 1, "phase": "measure",
                             "status": "ok", "value": 100 + fork[j] + rng.normal(0, 1.0), "seconds": 0.01})
        lv = pp.levels(pd.DataFrame(rows), fork_overhead=0.05)
        self.assertAlmostEqual(lv["t1"], 1.0, delta=0.2)
        self.assertAlmostEqual(lv["t2"], 4.0, delta=2.0)
        self.assertAlmostEqual(lv["c1"], 0.01)
        self.assertAlmostEqual(lv["c2"], 0.55)  # the warm-up's seconds + the process start
        n1, n2, secs = pp.plan_point(dict(lv, t1=1.0, t2=4.0), precision=0.01)
        self.assertEqual(n1, math.ceil(math.sqrt((0.55 / 0.01) * (1.0 / 4.0))))  # ceil(sqrt(13.75)) = 4
        # n2: the least with t(.975, n2-1) * sqrt(4/n2 + 1/(4 n2)) <= 1 % of 100
        def half(m):
            return pp._t(m - 1) * math.sqrt(4.0 / m + 1.0 / (n1 * m))
        self.assertLessEqual(half(n2), 1.0)
        self.assertGreater(half(n2 - 1), 1.0)
        self.assertAlmostEqual(secs, n2 * (0.55 + n1 * 0.01))
        # no variance between forks: iterations are the cheaper repetition, capped; forks at the verdict minimum
        n1, n2, _ = pp.plan_point(dict(lv, t1=1.0, t2=0.0), precision=0.5, max_iterations=50)
        self.assertEqual((n1, n2), (50, stats.MIN_FORKS_TWO))

    def test_cli(self):
        d = synthetic_run(self.tmp / "run")
        p = run("plan_precision.py", d, "--precision", "5%")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Plan for a 5.0% relative half-width", p.stdout)
        self.assertIn("native/create/N=10/P=1", p.stdout)
        p = run("plan_precision.py", d, "--precision", "5%", "--format", "r", "--budget", "60", "--round-seconds", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertGreaterEqual(int(p.stdout.strip()), stats.MIN_FORKS_TWO)
        # two folders (a pilot and its resumption): their repetitions 0..2 are six forks, not three
        p = run("plan_precision.py", d, synthetic_run(self.tmp / "run2"), "--precision", "5%", "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        planned = pd.read_csv(io.StringIO(p.stdout)).dropna(subset=["n2"])
        self.assertFalse(planned.empty, p.stdout)
        self.assertEqual(set(planned["forks"]), {6}, p.stdout)
        self.assertEqual(run("plan_precision.py", d, "--precision", "lots").returncode, 2)
        self.assertEqual(run("plan_precision.py", self.tmp / "nosuch").returncode, 2)
        p = run("coverage_study.py", synthetic_run(self.tmp / "many", repetitions=6), "--k", "3", "--draws", "2",
                "--resamples", "50")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("all points, k=3: pooled", p.stdout)


class CompareUTest(TempDirCase):
    """compare.py on runs of 4 forks a point (stats.MIN_FORKS_TWO: the fewest with which it calls a difference)."""

    def test_two_sweeps_of_one_code_get_no_verdict(self):
        """The review's A/A pair: tokio/news measured twice by one reproduce.sh run, one commit and host, 4 forks
        each, every fork of one above every fork of the other (1.39×). Two folders are two sweeps: the U test
        finds the difference (p = 2/C(8,4)), but it lies within what two sweeps of one commit were seen to
        differ (SWEEP_FACTOR), so no "slower"; the same difference beyond it is a verdict."""
        import compare
        a = synthetic_run(self.tmp / "a", repetitions=4)
        b = synthetic_run(self.tmp / "b", repetitions=4)
        scale_values(b, 1.39)
        p, got = compare_csv(a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = got["native/create/N=10/P=1"]
        self.assertLess(float(r["p_value"]), 0.05)
        self.assertNotIn(r["verdict"], ("slower", "faster"))
        self.assertEqual(r["verdict"], compare.MOMENT.format(f=compare.SWEEP_FACTOR))
        self.assertEqual(run("compare.py", a, b, "--fail-on-slower").returncode, 0)
        t = run("compare.py", a, b).stdout
        self.assertIn("two sweeps", t)
        self.assertIn("--paired", t)
        # Beyond the between-sweep level it is a verdict; --sweep-factor sets the level (1: none).
        scale_values(b, 3.0 / 1.39)
        _, got = compare_csv(a, b)
        self.assertEqual(got["native/create/N=10/P=1"]["verdict"], "slower")
        scale_values(b, 1.39 / 3.0)
        _, got = compare_csv(a, b, "--sweep-factor", "1.2")
        self.assertEqual(got["native/create/N=10/P=1"]["verdict"], "slower")
        self.assertEqual(run("compare.py", a, b, "--sweep-factor", "0.5").returncode, 2)
        self.assertEqual(run("compare.py", a, "--backends", "pthreads", "native", "--sweep-factor", "2").returncode, 2)
        # One sweep, two backends: no between-sweep level enters (their forks interleave by round).
        _, one = compare_csv(b, "--backends", "pthreads", "native")
        self.assertEqual(one["create/N=10/P=1"]["verdict"], "faster")

    def test_runs_that_differ_say_slower_and_faster(self):
        a = synthetic_run(self.tmp / "a", repetitions=4)
        b = synthetic_run(self.tmp / "b", repetitions=4)
        scale_values(b, 1.2)  # every timed iteration 20 % slower; the spread within a point is +-2 %
        p, got = compare_csv(a, b, "--sweep-factor", "1")  # assume no between-sweep level (a user's own choice)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = got["native/create/N=10/P=1"]
        self.assertEqual(r["verdict"], "slower")
        # the U test runs on the forks' medians: 4 v 4 fully separated, p about 2/C(8,4) = 0.029
        self.assertLess(float(r["p_value"]), 0.05)
        self.assertGreater(float(r["p_value"]), 0.02)
        self.assertEqual((r["n_a"], r["n_b"]), ("20", "20"))  # 4 forks x 5 timed iterations, not the warm-up
        self.assertEqual((r["forks_a"], r["forks_b"]), ("4", "4"))
        self.assertAlmostEqual(float(r["ratio"]), 1.2, places=9)
        self.assertLess(float(r["ratio_lo"]), 1.2)
        self.assertGreater(float(r["ratio_hi"]), 1.2)
        self.assertEqual({x["verdict"] for x in got.values() if x["state"] == "ok"}, {"slower"})
        _, back = compare_csv(b, a, "--sweep-factor", "1")
        self.assertEqual(back["native/create/N=10/P=1"]["verdict"], "faster")
        t = run("compare.py", a, b, "--sweep-factor", "1")
        self.assertRegex(t.stdout, r"native/create/N=10/P=1 +71\.27 \([^)]+\) +85\.53 \([^)]+\) +1\.20× \(1\.1\d–1\.2\d\) "
                                   r"+4v4 +0\.0[23]\d+ +slower\n")
        self.assertIn("Mann–Whitney U", t.stdout)
        self.assertEqual(run("compare.py", a, b, "--fail-on-slower", "--sweep-factor", "1").returncode, 3)
        self.assertEqual(run("compare.py", b, a, "--fail-on-slower", "--sweep-factor", "1").returncode, 0)

    def test_runs_that_do_not_differ_say_no_significant_difference(self):
        a = synthetic_run(self.tmp / "a", repetitions=4)
        b = synthetic_run(self.tmp / "b", repetitions=4)
        scale_values(b, 1.001)  # well inside the +-2 % spread: not a real difference
        scale_values(b, 1.2 / 1.001, point="native/create/N=100/P=1")  # ... except this point
        p, got = compare_csv(a, b, "--sweep-factor", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        for point, r in got.items():
            if r["state"] != "ok":
                continue
            want = "slower" if point == "native/create/N=100/P=1" else "no significant difference"
            self.assertEqual(r["verdict"], want, point)
        self.assertGreater(float(got["native/create/N=10/P=1"]["p_value"]), 0.05)
        self.assertAlmostEqual(float(got["native/create/N=10/P=1"]["ratio"]), 1.001, places=9)
        self.assertEqual(run("compare.py", a, b, "--fail-on-slower", "--workload", "create", "--sweep-factor", "1")
                         .returncode, 3)
        self.assertEqual(run("compare.py", a, a, "--fail-on-slower").returncode, 0)

    def test_two_backends_in_one_folder_and_cold(self):
        a = synthetic_run(self.tmp / "a", repetitions=4)
        p, got = compare_csv(a, "--backends", "pthreads", "native")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = got["create/N=10/P=1"]  # matched without the backend
        self.assertEqual(r["verdict"], "faster")
        self.assertAlmostEqual(float(r["ratio"]), 60 / 9000, places=9)
        # --cold: the iteration-0 rows only (one per fork, 3 x the warm value in the synthetic data).
        p, cold = compare_csv(a, "--backends", "pthreads", "native", "--cold")
        self.assertEqual((cold["create/N=10/P=1"]["n_a"], cold["create/N=10/P=1"]["n_b"]), ("4", "4"))
        self.assertAlmostEqual(float(cold["create/N=10/P=1"]["median_b"]), 3 * 72.0, delta=3 * 72.0 * 0.02)
        self.assertEqual(cold["create/N=10/P=1"]["verdict"], "faster")
        # 3 forks a side cannot reach p < 0.05 with a rank test (2/C(6,3) = 0.1), however many
        # iterations each fork ran: said, not claimed.
        three = synthetic_run(self.tmp / "three", repetitions=3, iterations=20)
        p, got = compare_csv(three, "--backends", "pthreads", "native")
        self.assertEqual(got["create/N=10/P=1"]["verdict"], "cannot be tested: 3 forks, need 4")
        self.assertIn("3 forks, need 4", run("compare.py", three, "--backends", "pthreads", "native").stdout)
        p = run("compare.py", a, "--backends", "pthreads", "nosuch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("nosuch", p.stderr)
        self.assertEqual(run("compare.py", a).returncode, 2)  # neither B nor --backends
        self.assertEqual(run("compare.py", a, a, "--alpha", "1.5").returncode, 2)

    def test_paired_by_round_sees_through_a_drift_of_whole_rounds(self):
        # Six rounds; rounds 1, 3, 5 ran in a slow state of the machine (every backend x2). B is
        # 0.78-0.82 of A in every round: the unpaired rank test on the forks' medians sees two
        # overlapping clusters (no significant difference), the signed-rank test on the rounds' ratios
        # sees six ratios below 1 (p = 2/2^6).
        a = synthetic_run(self.tmp / "a", repetitions=6)
        drift = [1, 2, 1, 2, 1, 2]
        ratios = [0.80, 0.81, 0.79, 0.82, 0.78, 0.805]
        with open(a / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            if r["value"] and r["point"].endswith("create/N=10/P=1"):
                k = int(r["repetition"])
                r["value"] = repr(100.0 * drift[k] * (ratios[k] if r["backend"] == "native" else 1.0))
        with open(a / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
            w.writeheader()
            w.writerows(rows)
        _, unpaired = compare_csv(a, "--backends", "pthreads", "native")
        self.assertEqual(unpaired["create/N=10/P=1"]["verdict"], "no significant difference")
        p, paired = compare_csv(a, "--backends", "pthreads", "native", "--paired")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = paired["create/N=10/P=1"]
        self.assertEqual(r["verdict"], "faster")
        self.assertAlmostEqual(float(r["p_value"]), 2 / 2 ** 6, places=9)
        self.assertEqual(r["pairs"], "6")
        self.assertAlmostEqual(float(r["pair_ratio"]), (0.80 + 0.805) / 2, places=9)
        self.assertAlmostEqual(float(r["pair_lo"]), 0.78, places=9)
        self.assertAlmostEqual(float(r["pair_hi"]), 0.82, places=9)
        t = run("compare.py", a, "--backends", "pthreads", "native", "--paired").stdout
        self.assertRegex(t, r"create/N=10/P=1 .* 0\.80 \(0\.78–0\.82\) +6v6 +0\.0312 +faster\n")
        self.assertIn("Wilcoxon signed-rank", t)
        # Five rounds cannot reach p < 0.05 (2/2^5 = 0.0625): said, not claimed.
        five = [r for r in rows if not (r["backend"] == "native" and r["repetition"] == "5")]
        with open(a / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
            w.writeheader()
            w.writerows(five)
        _, got = compare_csv(a, "--backends", "pthreads", "native", "--paired")
        self.assertEqual(got["create/N=10/P=1"]["verdict"], "cannot be tested: 5 pairs, need 6")
        # Pairing needs two backends of one sweep.
        p = run("compare.py", a, a, "--paired")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--backends", p.stderr)

    def test_help_documents_exit_codes_and_options(self):
        p = run("compare.py", "--help")
        self.assertEqual(p.returncode, 0)
        for needle in ("--alpha", "--backends", "--cold", "--fail-on-slower", "--paired", "Mann", "Exit status", "3 with"):
            self.assertIn(needle, p.stdout.replace("\n", " "))


class SchemaAndLoadTest(TempDirCase):
    def test_one_schema(self):
        names = [c["name"] for c in schema.COLUMNS]
        self.assertEqual(synthetic.COLUMNS, schema.concrete_columns(synthetic.PARAMS))
        self.assertEqual([c for c in synthetic.COLUMNS if not c.startswith("param.")],
                         [n for n in names if n != schema.PARAM])
        res = cr.load(synthetic_run(self.tmp / "run", noisy={"native/create/N=10/P=1"}))
        df = res.df
        for c in schema.COLUMNS:
            if c["name"] == schema.PARAM:
                continue
            want = {"int": "int64", "float": "float64", "bool": "bool", "string": "object", "json": "object"}[c["type"]]
            if c["type"] == "int" and df[c["name"]].isna().any():  # empty cells (failed rows): float with NaN
                want = "float64"
                self.assertTrue((df[c["name"]].dropna() % 1 == 0).all(), c["name"])
            self.assertEqual(str(df[c["name"]].dtype), want, c["name"])
        self.assertTrue(all(isinstance(v, str) for v in df["phase"]))
        self.assertTrue(all(isinstance(v, dict) for v in df["counters"]))
        self.assertEqual(int(df["noisy"].sum()), 6)  # fork 0 of one point: 1 warm-up + 5 timed rows
        # context.json is typed as schema.json's "context" says; loaded, it stays so.
        self.assertIsInstance(res.context["sweep"], dict)
        self.assertEqual(res.context["sweep"]["plan"], "quick")
        for c in schema.CONTEXT:
            if c["when"] == "run":
                self.assertIn(c["name"], res.context)
        self.assertTrue(res.has_warm)

    def test_legacy_context_reads_typed(self):
        # A folder written before the typed context (every value a string, the sweep a JSON
        # string, "per point", "false") loads into the same values as a typed one.
        typed = cr.load(synthetic.make_results(self.tmp / "typed")).context
        legacy_dir = synthetic.make_results(self.tmp / "legacy", legacy=True)
        raw = json.loads((legacy_dir / "context.json").read_text())
        self.assertIsInstance(raw["sweep"], str)
        self.assertEqual(raw["cores_available"], "2")
        self.assertEqual(cr.load(legacy_dir).context, typed)
        self.assertIsNone(typed["warmup"])
        self.assertIs(typed["oversubscribed"], False)
        self.assertEqual(schema.typed_context({"mixed_machines": "yes", "hosts": "3", "backend.go.GOGC": "100"}),
                         {"mixed_machines": True, "hosts": 3, "backend.go.GOGC": "100"})

    def test_legacy_reference_folders(self):
        folders = sorted(p for p in REFERENCE.iterdir() if (p / "results.csv").is_file())
        self.assertTrue(folders, REFERENCE)
        for d in folders:
            with open(d / "results.csv", newline="") as f:
                header = next(csv.reader(f))
            if "iteration" in header:
                continue  # re-measured with the version-2 harness
            res = cr.load(d)
            df = res.df
            self.assertEqual(set(df["iteration"]), {0}, d)
            self.assertEqual(set(df["phase"]), {"measure"}, d)
            self.assertFalse(df["noisy"].any(), d)
            self.assertTrue(df["load_before"].isna().all(), d)
            self.assertFalse(res.has_warm, d)
            st = cr.point_stats(df)
            ok = st[st["n_warm"] > 0]
            # One cold shot per fork: cold and warm are the same sample.
            self.assertTrue((ok["warm_median"] == ok["cold_median"]).all(), d)
            self.assertTrue((ok["n_warm"] == ok["n_cold"]).all(), d)

    def test_legacy_synthetic_folder_reports_cold_only(self):
        d = synthetic.make_results(self.tmp / "old", legacy=True, backends=("native",), workloads={"create"})
        with open(d / "results.csv", newline="") as f:
            self.assertNotIn("iteration", next(csv.reader(f)))
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        report = (d / "report.md").read_text()
        self.assertIn("Cold (one run per fork: iteration 0; no warm iterations measured)", report)
        self.assertNotIn("Warm (timed", report)
        self.assertIn("## Noisy points\n\nNot recorded", report)
        self.assertIn("| 1 | 66 (64.68–67.32; 75 %) | 33 (32.34–33.66; 75 %) |", report)


class ReportAndFigureTest(TempDirCase):
    def test_report_has_cold_and_warm_and_marks_noisy(self):
        d = synthetic_run(self.tmp / "run", processors=(1, 2), noisy={"native/create/N=10/P=1"})
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        report = (d / "report.md").read_text()
        med = report[report.index("### create"):report.index("## Noisy points")].replace("**", "")  # bold: best
        warm = med[med.index("Warm (timed"):med.index("Cold (iteration 0")]
        cold = med[med.index("Cold (iteration 0"):]
        # Warm: the 15 timed iterations (value x 0.99 / 1 / 1.01 per fork); cold: 3 x the fork's value.
        self.assertRegex(warm, r"\| 1 \| 66 \(\d[^)]*\) \| 33 \(")
        self.assertRegex(cold, r"\| 1 \| 198 \(194–202; 75 %\) \| 99 \(97\.02–101; 75 %\) \|")
        # The noisy point is marked in both tables, in no other cell, and listed with its load.
        self.assertRegex(warm, r"\| 10 \| 72 \([^)]+\) ⚠ noisy \| 36 \([^)]+\) \|")
        self.assertRegex(cold, r"\| 10 \| 216 \([^)]+\) ⚠ noisy \| 108 \([^)]+\) \|")
        self.assertEqual(med.count("⚠ noisy"), 2)
        noisy = report[report.index("## Noisy points"):report.index("## Failed points")]
        self.assertIn("| `native/create/N=10/P=1` ⚠ noisy | 1 of 3: fork 0 | 1.5 | 3 → 2 | 3.5 → 3.25 |", noisy)
        self.assertIn("hierarchical bootstrap", report)

    def test_a_point_that_ran_only_cold_is_never_drawn_as_warm(self):
        """The quick plan's switch T=1000 points ran W = 0, I = 1: one cold run per fork. In a folder whose other
        points have warm iterations, such a point must not sit on a warm line or in the warm table as a warm
        value; and a fork with W = 0, I > 1 gives its later iterations as warm, not its cold iteration 0."""
        d = synthetic_run(self.tmp / "mixed", backends=("native",))
        cold_point = "native/create/N=1000/P=1"
        with open(d / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        kept = []
        for r in rows:
            if r["point"] == cold_point:
                if r["iteration"] != "0":
                    continue
                r["phase"] = "measure"  # W = 0, I = 1: iteration 0 is the one timed run
            kept.append(r)
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
            w.writeheader()
            w.writerows(kept)
        res = cr.load(d)
        g = res.df[res.df["point"] == cold_point]
        self.assertTrue(stats.is_cold_only(g))
        s = stats.summarize(res.df[res.df["workload"] == "create"], "param.N")
        self.assertEqual(s[s["cold_only"]]["param.N"].tolist(), [1000])
        note = cr.figure_note(res.df[res.df["workload"] == "create"], cold=True)
        self.assertIn("1 point(s) ran one cold run per fork (iteration 0) and no warm iteration: not on the warm lines",
                      note)
        import plot
        tables = plot.median_tables(res)
        warm = tables[tables.index("Warm (timed"):tables.index("Cold (iteration 0")]
        self.assertRegex(warm, r"\| 1000 \| cold only \|")
        # W = 0, I = 3: iteration 0 (cold, 3x in the synthetic data) leaves the warm sample
        g2 = res.df[res.df["point"] == "native/create/N=10/P=1"].copy()
        g2.loc[g2["iteration"] == 0, "phase"] = "measure"
        self.assertEqual(len(stats.warm_sample(g2)), len(stats.warm_sample(res.df[res.df["point"] ==
                                                                                   "native/create/N=10/P=1"])))
        self.assertEqual(len(stats.cold_sample(g2)), 3)

    def test_merged_hosts_are_not_pooled(self):
        """A merged sweep: the same point id from two hosts gets a cell per host, each from its own rows."""
        d = synthetic.make_results(self.tmp / "merged", backends=("native",), processors=(1,), workloads={"create"})
        with open(d / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        big = [dict(r, host="big", value=repr(2 * float(r["value"])) if r["value"] else "") for r in rows]
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=schema.concrete_columns(synthetic.PARAMS, merged=True))
            w.writeheader()
            w.writerows([dict(r, host="small") for r in rows] + big)
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        report = (d / "report.md").read_text()
        self.assertIn("| N | native @big | native @small |", report)
        self.assertIn("| 1 | 132 (129.4–134.6; 75 %) | 66 (64.68–67.32; 75 %) |", report)
        p, got = compare_csv(d, d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertAlmostEqual(float(got["native/create/N=1/P=1 @big"]["median_a"]), 132.0)
        self.assertAlmostEqual(float(got["native/create/N=1/P=1 @small"]["median_a"]), 66.0)

    def test_create_figure_has_cold_and_warm_lines(self):
        import importlib.util

        d = synthetic_run(self.tmp / "run", noisy={"native/create/N=10/P=1"})
        res = cr.load(d)
        spec = importlib.util.spec_from_file_location("fig07_under_test", SCRIPTS / "figures" / "fig07_creation.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        seen = {}
        real_save = cr.save_figure

        def capture(fig, outdir, name):
            # Warm and cold lines sit in panels of their own, titled "warm" and "cold".
            seen["lines"] = {f"{ln.get_label()} {ax.get_title()}".strip(): ln for ax in fig.axes
                             for ln in ax.get_lines() if not ln.get_label().startswith("_")}
            seen["bands"] = sum(len(ax.collections) for ax in fig.axes)
            seen["caption"] = " ".join(t.get_text().replace("\n", " ") for t in fig.texts)  # wrapped lines joined
            return real_save(fig, outdir, name)

        with mock.patch.object(cr, "save_figure", side_effect=capture):
            items = mod.make(res, d / "figures")
        self.assertEqual(len(items), 1)
        lines = seen["lines"]
        self.assertEqual(set(lines), {"native warm", "native cold", "pthreads warm", "pthreads cold"})
        warm, cold = lines["native warm"], lines["native cold"]
        self.assertEqual(list(warm.get_xdata()), [1, 10, 100, 1000, 10000, 100000, 1000000])
        np.testing.assert_allclose(cold.get_ydata(), 3 * np.asarray(warm.get_ydata()))  # iteration 0: 3 x
        self.assertGreaterEqual(seen["bands"], 4)  # an interval band per line
        self.assertIn("band: 75 % confidence interval of the median over forks", seen["caption"])  # 3 forks
        self.assertIn("cold: iteration 0", seen["caption"])
        self.assertIn("1 noisy point", seen["caption"])
        # One run per fork (a version-1 folder): a single line per backend, not labelled cold/warm.
        old = cr.load(synthetic.make_results(self.tmp / "old", legacy=True, backends=("native",),
                                             processors=(1,), workloads={"create"}))
        with mock.patch.object(cr, "save_figure", side_effect=capture):
            mod.make(old, self.tmp / "old" / "figures")
        self.assertEqual(set(seen["lines"]), {"native"})
        self.assertIn("one cold run each", seen["caption"])


def main():
    try:
        import scipy.stats  # noqa: F401
    except ImportError:
        print("test_stats: SKIPPED: scipy is missing (Debian's python3-scipy; scripts/install-deps.sh installs it)")
        return 77
    prog = unittest.main(module=__name__, argv=[sys.argv[0], "-v"] + sys.argv[1:], exit=False)
    return 0 if prog.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
