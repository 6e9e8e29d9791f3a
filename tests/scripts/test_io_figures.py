"""test_io_figures — the I/O workloads' figures (scripts/figures/io_*.py) and their rows in report.md's summary.

Every io_* module draws from a synthetic folder of every I/O workload (synthetic_io, with the idle-connections
and CPU-hogs workloads) and from a real tiny-plan folder (data/io-tiny) without error, and every figure passes
figure_checks (no lines drawn alike, no text over text, the failed × never a series', log axes labelled, refused
points on the axis). Client-bound points carry the mark at their line's height, and only they. A figure whose
column is absent becomes a note ("not drawn"), never a crash; a workload that is absent draws nothing. The
summary has each closed loop's server CPU per request as a row of its own (lower is better), none for the open
loops or for workloads without the counter.
Run: /usr/bin/python3 -m unittest -v test_io_figures (in tests/scripts).
"""

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import figure_checks as fc  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import synthetic  # noqa: E402
import synthetic_io  # noqa: E402

import coopbench as cr  # noqa: E402
from coopbench import summary  # noqa: E402

SCRIPTS = HERE.parent.parent / "scripts"
TINY = HERE / "data" / "io-tiny"
io = cr.sibling_module(SCRIPTS / "figures" / "io_echo.py", "_io")
sys.path.insert(0, str(SCRIPTS))
import plot  # noqa: E402

# A small folder: four backends (one refused at 1000 connections, one failing a point), P=1 and 2, 2 forks.
SMALL = dict(backends=("native-ws", "epoll", "go", "pthreads"), processors=(1, 2), repetitions=2, warmup=0,
             iterations=2)
ALL_FIGURES = {"io_echo_rate", "io_echo_cpu", "io_echo_open_latency", "io_http_hello_rate", "io_http_hello_cpu",
               "io_http_hello_open_latency", "io_rpc_rate", "io_rpc_cpu", "io_rpc_open_latency", "io_churn_rate",
               "io_churn_cpu", "io_echo_idle", "io_echo_hogs_latency"}


def io_items(folder):
    """(items, errors, figures) of plot.py's module run over the folder: items as (module, item), figures as
    [(name, fig)] (kept open, not written)."""
    res = cr.load(folder)
    with fc.kept_figures() as kept:
        items, errors = plot.run_modules(res, SCRIPTS / "figures", Path("/nonexistent-io-figures"))
    return items, errors, list(kept)


class Drawn(synthetic.TempDirCase):
    prefix = "coopbench-io-figures-"

    def tearDown(self):
        plt.close("all")
        super().tearDown()

    def test_every_io_figure_drawn_and_readable(self):
        d = synthetic_io.make_io_results(self.tmp / "run", **SMALL)
        items, errors, figs = io_items(d)
        self.assertEqual(errors, [])
        self.assertEqual({n for n, _ in figs}, ALL_FIGURES)
        self.assertEqual(fc.check_all(figs), {})
        # Each item names the workloads it shows, so that plot.py draws no generic figure of them.
        shown = {w for _, i in items for w in i["workloads"]}
        self.assertLessEqual({"echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn",
                              synthetic_io.IDLE, synthetic_io.HOGS}, shown)
        self.assertFalse([i for _, i in items if "not drawn" in i["title"]])
        # Throughput: a row of panels per P, a column per message size (row-major: P=1's sizes first).
        axes = [ax for ax in dict(figs)["io_echo_rate"].axes if ax.get_visible()]
        self.assertEqual([ax.get_title() for ax in axes], [f"{s} B · P={p}" for p in (1, 2) for s in (64, 512)])
        rows = {round(ax.get_position().y0, 3) for ax in axes}
        self.assertEqual(len(rows), 2)
        # The hockey stick: p50, p99, p99.9 side by side, log y.
        axes = [ax for ax in dict(figs)["io_echo_open_latency"].axes if ax.get_visible()]
        self.assertEqual([ax.get_title().split(" · ")[0] for ax in axes[:3]], ["p50", "p99", "p99.9"])
        self.assertEqual({ax.get_yscale() for ax in axes}, {"log"})

    def test_the_real_tiny_folder(self):
        items, errors, figs = io_items(TINY)
        self.assertEqual(errors, [])
        self.assertEqual({n for n, _ in figs}, {"io_echo_rate", "io_echo_cpu", "io_echo_open_latency",
                                                "io_http_hello_rate", "io_http_hello_cpu", "io_rpc_rate",
                                                "io_rpc_cpu", "io_churn_rate", "io_churn_cpu"})
        self.assertEqual(fc.check_all(figs), {})
        self.assertFalse([i for _, i in items if "not drawn" in i["title"]])

    def test_client_bound_points_marked_at_their_height(self):
        d = synthetic_io.make_io_results(self.tmp / "run", workloads=("echo", "echo-open"), **SMALL)
        res = cr.load(d)
        bound = io.bound_points(res.df)
        # echo from BOUND_AT connections; pthreads refused at 1000 (no mark: nothing ran).
        ok = res.df[(res.df["status"] == "ok") & (res.df["workload"] == "echo")]
        expected = {p for p in ok["point"].unique()
                    if ok[ok["point"] == p]["param.connections"].iloc[0] >= synthetic_io.BOUND_AT}
        self.assertEqual(bound, expected)
        _, _, figs = io_items(d)
        by = dict(figs)
        marks = [(ax, ln) for ax in by["io_echo_rate"].axes for ln in ax.get_lines() if ln.get_gid() == io.CLIENT_BOUND_GID]
        self.assertEqual(len(marks), len(expected))
        for ax, ln in marks:
            x, y = ln.get_xdata()[0], ln.get_ydata()[0]
            self.assertGreaterEqual(x, synthetic_io.BOUND_AT)
            # On a drawn line of that panel, at that x and height.
            self.assertTrue(any(abs(lx - x) < 1e-9 and abs(ly - y) <= 1e-9 * y
                                for l2 in ax.get_lines() if not l2.get_label().startswith("_")
                                for lx, ly in zip(l2.get_xdata(), l2.get_ydata())), (x, y))
        legend = [t.get_text() for leg in by["io_echo_rate"].legends for t in leg.get_texts()]
        self.assertIn(io.CLIENT_BOUND_LABEL, legend)
        self.assertFalse([ln for ax in by["io_echo_open_latency"].axes for ln in ax.get_lines()
                          if ln.get_gid() == io.CLIENT_BOUND_GID])

    def test_a_missing_column_is_a_note_not_a_crash(self):
        drop = ("p50_us", "server_cpu_us_per_request", "rss_per_idle_kib", "client_bound")
        d = synthetic_io.make_io_results(self.tmp / "run", drop=drop, **SMALL)
        items, errors, figs = io_items(d)
        self.assertEqual(errors, [])
        notes = {i["title"]: i["markdown"] for _, i in items if "not drawn" in i["title"]}
        for title, column in (("echo-open — latency", "counter.p50_us"), ("echo — server CPU", "counter.server_cpu"),
                              ("churn — server CPU per connection", "counter.server_cpu"),
                              ("echo-idle — memory", "counter.rss_per_idle_kib"),
                              ("echo-hogs — latency", "counter.p50_us")):
            hit = [m for t, m in notes.items() if t.startswith(title)]
            self.assertEqual(len(hit), 1, (title, sorted(notes)))
            self.assertIn(column, hit[0])
        names = {n for n, _ in figs}
        self.assertIn("io_echo_rate", names)  # the rate needs no counter: drawn, without client-bound marks
        self.assertIn("io_echo_idle", names)  # the active ones' p99 is the value: drawn, the memory panel noted
        self.assertNotIn("io_echo_cpu", names)
        self.assertNotIn("io_echo_open_latency", names)
        self.assertFalse([ln for _, f in figs for ax in f.axes for ln in ax.get_lines()
                          if ln.get_gid() == io.CLIENT_BOUND_GID])
        self.assertEqual(fc.check_all(figs), {})

    def test_absent_workloads_draw_nothing(self):
        d = synthetic_io.make_io_results(self.tmp / "run", workloads=("echo",), **SMALL)
        items, errors, figs = io_items(d)
        self.assertEqual(errors, [])
        self.assertEqual({n for n, _ in figs}, {"io_echo_rate", "io_echo_cpu"})
        self.assertFalse([i for _, i in items if "not drawn" in i["title"]])


class Summary(synthetic.TempDirCase):
    prefix = "coopbench-io-summary-"

    def test_closed_loops_get_a_server_cpu_row(self):
        d = synthetic_io.make_io_results(self.tmp / "run", extra=False, **SMALL)
        rows, families = summary.summary_rows(cr.load(d).df)
        by = {(r["workload"], r["P"]): r for r in rows}
        for w, per in (("echo", "request"), ("http-hello", "request"), ("rpc", "request"), ("churn", "connection")):
            r = by[(f"{w}: server CPU per {per}", 1)]
            self.assertFalse(r["higher"], w)  # a cost: lower is better
            self.assertEqual(r["unit"], f"us/{per}")
            # The synthetic server's CPU per request goes as 1 / BASE²: epoll's the least; coop's 1.21× of it.
            self.assertEqual(r["fastest"], "epoll")
            self.assertAlmostEqual(r["cells"]["coop"]["ratio"], (synthetic_io.BASE["epoll"] / synthetic_io.BASE["native-ws"]) ** 2, places=6)
            self.assertTrue(by[(w, 1)]["higher"])  # the rate's own row is still there
        self.assertFalse([r for r in rows if r["workload"].startswith(("echo-open:", "rpc-open:", "http-hello-open:"))])
        self.assertIn("epoll", families)
        text = summary.summary_section(cr.load(d).df)
        self.assertIn("| echo: server CPU per request | 1 |", text)
        self.assertIn("epoll (ceiling)", text.splitlines()[4])  # the families' header names the ceiling

    def test_no_cpu_row_without_the_counter(self):
        d = synthetic.make_results(self.tmp / "micro", workloads=("create",))
        self.assertTrue(summary.io_cpu_rows(cr.load(d).df).empty)
        d = synthetic_io.make_io_results(self.tmp / "old", drop=("server_cpu_us_per_request",), extra=False, **SMALL)
        rows, _ = summary.summary_rows(cr.load(d).df)
        self.assertFalse([r for r in rows if "server CPU" in r["workload"]])


if __name__ == "__main__":
    unittest.main()
