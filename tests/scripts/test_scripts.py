"""test_scripts — behaviour of scripts/plot.py, scripts/compare.py and the scripts/coopbench package.

Each test writes its own synthetic results folder (tests/scripts/synthetic.py, following
docs/results-format.md: ok and failed points, several backends and P values,
repetitions, an unknown workload), runs the scripts as a user would (a subprocess with
this interpreter, /usr/bin/python3 under CTest) and checks files, report.md, printed
ratios and exit codes. Run: /usr/bin/python3 -m unittest -v tests/scripts/test_scripts.py
"""

import csv
import io
import re
import shutil
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SCRIPTS = ROOT / "scripts"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(SCRIPTS))

import synthetic  # noqa: E402
from synthetic import run  # noqa: E402

FIGURES = ("fig7_thread_creation", "fig8_context_switch", "fig9_locking")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def read_rows(folder):
    """read_rows — results.csv of a folder as a list of dicts."""
    with open(Path(folder) / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def write_rows(folder, rows):
    """write_rows — replace results.csv of a folder."""
    with open(Path(folder) / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=synthetic.COLUMNS)
        w.writeheader()
        w.writerows(rows)


class TempDirCase(synthetic.TempDirCase):
    prefix = "coopbench-scripts-test-"


class PlotTest(TempDirCase):
    def test_full_folder_gives_every_figure_and_report(self):
        d = synthetic.make_results(self.tmp / "run")
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Warning", p.stderr)  # pandas/matplotlib deprecations are bugs-to-be
        for name in FIGURES:
            png, svg = d / "figures" / f"{name}.png", d / "figures" / f"{name}.svg"
            self.assertTrue(png.is_file(), png)
            self.assertEqual(png.read_bytes()[:8], PNG_MAGIC, png)
            self.assertIn("<svg", svg.read_text(), svg)
        report = (d / "report.md").read_text()
        # Context: machine, NUMA, kernel, compiler, flags, build type, commit, sweep.
        for needle in ("testhost", "Synthetic CPU", "numa_nodes", "Linux 6.1.0-test", "GNU 12.2.0",
                       "-O2 -Wall -Wextra", "Release", "0123456789ab", "sweep"):
            self.assertIn(needle, report)
        # Every figure linked with a relative path that exists.
        links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
        for name in FIGURES:
            self.assertIn(f"figures/{name}.png", links)
        for link in links:
            self.assertFalse(Path(link).is_absolute(), link)
            self.assertTrue((d / link).is_file(), link)
        # The failed points with their reasons, including a single failed repetition.
        failed = report[report.index("## Failed points"):]
        self.assertIn("`pthreads/create/N=100000/P=1`", failed)
        self.assertIn(synthetic.CREATE_FAIL_REASON, failed)
        self.assertIn("`native/switch/K=2000/T=10/P=1` | 1 | " + synthetic.SELFCHECK_FAIL_REASON, failed)
        self.assertNotIn("native/create", failed)
        # Median tables: every workload, including the one without a figure module; backends as columns.
        medians = report[report.index("## Median values"):report.index("## Failed points")]
        medians = medians.replace("**", "")  # the best value of a row is in bold (test_report checks which)
        for w in ("create", "switch", "lock-local", "lock-global", "mystery"):
            self.assertIn(f"### {w}", medians)
        self.assertIn("| N | boostfiber/work_stealing P=1 | boostfiber/work_stealing P=2 | native P=1 |", medians)
        # create N=1: native P=1 median is 60 * 1.1 = 66 exactly (the middle repetition), the three forks are
        # 0.98, 1, 1.02 times it, and the interval of a median from three forks is min–max, whose exact coverage
        # 1 - 2·0.5³ = 75 % the cell carries; pthreads fails at 100k.
        self.assertRegex(medians, r"\| 1 \| 440 \(431\.2–448\.8; 75 %\) \| 220 \(215\.6–224\.4; 75 %\) \| "
                                  r"66 \(64\.68–67\.32; 75 %\) \| 33 \(32\.34–33\.66; 75 %\) \| 9,900 \(9,702–10,098; 75 %\) \|")
        self.assertRegex(medians, r"\| 100k \| 640 \([^)]+\) \| 320 \([^)]+\) \| 96 \([^)]+\) \| 48 \([^)]+\) "
                                  r"\| failed \| failed \| failed \| failed \|")
        # One run per fork: the cold table alone, said so; no noisy point.
        self.assertIn("Cold (one run per fork", medians)
        self.assertNotIn("Warm (", medians)
        self.assertIn("## Noisy points\n\nNone.", report)
        self.assertNotIn("## Errors", report)

    def test_subset_single_p_single_repetition(self):
        d = synthetic.make_results(self.tmp / "run", backends=("pthreads", "native"), processors=(1,),
                                   repetitions=1, workloads={"create"})
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("Warning", p.stderr)
        self.assertTrue((d / "figures" / "fig7_thread_creation.png").is_file())
        self.assertTrue((d / "figures" / "fig7_thread_creation.svg").is_file())
        for name in FIGURES[1:]:
            self.assertFalse((d / "figures" / f"{name}.png").exists(), name)
        report = (d / "report.md").read_text()
        self.assertIn("| N | native | pthreads |", report)  # one P: no "P=" in the columns
        # Re-plotting the same data gives the same SVG (no date, fixed ids): results diff cleanly.
        svg = (d / "figures" / "fig7_thread_creation.svg").read_bytes()
        self.assertEqual(run("plot.py", d).returncode, 0)
        self.assertEqual((d / "figures" / "fig7_thread_creation.svg").read_bytes(), svg)
        self.assertIn("`pthreads/create/N=1000000/P=1`", report)

    def test_backend_that_fails_everywhere_still_plots(self):
        d = self.tmp / "run"
        synthetic.make_results(d, backends=("pthreads", "native"), workloads={"create", "switch"})
        rows = read_rows(d)
        for r in rows:
            if r["backend"] == "pthreads":
                r.update(status="failed", value="", reason="boom")
        write_rows(d, rows)
        p = run("plot.py", d)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue((d / "figures" / "fig8_context_switch.png").is_file())
        self.assertIn("| `pthreads/switch/K=2000/T=1/P=1` | 0, 1, 2 | boom |", (d / "report.md").read_text())

    def test_raising_module_is_reported_and_others_still_run(self):
        d = synthetic.make_results(self.tmp / "run")
        mods = self.tmp / "modules"
        shutil.copytree(SCRIPTS / "figures", mods, ignore=shutil.ignore_patterns("__pycache__"))
        (mods / "aa_broken.py").write_text("def make(res, outdir):\n    raise RuntimeError('deliberately broken')\n")
        (mods / "ab_table.py").write_text(
            "def make(res, outdir):\n    return [{'title': 'A test table', 'text': 'Read me first.',\n"
            "             'markdown': '| a |\\n|---|\\n| 42 |'}]\n")
        p = run("plot.py", d, "--modules", mods)
        self.assertEqual(p.returncode, 1)
        self.assertIn("aa_broken.py", p.stderr)
        self.assertIn("deliberately broken", p.stderr)
        for name in FIGURES:
            self.assertTrue((d / "figures" / f"{name}.png").is_file(), name)
        report = (d / "report.md").read_text()
        self.assertIn("## Errors", report)
        self.assertIn("deliberately broken", report)
        self.assertIn("### A test table\n\nRead me first.\n\n| a |\n|---|\n| 42 |", report)

    def test_module_without_make_or_bad_return_is_an_error(self):
        d = synthetic.make_results(self.tmp / "run", workloads={"create"})
        mods = self.tmp / "modules"
        mods.mkdir()
        (mods / "no_make.py").write_text("X = 1\n")
        (mods / "bad_return.py").write_text("def make(res, outdir):\n    return [{'files': []}]\n")
        (mods / "_private.py").write_text("raise RuntimeError('must not be imported')\n")
        p = run("plot.py", d, "--modules", mods)
        self.assertEqual(p.returncode, 1)
        report = (d / "report.md").read_text()
        self.assertIn("no_make.py", report)
        self.assertIn("bad_return.py", report)
        self.assertNotIn("must not be imported", report + p.stderr)

    def test_not_a_results_folder_exits_2(self):
        p = run("plot.py", self.tmp)
        self.assertEqual(p.returncode, 2)
        self.assertIn("results.csv", p.stderr)
        self.assertFalse((self.tmp / "report.md").exists())


def parse_compare_csv(text):
    return {r["point"]: r for r in csv.DictReader(io.StringIO(text))}


class ScalingModelTest(TempDirCase):
    """scripts/scaling_model.py on a calibration and a switch folder written here: each policy's
    P=1 figure is its local part, P=2 = max((local + transfers * line) / 2, serial bound)."""

    def write(self, with_ws: bool):
        cal = self.tmp / "cal.txt"
        cal.write_text("line_transfer_ns 100\nlocal_cas_ns 5\nring_push_pop_ns 4\nqueue_enqueue_dequeue_ns 30\n")
        folder = self.tmp / "measured"
        folder.mkdir(exist_ok=True)
        rows = ["backend,workload,status,phase,processors,param.T,value"]
        for p, v in ((1, 50.0), (2, 400.0)):
            rows.append(f"native,switch,ok,measure,{p},100,{v}")
            rows.append(f"native,switch,ok,warmup,{p},100,{v * 10}")  # not a timed iteration: ignored
            if with_ws:
                rows.append(f"native-ws,switch,ok,measure,{p},100,{40.0 if p == 1 else 21.0}")
        (folder / "results.csv").write_text("\n".join(rows) + "\n")
        return cal, folder

    def model(self, with_ws: bool):
        cal, folder = self.write(with_ws)
        out = self.tmp / "out"
        r = run("scaling_model.py", cal, "--measured", folder, "--out", out)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out / "scaling_model.csv") as f:
            return r, {int(row["P"]): row for row in csv.DictReader(f)}

    def test_measured_local_parts(self):
        r, rows = self.model(with_ws=True)
        # native P=2: (50 + (6/2 + 1 + 1) * 100) / 2 = 275, above the serial bound 2 * 100
        self.assertAlmostEqual(float(rows[2]["native_ns"]), 275.0, places=1)
        self.assertAlmostEqual(float(rows[1]["ws_ns"]), 40.0, places=1)  # the measured P=1 input
        self.assertAlmostEqual(float(rows[2]["ws_ns"]), 20.0, places=1)  # nothing shared: half
        self.assertAlmostEqual(float(rows[64]["ws_per_proc_ns"]), 40.0, places=1)
        self.assertIn("P=2 check: predicted 20.0 ns/switch (no steals); measured (T>=10): T=100: 21.0", r.stdout)

    def test_estimated_ws_local_part_without_ws_points(self):
        _, rows = self.model(with_ws=False)
        self.assertAlmostEqual(float(rows[1]["ws_ns"]), 50.0 - 30.0 + 4.0, places=1)

    def test_folder_without_native_switch_points_is_refused(self):
        cal, folder = self.write(with_ws=False)
        (folder / "results.csv").write_text("backend,workload,status,phase,processors,param.T,value\n")
        r = run("scaling_model.py", cal, "--measured", folder, "--out", self.tmp / "out")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no ok native switch points", r.stderr)


class CompareTest(TempDirCase):
    def test_ratios_and_geomeans(self):
        a = synthetic.make_results(self.tmp / "a", scale=1.0)
        b = synthetic.make_results(self.tmp / "b", scale=2.5, backends=("pthreads", "native", "stdthread"))
        p = run("compare.py", a, b)
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        # Every point measured in both: B/A = 2.5; the per-workload and overall geometric means too.
        # The ratio's interval: forks at 0.98, 1, 1.02 on both sides give 2.5 * 0.98/1.02 .. 2.5 * 1.02/0.98.
        # n: forks a side; 3 a side cannot reach p < 0.05 with the rank test on forks (2/C(6,3) = 0.1).
        self.assertRegex(out, r"native/create/N=1000/P=2 +42 \(41\.16–42\.84; 75 %\) +105 \(102\.9–107\.1; 75 %\) "
                              r"+2\.50× \(2\.40–2\.60; 3 forks: not 95 %\) +3v3 +0\.1000 +cannot be tested: 3 forks, need 4\n")
        self.assertRegex(out, r"pthreads/lock-global/K=20000/T=8/P=1 +21,600 \([^)]+\) +54,000 \([^)]+\) +2\.50× ")
        for w in ("create", "switch", "lock-local", "lock-global", "mystery"):
            self.assertRegex(out, rf"geomean B/A {w}: 2\.500 \(\d+ of \d+ points matched;")
        self.assertRegex(out, r"geomean B/A all: 2\.500")
        self.assertRegex(out, r"pthreads/create/N=100000/P=1 +– +– +- +0v0 +- +failed in A and B")
        self.assertRegex(out, r"boostfiber/work_stealing/create/N=1/P=1 +440 \([^)]+\) +– +- +3v0 +- +only in A")

    def test_csv_format_and_uneven_ratios(self):
        a = synthetic.make_results(self.tmp / "a", scale=1.0, backends=("native",), workloads={"switch"})
        b = synthetic.make_results(self.tmp / "b", scale=1.0, backends=("native",), workloads={"switch"})
        # B: native switch T=1 P=1 four times slower, T=2 P=1 failed in every repetition.
        rows = read_rows(b)
        for r in rows:
            if r["point"] == "native/switch/K=2000/T=1/P=1":
                r["value"] = repr(float(r["value"]) * 4)
            if r["point"] == "native/switch/K=2000/T=2/P=1":
                r.update(status="failed", value="", reason="timeout")
        write_rows(b, rows)
        p = run("compare.py", a, b, "--format", "csv")
        self.assertEqual(p.returncode, 0, p.stderr)
        got = parse_compare_csv(p.stdout)
        self.assertAlmostEqual(float(got["native/switch/K=2000/T=1/P=1"]["ratio"]), 4.0, places=9)
        self.assertAlmostEqual(float(got["native/switch/K=2000/T=100/P=2"]["ratio"]), 1.0, places=9)
        self.assertEqual(got["native/switch/K=2000/T=2/P=1"]["state"], "failed in B")
        # T=10 P=1 has one failed repetition in both (synthetic): the median of the two ok ones still matches.
        self.assertAlmostEqual(float(got["native/switch/K=2000/T=10/P=1"]["ratio"]), 1.0, places=9)
        # Text: geomean over the 9 matched points = 4 ** (1/9).
        t = run("compare.py", a, b)
        self.assertIn(f"geomean B/A switch: {4 ** (1 / 9):.3f} (9 of 10 points matched;", t.stdout)

    def test_other_column(self):
        a = synthetic.make_results(self.tmp / "a", backends=("native",), workloads={"create"})
        b = synthetic.make_results(self.tmp / "b", backends=("native",), workloads={"create"})
        rows = read_rows(b)
        for r in rows:
            r["peak_rss_kib"] = str(int(r["peak_rss_kib"]) * 3)
        write_rows(b, rows)
        p = run("compare.py", a, b, "--column", "peak_rss_kib")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertRegex(p.stdout, r"native/create/N=10/P=1 +2,049 \(2,048–2,050; 75 %\) +6,147 \(6,144–6,150; 75 %\) +3\.00× ")
        self.assertIn("geomean B/A create: 3.000 (14 of 14 points matched;", p.stdout)
        self.assertIn("geomean B/A create: 1.000", run("compare.py", a, b).stdout)  # value: unchanged
        p = run("compare.py", a, b, "--column", "nonsense")
        self.assertEqual(p.returncode, 2)
        self.assertIn("nonsense", p.stderr)

    def test_bad_folder_exits_2(self):
        a = synthetic.make_results(self.tmp / "a", workloads={"create"})
        empty = self.tmp / "empty"
        empty.mkdir()
        for args in ((a, empty), (empty, a), (a, self.tmp / "missing")):
            p = run("compare.py", *args)
            self.assertEqual(p.returncode, 2, args)
            self.assertIn("results.csv", p.stderr)
        (empty / "results.csv").write_text("")
        self.assertEqual(run("compare.py", a, empty).returncode, 2)

    def test_nothing_in_common_exits_1(self):
        a = synthetic.make_results(self.tmp / "a", backends=("native",), workloads={"create"})
        b = synthetic.make_results(self.tmp / "b", backends=("pthreads",), workloads={"switch"})
        p = run("compare.py", a, b)
        self.assertEqual(p.returncode, 1)
        self.assertIn("only in A", p.stdout)
        self.assertIn("only in B", p.stdout)


class LoadTest(TempDirCase):
    def test_types_params_and_counters(self):
        import coopbench as cr

        d = synthetic.make_results(self.tmp / "run", processors=(1, 2))
        res = cr.load(d)
        df = res.df
        self.assertEqual(res.dir, d)
        self.assertEqual(res.context["git_commit"], "0123456789ab")
        self.assertTrue(str(df["value"].dtype).startswith("float"))
        self.assertTrue(str(df["param.N"].dtype).startswith(("float", "int")))
        self.assertEqual(set(df["param.mode"].unique()), {"", "a", "b"})
        self.assertIn("counter.timeouts_pct", df.columns)
        self.assertEqual(df[df["workload"] == "mystery"]["counter.timeouts_pct"].unique().tolist(), [1.5])
        self.assertTrue(df[df["workload"] != "mystery"]["counter.timeouts_pct"].isna().all())
        self.assertEqual(sorted(df["processors"].unique().tolist()), [1, 2])
        self.assertTrue(df[df["status"] == "failed"]["value"].isna().all())

    def test_caption_style_and_save(self):
        import matplotlib.pyplot as plt

        import coopbench as cr

        # Distinct, unmistakable values, so a caption that drops one is caught.
        ctx = {"host": "vmhost42", "cpu_model": "Xeon-QQ", "cores_available": "4", "compiler": "GNU 12.2.0",
               "build_type": "Release", "git_commit": "0123456789abcdef0123456789abcdef01234567"}
        c = cr.caption(ctx)
        needles = {"host": "vmhost42", "cpu_model": "(Xeon-QQ)", "cores_available": "4 cores",
                   "compiler": "GNU 12.2.0", "build_type": "Release", "git_commit": "commit 0123456789ab"}
        for needle in needles.values():
            self.assertIn(needle, c)
        self.assertNotIn("0123456789abc", c)  # the commit is shortened to 12 characters
        for key, needle in needles.items():  # each part is there only when its key is given
            partial = {k: v for k, v in ctx.items() if k != key}
            self.assertNotIn(needle, cr.caption(partial), key)
        self.assertEqual(cr.caption({}), "(no context.json)")
        # Styles: a fixed colour per backend, the same in every figure (a fresh call, as a
        # second figure would make it); a variant is a backend of its own (its own colour) with its
        # family's marker and a line style that differs from the family's and the other variants';
        # unknown names are stable across processes (a hash of the name, not of id()).
        names = ["native", "pthreads", "stdthread", "boostfiber"]
        colors = {n: cr.backend_style(n)["color"] for n in names}
        self.assertEqual(len(set(colors.values())), len(names), colors)
        for n in names:
            self.assertEqual(cr.backend_style(n)["linestyle"], "-")
        ws, rr = cr.backend_style("boostfiber/work_stealing"), cr.backend_style("boostfiber/round_robin")
        fam = cr.backend_style("boostfiber")
        self.assertEqual(ws["marker"], fam["marker"])
        self.assertEqual(len({ws["color"], rr["color"], cr.backend_style("boostfiber/shared_work")["color"]}), 3)
        self.assertNotEqual(ws["linestyle"], "-")
        sw = cr.backend_style("boostfiber/shared_work")
        self.assertEqual(len({ws["linestyle"], rr["linestyle"], sw["linestyle"], "-"}), 4)
        import subprocess, sys
        other = subprocess.run([sys.executable, "-c", "import coopbench as cr; print(cr.backend_style('someday'))"],
                               cwd=str(Path(cr.__file__).resolve().parents[1]), capture_output=True, text=True, check=True,
                               env={"PYTHONHASHSEED": "123", "MPLBACKEND": "Agg", "PATH": "/usr/bin"})
        self.assertEqual(other.stdout.strip(), str(cr.backend_style("someday")))
        fig, _ = plt.subplots()
        paths = cr.save_figure(fig, self.tmp / "out", "f")
        self.assertEqual([p.name for p in paths], ["f.png", "f.svg"])
        self.assertTrue(all(p.is_file() for p in paths))
        self.assertFalse(plt.get_fignums())  # closed

    def test_lines_split_by_varying_params_and_processors(self):
        import matplotlib.pyplot as plt

        import coopbench as cr

        d = synthetic.make_results(self.tmp / "run", backends=("native",), workloads={"switch"})
        rows = read_rows(d)
        extra = [dict(r, **{"param.K": "500", "point": r["point"].replace("K=2000", "K=500")}) for r in rows]
        write_rows(d, rows + extra)
        df = cr.load(d).workload("switch")
        self.assertEqual(cr.series_labels(df, "param.T"), ["backend", "processors", "param.K"])
        fig, ax = plt.subplots()
        failed = cr.plot_lines(ax, df, "param.T", xlabel="T", ylabel="ns")
        labels = ax.get_legend_handles_labels()[1]
        self.assertEqual(sorted(labels), ["native P=1 K=2000", "native P=1 K=500", "native P=2 K=2000",
                                          "native P=2 K=500"])
        self.assertEqual(failed, 0)  # T=10 P=1 has a failed repetition, but two ok ones
        self.assertEqual(ax.get_xscale(), "log")
        plt.close(fig)
        # One P, one K: the label is the backend alone.
        one = df[(df["processors"] == 1) & (df["param.K"] == 2000)]
        self.assertEqual(cr.series_labels(one, "param.T"), ["backend"])

    def test_merged_sweep_from_two_hosts_keeps_them_apart(self):
        """A folder from coopbench merge: a host column, hosts as separate lines, the caption says mixed."""
        import json

        import matplotlib.pyplot as plt

        import coopbench as cr

        d = synthetic.make_results(self.tmp / "merged", backends=("native", "pthreads"), processors=(1,),
                                   workloads={"switch"})
        rows = read_rows(d)
        both = [dict(r, host="small") for r in rows] + [dict(r, host="big") for r in rows]
        with open(d / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=synthetic.schema.concrete_columns(synthetic.PARAMS, merged=True))
            w.writeheader()
            w.writerows(both)
        ctx = json.loads((d / "context.json").read_text())
        ctx.update(host="small, big", hosts=2, shards=4, mixed_machines=True,
                   machines={"small": "Synthetic CPU, 2 cores", "big": "Other CPU, 64 cores"})
        (d / "context.json").write_text(json.dumps(ctx))
        res = cr.load(d)
        df = res.workload("switch")
        self.assertIn("host", cr.series_labels(df, "param.T"))
        fig, ax = plt.subplots()
        cr.plot_lines(ax, df, "param.T", xlabel="T", ylabel="ns")
        labels = ax.get_legend_handles_labels()[1]
        self.assertEqual(sorted(labels), ["native @big", "native @small", "pthreads @big", "pthreads @small"])
        plt.close(fig)
        cap = cr.caption(res.context)
        self.assertIn("MIXED MACHINES", cap)
        self.assertIn("big (Other CPU, 64 cores)", cap)
        # One host, as a single run: no host split, the caption names the machine.
        single = cr.load(synthetic.make_results(self.tmp / "single", workloads={"switch"}))
        self.assertEqual(set(single.df["host"]), {"testhost"})
        self.assertNotIn("host", cr.series_labels(single.workload("switch"), "param.T"))
        self.assertNotIn("MIXED", cr.caption(single.context))
        r = run("plot.py", d)
        self.assertEqual(r.returncode, 0, r.stderr)
        report = (d / "report.md").read_text()
        self.assertIn("Hosts (a merged sweep", report)
        self.assertIn("native @big", report)

    def test_line_cut_short_is_left_out(self):
        import coopbench as cr

        d = synthetic.make_results(self.tmp / "run", backends=("native",), workloads={"create"})
        n = len(read_rows(d))
        with open(d / "results.csv", "a") as f:
            f.write("native/create/N=10/P=9,native,native,cre")  # a sweep still writing its next row
        df = cr.load(d).df
        self.assertEqual(len(df), n)
        self.assertEqual(set(df["status"]), {"ok"})

    def test_missing_or_broken(self):
        import coopbench as cr

        with self.assertRaises(cr.ResultsError):
            cr.load(self.tmp)
        (self.tmp / "results.csv").write_text("a,b\n1,2\n")
        with self.assertRaises(cr.ResultsError):
            cr.load(self.tmp)


if __name__ == "__main__":
    unittest.main()
