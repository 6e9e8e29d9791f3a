#!/usr/bin/env python3
"""table_channels — the channel variant of the apps that pass values, every backend beside Go.

The apps City, Eratosthenes, Producer and TokenRing have two variants (their parameter `via`,
workloads/apps/via.hpp): Table 1 (table1.py) shows the paper's program, `via=monitor`; this
table shows `via=channel`, the same program over each backend's own channel (coop's and
Boost.Fiber's when they have one, else the generic channel from the backend's mutex and
condition variables; Go's `chan`; tokio's mpsc).

Rows: one per app and parameter set (the `via` column aside), split by processor count P when
the folder has several. Columns: every backend's median in ms over the timed iterations of
all forks ("failed" when no run succeeded), then each backend / go (its median divided by Go's;
< 1: faster than Go) with its bootstrap interval over forks (coopbench.stats.ratio_ci, 95 % from 4 forks a side; in the CSV as
"X / go", "X / go lo", "X / go hi"; in the Markdown as "0.85× (0.80–0.91)"), then, as in Table 1,
`best coop` and for each peer family (Go, tokio, Boost.Fiber) its best variant at that P, `best F`,
and `best coop / best F` with its interval (table1.PEER_FAMILIES: coop's best is never set against
a peer's second best). Boost.Fiber's own buffered_channel holds 2^k - 1 values: where C is not
such a number its rows ran with the nearest (boost_capacity), which the caption says. `noisy` names the
backends whose cell was measured while the machine was busy; the Markdown marks those cells,
and every ratio with a noisy side, with table1's dagger (table1.NOISY_MARK) and a footnote.

Writes <outdir>/table_channels.md and table_channels.csv; as a plot.py module, make(res,
outdir) returns the Markdown table as an item ([] when the folder has no via=channel row).
Standalone:
    /usr/bin/python3 scripts/figures/table_channels.py RESULTS_DIR [--out DIR]
Reads only results files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import coopbench as cr  # noqa: E402
import table1  # noqa: E402

NAME = "table_channels"
GO = "go"
CHANNEL = "channel"
# The apps with the parameter via, in Table 1's order, and their names there.
APPS = {"city": "City", "eratosthenes": "Eratosthenes", "producer": "Producer/Consumer", "tokenring": "Token Ring"}
PARAM_ORDER = ["N", "M", "K", "C"]
NOISY_MARK = table1.NOISY_MARK
NOISY_NOTE = table1.NOISY_NOTE


def _backend_order(backends) -> list:
    """Go first (the reference of the ratios), then coop's policies, then the others by name."""
    return table1.backend_order(backends, [GO, "native", "native-ws", "native-parasail"])


def build(res) -> pd.DataFrame:
    """build — the table as a DataFrame (one row per app, parameter set and, when several ran, P); empty when the
    results hold no via=channel row."""
    df = table1.via_rows(res.df[res.df["workload"].isin(list(APPS))], CHANNEL)
    if df.empty:
        return pd.DataFrame()
    backends = _backend_order(df["backend"].unique())
    rows = []
    for workload, params, g in table1.workload_groups(df, APPS):
        for p, gp in g.groupby("processors", sort=True):
            rows.append(_row(workload, params, int(p), gp, backends))
    return pd.DataFrame(rows)


def boost_capacity(c: int) -> int:
    """boost_capacity — what a Boost.Fiber workload channel of capacity c holds (runtimes/boostfiber/boostfiber.hpp,
    buffered_capacity): 0 for 0 (unbuffered_channel), else the 2^k - 1 nearest c, the larger on a tie."""
    if c <= 0:
        return 0
    lo = 1
    while 2 * lo + 1 <= c:
        lo = 2 * lo + 1
    if lo == c:
        return c
    hi = 2 * lo + 1
    return lo if c - lo < hi - c else hi


def boost_capacity_note(table: pd.DataFrame, context: dict) -> str:
    """boost_capacity_note — the capacities Boost.Fiber's rows really ran with where they differ from C (its
    backends' channel in context.json says Boost's own channels were used), else ""."""
    fibers = [c for c in table.columns if table1.family_of(c) == "boostfiber" and " / " not in c
              and c not in table1.NOT_TIMES]
    if not fibers or not any("buffered_channel(2^k)" in str(context.get(f"backend.{b}.channel", "")) for b in fibers):
        return ""
    used = {}
    for _, r in table.iterrows():
        c = table1.parse_params(str(r["params"]).replace(", ", ";")).get("C")
        if isinstance(c, int) and any(isinstance(r[b], float) and r[b] == r[b] for b in fibers):
            if boost_capacity(c) != c:
                used[c] = boost_capacity(c)
    if not used:
        return ""
    return ("Boost.Fiber's rows ran on Boost's own buffered_channel, which holds 2^k - 1 values: "
            + ", ".join(f"C={c} ran with capacity {used[c]}" for c in sorted(used))
            + " (the nearest it allows; --backend-opt channel=generic runs exactly C on the generic channel).")


def _row(workload, params, p, g, backends) -> dict:
    row = {"benchmark": APPS[workload], "workload": workload,
           "params": table1._params_text(params, PARAM_ORDER), "P": p}
    medians, noisy = {}, []
    for b in backends:
        gb = g[g["backend"] == b]
        medians[b] = table1._median(gb)
        row[b] = medians[b]
        if table1._noisy(gb):
            noisy.append(b)
    if GO in medians:
        for b in backends:
            if b != GO:
                table1._ratio(row, f"{b} / {GO}", g[g["backend"] == b], g[g["backend"] == GO], medians[b], medians[GO])
    table1._best_columns(row, g, medians, backends, p)  # best coop / best F, per peer family
    row["noisy"] = "; ".join(noisy)
    return row


def ratio_columns(table: pd.DataFrame) -> list:
    """ratio_columns — the "X / go" columns, in table order (not "best coop / best go": best_ratio_columns)."""
    return [c for c in table.columns if c.endswith(f" / {GO}") and not c.startswith(table1.BEST_COOP)]


def to_markdown(table: pd.DataFrame, context: dict) -> str:
    """to_markdown — the table as GitHub Markdown: each backend's ms, each backend / go with its interval, noisy
    cells marked, and a note on what the numbers are."""
    before = ["benchmark", "params", "P"]
    times = [c for c in table.columns if c not in before + ["workload", "noisy", "forks"] and " / " not in c
             and not c.endswith(" lo") and not c.endswith(" hi") and c not in table1.NOT_TIMES]
    cols = before + times + ratio_columns(table) + table1.best_ratio_columns(table)
    def cell(r, c, v) -> str:
        if c == "P":
            return str(int(v))
        if c in table1.best_ratio_columns(table):  # "native-ws / tokio/current_thread: 0.50× (0.41–0.61)"
            return table1.best_cell(r, c, v)
        if " / " in c:
            return cr.fmt_ratio(v, r[f"{c} lo"], r[f"{c} hi"], table1._forks(r)) if v == v else ""
        return table1._fmt_ms(v)

    lines = table1.markdown_lines(table, cols, ("benchmark", "params"), cell)
    lines += ["",
              "The channel variant (`via=channel`, workloads/apps/via.hpp): the apps' programs with each backend's "
              "own channel where the paper's program has a bounded buffer (capacity C) or a one-slot mailbox "
              "(capacity 1); Table 1 has the paper's monitor program. Values: median run time in ms over the timed "
              f"iterations of all forks (whole program: from before the first spawn to after the last join); "
              f"`X / {GO}`: X's median divided by {GO}'s (< 1: faster than Go's channels), with its bootstrap "
              f"interval (hierarchical: forks, then iterations; both sides resampled; 95 % from {cr.MIN_FORKS_TWO} forks a "
              f"side, a cell from fewer says \"not 95 %\"; {table1._forks_text(table)}). "
              "P: the processors the row ran on."
              + (" `best coop / best F`: the fastest coop policy of the row over the fastest variant of peer family F "
                 "at that P, both named, with its interval." if table1.best_ratio_columns(table) else "")]
    note = boost_capacity_note(table, context)
    if note:
        lines += ["", note]
    if any(str(r.get("noisy", "")) for _, r in table.iterrows()):
        lines += ["", f"{NOISY_MARK}: {NOISY_NOTE} (the harness's noise guard marked a fork of that backend's point "
                      "noisy); a ratio is marked when either side is. table_channels.csv's `noisy` column names the "
                      "backends."]
    lines += ["", f"_{cr.caption(context)}_"]
    return "\n".join(lines)


def write(res, outdir) -> tuple[pd.DataFrame, str, list]:
    """write — build the table and write table_channels.md and .csv into outdir; (table, markdown, paths)."""
    table = build(res)
    if table.empty:
        return table, "", []
    md = to_markdown(table, res.context)
    return table, md, cr.write_table(table, md, outdir, NAME, "The apps' channel variant, beside Go")


def make(res, outdir):
    """make — the channel table as a plot.py item, or [] without via=channel rows."""
    table, md, _ = write(res, outdir)
    if table.empty:
        return []
    return [{"title": f"The apps' channel variant (via=channel): median ms, each backend / {GO}; "
                      f"{NOISY_MARK}: {NOISY_NOTE}", "markdown": md}]


def main(argv=None) -> int:
    return cr.standalone_main(argv, __doc__, "table_channels.py", lambda res, out: write(res, out)[1:],
                              "no via=channel row in these results")


if __name__ == "__main__":
    sys.exit(main())
