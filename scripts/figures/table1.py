#!/usr/bin/env python3
"""table1 — Negele et al. 2017, Table 1: run times of the application benchmarks.

Rows: the paper's benchmarks (city, eratosthenes, mandelbrot, news, producer, tokenring, in
the paper's order), one row per parameter set measured (and per processor count when a run
has several); columns: the measured backends, each the median value in ms over the
timed iterations of all forks ("failed" when no run succeeded), then each backend's ratio
to pthreads (median / pthreads' median; > 1 is slower) with its bootstrap interval (hierarchical over forks; 95 % from 4 forks a side)
(columns "X / pthreads lo" and "hi"; coopbench.stats.ratio_ci), each coop backend / go (native,
native-ws, native-parasail and the other native-* builds) when both ran
(in table1.md as "0.85× (0.80–0.91)"), for each peer family with results (Go, tokio, Boost.Fiber:
PEER_FAMILIES, scripts/coopbench/families.py) `best coop` (the coop backend with the lowest median
in that row), `best F` (the family's variant with the lowest median at that row's P: tokio,
tokio-std-mutex or tokio/current_thread; boostfiber's three schedulers) and `best coop / best F`
with its interval (in table1.md as "native-ws / tokio-std-mutex: 0.50× (0.41–0.61)"), then the paper's own
Native / Linux / Windows numbers and its Native/Linux ratio, read from
results/paper/table1.csv. `noisy` names the backends whose cell was measured while the
machine was busy (the harness's noise guard marked a fork of that point noisy, as report.md's
`⚠ noisy`); table1.md and the figure mark those cells, and every ratio with a noisy side, with
a dagger (NOISY_MARK) and a footnote.

Three outputs: table1.csv (every column), table1.md (compact: the times per backend, each
coop policy / go, best coop / best F per peer family and the paper's Native/Linux ratio, noisy cells marked;
the other ratios are in the CSV and the figure) and
table1.png/.svg, the ratios drawn: per row, each backend's time relative to pthreads on a
log axis, one marker per backend (the figures' backend styles), and the paper's
Native/Linux ratio as a black bar beside ours.

The apps that pass values have two variants (their parameter `via`, workloads/apps/via.hpp):
Table 1 shows the paper's program, `via=monitor`; a row without a `via` (a results folder
from before the parameter) is a monitor row. The channel variant is table_channels.py's.

A measured row is set beside the paper's row of the same benchmark whose parameters agree
with it the most (producer N=1 with the paper's N=1 row, N=64 with N=64); the column `size`
says "paper" when every parameter equals the paper's and "reduced" otherwise (the quick
plan), so the paper's numbers are never mistaken for the same size. `paper params` gives
the paper's parameters.

Writes <outdir>/table1.md, table1.csv, table1.png and table1.svg; as a plot.py module,
make(res, outdir) returns the figure and the Markdown table as items. Standalone:
    /usr/bin/python3 scripts/figures/table1.py RESULTS_DIR [--out DIR]   (default RESULTS_DIR/figures)
Reads only results files (results.csv, context.json) and results/paper/table1.csv.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import coopbench as cr  # noqa: E402
from coopbench.families import family_label, family_of  # noqa: E402

NAME = "table1"
REFERENCE = "pthreads"
PAPER_CSV = Path(__file__).resolve().parents[2] / "results" / "paper" / "table1.csv"
VARIANT_MARKERS = ("d", "p", "h", "8", "H", "<", ">")
PAPER_COLUMNS = (("native_ms", "paper Native"), ("linux_ms", "paper Linux"), ("windows_ms", "paper Windows"))
TOKIO = "tokio"
BEST_COOP = "best coop"
# The peer families with variants a user chooses between (scripts/coopbench/families.py): each row sets coop's
# best policy against each family's best variant at that point, naming both ("best tokio" may be
# tokio-std-mutex or tokio/current_thread), so coop's best never meets a peer's second best.
PEER_FAMILIES = ("go", "tokio", "boostfiber")


def best_of(family: str) -> str:
    """best_of — the column naming a family's best variant in a row, e.g. "best tokio"."""
    return f"best {family}"


def best_ratio(family: str) -> str:
    """best_ratio — the column of coop's best over a family's best, e.g. "best coop / best tokio"."""
    return f"{BEST_COOP} / {best_of(family)}"


BEST_COOP_TOKIO = best_ratio(TOKIO)
# The mark of a cell measured while the machine was busy (the harness's `noisy` column; report.md marks the
# same points "⚠ noisy" and lists them under *Noisy points*): short, since table1.md is compact.
NOISY_MARK = "†"
NOISY_NOTE = "measured while the machine was busy"


def parse_params(text: str) -> dict:
    """parse_params — "N=1000;K=10" -> {"N": 1000, "K": 10} (values as numbers where they are)."""
    out = {}
    for part in str(text).split(";"):
        if "=" in part:
            k, v = part.split("=", 1)
            v = v.strip()
            try:
                out[k.strip()] = int(v)
            except ValueError:
                out[k.strip()] = v
    return out


VIA = "param.via"
MONITOR = "monitor"


def via_rows(df: pd.DataFrame, via: str) -> pd.DataFrame:
    """via_rows — the rows of variant `via` ("monitor" or "channel") without the `param.via` column. A row with
    no via (a workload without the parameter, or a folder from before it) counts as the monitor program."""
    if VIA not in df.columns:
        return df.copy() if via == MONITOR else df.iloc[0:0].copy()
    v = df[VIA].fillna("").astype(str).str.strip()
    keep = v.eq(via) | (v.eq("") if via == MONITOR else False)
    return df[keep].drop(columns=[VIA])


def load_paper(path: Path = PAPER_CSV) -> pd.DataFrame:
    """load_paper — the transcribed Table 1 (comment lines skipped), with a parsed `param` dict column."""
    paper = pd.read_csv(path, comment="#")
    paper["param"] = [parse_params(p) for p in paper["params"]]
    return paper


def _num(v):
    """A parameter value as a plain int when it is integral (pandas gives numpy ints and floats)."""
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float) and not math.isnan(v) and v == int(v):
        return int(v)
    return v


def _params_text(params: dict, order) -> str:
    keys = [k for k in order if k in params] + sorted(k for k in params if k not in order)
    return ", ".join(f"{k}={params[k]}" for k in keys)


def _fmt_ms(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if v >= 100:
        return f"{v:,.0f}".replace(",", "'")
    if v >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def _fmt_ratio(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return f"{v:.2f}" if v >= 0.1 else f"{v:.2g}"  # small ratios keep two significant digits


def best_paper_row(paper: pd.DataFrame, workload: str, params: dict):
    """best_paper_row — the paper's row of `workload` agreeing with `params` on most parameters (or None)."""
    rows = paper[paper["workload"] == workload]
    best, best_score = None, None
    for _, r in rows.iterrows():
        same = sum(1 for k, v in r["param"].items() if params.get(k) == v)
        # Tie-break: the nearest sizes (sum of |log ratio| over the numeric parameters).
        dist = sum(abs(math.log(params[k] / v)) for k, v in r["param"].items()
                   if isinstance(params.get(k), (int, float)) and isinstance(v, (int, float)) and params[k] > 0 and v > 0)
        score = (same, -dist)
        if best_score is None or score > best_score:
            best, best_score = r, score
    return best


def backend_order(backends, first) -> list:
    """backend_order — the backends named in `first` in that order, then the others by name."""
    return sorted(backends, key=lambda b: (first.index(b) if b in first else len(first), b))


def _backend_order(backends) -> list:
    """pthreads first (the reference), then stdthread, native (and its policies) and go, then the others by name."""
    return backend_order(backends, [REFERENCE, "stdthread", "native", "native-ws", "native-parasail", "go"])


def param_groups(w: pd.DataFrame):
    """param_groups — one workload's rows split by parameter set: (params, rows) pairs in parameter order,
    params maps each name (without "param.") to its value; only the param.* columns that hold a value count
    (one group, params {}, when none does)."""
    pcols = [c for c in w.columns if c.startswith("param.") and w[c].notna().any()
             and w[c].astype(str).str.strip().ne("").any()]
    if not pcols:
        yield {}, w
        return
    for key, g in w.groupby(pcols[0] if len(pcols) == 1 else pcols, sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        yield {c[len("param."):]: _num(v) for c, v in zip(pcols, key)}, g


def is_coop(backend: str) -> bool:
    """is_coop — coop's backends: native and its scheduling policies and builds (native-ws, native-parasail, ...)."""
    return backend == "native" or backend.startswith("native-")


def _noisy(rows: pd.DataFrame) -> bool:
    """Whether any fork of these rows was marked noisy by the harness (a point is noisy when any of its forks is,
    as coopbench.stats.summarize and report.md count it); False for a folder without the column."""
    return "noisy" in rows.columns and bool(rows["noisy"].fillna(False).astype(bool).any())


def _median(rows: pd.DataFrame):
    """The median of the timed ok values (coopbench.stats.warm_sample); "refused" when every row was refused (not
    run: a limit of the machine), "failed" when every run failed; NaN when there are none."""
    ok = cr.warm_sample(rows)
    if len(ok):
        return float(ok.median())
    if not rows.empty and bool((rows["status"] == "refused").all()):
        return "refused"
    return math.nan if rows.empty else "failed"


def _ratio(row: dict, name: str, num: pd.DataFrame, den: pd.DataFrame, mn, md) -> None:
    """row[name] = mn / md, row[name + " lo"/" hi"] its 95 % interval (hierarchical bootstrap over forks, both
    sides resampled independently), row["forks"] the fewest forks of a side compared in the row."""
    both = isinstance(md, float) and isinstance(mn, float) and not math.isnan(md + mn) and md > 0
    sd, sn = cr.warm_sample(den), cr.warm_sample(num)
    r, lo, hi = cr.ratio_ci(sd, sn) if both else (math.nan,) * 3
    row[name], row[name + " lo"], row[name + " hi"] = r, lo, hi
    if both:  # the row's fewest forks of any compared side: 1 means no interval across processes
        row["forks"] = min(row.get("forks", math.inf), cr.n_forks(sd), cr.n_forks(sn))


def workload_groups(df: pd.DataFrame, order):
    """workload_groups — (workload, params, rows) for each workload of `order` that has rows in df, in that order,
    and each of its parameter sets (param_groups)."""
    for workload in order:
        w = df[df["workload"] == workload]
        if not w.empty:
            for params, g in param_groups(w):
                yield workload, params, g


def build(res, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """build — the table as a DataFrame (one row per benchmark and parameter set); empty without data.

    Processors: a row is split by P only when some backend ran that parameter set at several
    P (a processor sweep). Otherwise each backend's cell is its value at the P it ran at, and
    when that differs from the row's P (the most common one; e.g. boostfiber/round_robin runs
    on one processor only) the `notes` column says so.
    """
    paper = load_paper() if paper is None else paper
    order = list(dict.fromkeys(paper["workload"]))
    df = via_rows(res.df[res.df["workload"].isin(order)], MONITOR)  # the paper's program
    if df.empty:
        return pd.DataFrame()
    backends = _backend_order(df["backend"].unique())
    rows = []
    for workload, params, g in workload_groups(df, order):
        sweep = (g.groupby("backend")["processors"].nunique() > 1).any()
        p_groups = [(int(p), gp) for p, gp in g.groupby("processors")] if sweep else [(None, g)]
        for p_row, gp in p_groups:
            rows.append(_row(paper, workload, params, gp, p_row, backends))
    table = pd.DataFrame(rows)
    if "P" in table.columns and table["P"].isna().all():
        table = table.drop(columns=["P"])
    return table


def _row(paper, workload, params, g, p_row, backends) -> dict:
    ref = best_paper_row(paper, workload, params)
    same = ref is not None and all(params.get(k) == v for k, v in ref["param"].items())
    row = {
        "benchmark": ref["benchmark"] if ref is not None else workload,
        "workload": workload,
        "params": _params_text(params, list(ref["param"]) if ref is not None else []),
    }
    procs = g["processors"].dropna().astype(int)
    row_p = p_row if p_row is not None else (int(procs.mode().max()) if len(procs) else None)
    row["P"] = row_p
    row["size"] = "paper" if same else "reduced"
    medians, notes, noisy = {}, [], []
    for b in backends:
        gb = g[g["backend"] == b]
        medians[b] = _median(gb)
        row[b] = medians[b]
        if _noisy(gb):
            noisy.append(b)
        bp = sorted(gb["processors"].dropna().astype(int).unique())
        if len(bp) and bp != [row_p]:
            notes.append(f"{b} at P={','.join(str(x) for x in bp)}")
    base = medians.get(REFERENCE)
    for b in backends:
        if b != REFERENCE:
            _ratio(row, f"{b} / {REFERENCE}", g[g["backend"] == b], g[g["backend"] == REFERENCE], medians[b], base)
    if "go" in medians:  # every coop scheduling policy against Go (native, native-ws, native-parasail)
        for b in backends:
            if b == "native" or b.startswith("native-"):  # coop: native, native-ws, native-parasail, native-clang...
                _ratio(row, f"{b} / go", g[g["backend"] == b], g[g["backend"] == "go"], medians[b], medians["go"])
    _best_columns(row, g, medians, backends, row_p)
    row["paper params"] = _params_text(ref["param"], list(ref["param"])) if ref is not None else ""
    for col, label in PAPER_COLUMNS:
        row[label] = float(ref[col]) if ref is not None else math.nan
    row["paper Native / Linux"] = float(ref["native_ms"]) / float(ref["linux_ms"]) if ref is not None else math.nan
    row["notes"] = "; ".join(notes)
    row["noisy"] = "; ".join(noisy)
    return row


def _timed(medians: dict, b: str) -> bool:
    return isinstance(medians[b], float) and not math.isnan(medians[b])


def _best_columns(row: dict, g: pd.DataFrame, medians: dict, backends, row_p) -> None:
    """_best_columns — for each peer family that ran in this row (PEER_FAMILIES): `best F`, its variant with the
    lowest median, and `best coop / best F` with its interval, beside `best coop` (the fastest coop policy).

    A family's best is chosen among its variants that ran at the row's P; only when none did (a one-thread variant
    such as tokio/current_thread in a P=2 row of its own), among all of them, as its cell's note says."""
    families = [f for f in PEER_FAMILIES if any(family_of(b) == f for b in backends)]
    if not families:
        return
    timed = [b for b in backends if is_coop(b) and _timed(medians, b)]
    best = min(timed, key=lambda b: medians[b]) if timed else ""
    row[BEST_COOP] = best
    at_p = {b: sorted(g[g["backend"] == b]["processors"].dropna().astype(int).unique()) in ([row_p], [])
            for b in backends}
    for fam in families:
        members = [b for b in backends if family_of(b) == fam and _timed(medians, b)]
        candidates = [b for b in members if at_p[b]] or members
        peer = min(candidates, key=lambda b: medians[b]) if candidates else ""
        row[best_of(fam)] = peer
        _ratio(row, best_ratio(fam), g[g["backend"] == best], g[g["backend"] == peer],
               medians[best] if best else math.nan, medians[peer] if peer else math.nan)


def noisy_backends(row) -> set:
    """noisy_backends — the backends whose cell in this table row was measured on a busy machine."""
    text = row.get("noisy", "") if hasattr(row, "get") else ""
    return {b for b in str(text).split("; ") if b} if isinstance(text, str) else set()


def cell_noisy(row, column: str) -> bool:
    """cell_noisy — whether the cell `column` of a table row rests on a noisy measurement: a backend's time when
    its cell is noisy, a ratio "X / Y" when either side is (`best coop`, `best tokio` ... stand for the backend they
    name)."""
    noisy = noisy_backends(row)
    if not noisy or column.startswith("paper "):
        return False
    if " / " in column:
        num, den = column.split(" / ", 1)
        num = row.get(num, "") if num.startswith("best ") else num
        den = row.get(den, "") if den.startswith("best ") else den
        return num in noisy or den in noisy
    return column in noisy


def noisy_ratio_cells(table: pd.DataFrame, reference: str) -> list:
    """noisy_ratio_cells — (row position, column) of every drawn ratio to `reference` that rests on a noisy
    measurement (the cells the figure marks)."""
    cols = [c for c in table.columns if c.endswith(f" / {reference}")]
    out = []
    for i, (_, r) in enumerate(table.iterrows()):
        for c in cols:
            v = r[c]
            if isinstance(v, float) and not math.isnan(v) and v > 0 and cell_noisy(r, c):
                out.append((i, c))
    return out


# Columns of the compact Markdown table besides the backends' times (all are in the CSV).
MD_COLUMNS_BEFORE = ("benchmark", "params", "P", "size")
MD_COLUMNS_AFTER = ("paper Native / Linux", "notes")
# Columns that are neither a backend's time nor shown as their own column in table1.md (best coop is shown
# inside its ratio's cell; noisy as the marks).
NOT_TIMES = ("workload", BEST_COOP, "noisy", "forks") + tuple(best_of(f) for f in PEER_FAMILIES)


def go_ratio_columns(table: pd.DataFrame) -> list:
    """go_ratio_columns — the "X / go" columns (one per coop policy that ran beside Go), in table order."""
    return [c for c in table.columns if c.endswith(" / go")]


def best_ratio_columns(table: pd.DataFrame) -> list:
    """best_ratio_columns — the "best coop / best F" columns of the peer families in the table (PEER_FAMILIES)."""
    return [best_ratio(f) for f in PEER_FAMILIES if best_ratio(f) in table.columns]


def tokio_ratio_columns(table: pd.DataFrame) -> list:
    """tokio_ratio_columns — ["best coop / best tokio"] when the table has tokio results, else []."""
    return [BEST_COOP_TOKIO] if BEST_COOP_TOKIO in table.columns else []


def best_cell(r, c: str, v) -> str:
    """best_cell — a "best coop / best F" cell: "native-ws / tokio-std-mutex: 0.50× (0.41–0.61)", both variants
    named."""
    fam = c.split(" / best ", 1)[1]
    return f"{r[BEST_COOP]} / {r[best_of(fam)]}: {cr.fmt_ratio(v, r[f'{c} lo'], r[f'{c} hi'], _forks(r))}" if v == v else ""


def markdown_lines(table: pd.DataFrame, cols, left, cell) -> list:
    """markdown_lines — the lines of a GitHub Markdown table of `cols`: the header, the alignment row (the columns
    in `left` left-aligned, the others right-aligned), then a line per row: a string value as it is, any other
    value as cell(row, column, value), every noisy cell (cell_noisy) marked with NOISY_MARK."""
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
             "|" + "|".join("---" if c in left else "---:" for c in cols) + "|"]
    for _, r in table.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            cells.append(v if isinstance(v, str) else cell(r, c, v))
            if cells[-1] and cell_noisy(r, c):
                cells[-1] += f" {NOISY_MARK}"
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _forks(r):
    """The fewest forks of a side compared in row r (None when the row has no ratio)."""
    f = r.get("forks", math.nan) if hasattr(r, "get") else math.nan
    return int(f) if f == f and f is not None else None


def _forks_text(table: pd.DataFrame) -> str:
    """How many forks the ratios rest on; "1 fork" means variation within one process only."""
    f = table["forks"].dropna() if "forks" in table.columns else pd.Series(dtype=float)
    if f.empty:
        return "no ratio"
    lo, hi = int(f.min()), int(f.max())
    txt = f"{lo}" + (f"–{hi}" if hi != lo else "") + f" fork{'' if hi == 1 else 's'} a side"
    return txt + (f"; marked \"1 fork\": {cr.ONE_FORK}, no confidence interval" if lo <= 1 else "")


def to_markdown(table: pd.DataFrame, context: dict) -> str:
    """to_markdown — the compact table as GitHub Markdown (times per backend, each coop policy / go, the paper's
    Native/Linux ratio), with a note on units, ratios and the source."""
    times = [c for c in table.columns if c not in MD_COLUMNS_BEFORE + MD_COLUMNS_AFTER + NOT_TIMES
             and " / " not in c and not c.startswith("paper ")]
    cols = [c for c in MD_COLUMNS_BEFORE if c in table.columns] + times + go_ratio_columns(table) + \
        best_ratio_columns(table) + \
        [c for c in MD_COLUMNS_AFTER if c in table.columns and not (c == "notes" and not table[c].astype(bool).any())]
    def cell(r, c, v) -> str:
        if c in best_ratio_columns(table):  # "native-ws / tokio-std-mutex: 0.50× (0.41–0.61)"
            return best_cell(r, c, v)
        if " / " in c and f"{c} lo" in r:  # "2.10× (1.90–2.40)": the ratio and its interval
            return cr.fmt_ratio(v, r[f"{c} lo"], r[f"{c} hi"], _forks(r)) if v == v else ""
        if " / " in c:
            return _fmt_ratio(v)
        if c == "P":
            return "" if v is None or math.isnan(v) else str(int(v))
        if c.startswith("paper "):
            return "" if math.isnan(v) else f"{v:,.0f}".replace(",", "'")  # the paper's ms
        return _fmt_ms(v)

    lines = markdown_lines(table, cols, ("benchmark", "workload", "params", "size", "paper params", "notes"), cell)
    lines += ["",
              f"Values: median run time in ms over the timed iterations of all forks (whole program: from before the first "
              f"spawn to after the last join); `native / go` (and `native-ws / go`, `native-parasail / go` "
              f"for coop's other scheduling policies): the policy's median divided by go's (< 1: coop is "
              f"faster), with its bootstrap interval (hierarchical: forks, then iterations; both sides resampled; 95 % from "
              f"{cr.MIN_FORKS_TWO} forks a side, a cell from fewer says \"not 95 %\"; "
              f"{_forks_text(table)}); "
              + ("`best coop / best F`: the coop policy with the lowest median in that row divided by the "
                 "lowest median among family F's variants at that row's P ("
                 + ", ".join(f"{family_label(f)}: " + ", ".join(sorted(b for b in table.columns if family_of(b) == f
                                                                      and " / " not in b and b not in NOT_TIMES))
                             for f in PEER_FAMILIES if best_ratio(f) in table.columns)
                 + "), both named, with its interval: coop's best is never set against a peer's second best; "
                 if best_ratio_columns(table) else "")
              + f"`paper Native / Linux`: the paper's coop time divided by its Linux threads' time. "
              f"Every backend's ratio to {REFERENCE} is drawn in table1.png and listed in table1.csv, with the "
              "paper's ms and parameters. "
              "P: the processors the row ran on (`notes` names backends that ran on other P). "
              "`size` reduced: our parameters differ from the paper's. Paper: Negele et al. 2017, Table 1 "
              "(64-core AMD Opteron 6380; Linux 2.6.32, Windows Server 2008 R2), results/paper/table1.csv."]
    if any(noisy_backends(r) for _, r in table.iterrows()):
        lines += ["", f"{NOISY_MARK}: {NOISY_NOTE} (the harness's noise guard marked a fork of that backend's point "
                      "noisy: other processes had more runnable threads than the point left cores free, or used more "
                      "CPU time than that; its time may be slower than on a quiet machine); a ratio is marked when "
                      "either side is. report.md's *Noisy points* lists the forks; table1.csv's `noisy` column names "
                      "the backends."]
    lines += ["", f"_{cr.caption(context)}_"]
    return "\n".join(lines)


def figure(table: pd.DataFrame, context: dict, outdir) -> list:
    """figure — Table 1's ratios drawn: one line per table row, each backend's median relative to
    pthreads' on a log axis (one marker per backend, in the figures' backend styles), the paper's
    Native/Linux ratio as a black bar. Returns the written files ([] without ratios to draw)."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ratio_cols = [c for c in table.columns if c.endswith(f" / {REFERENCE}")]
    if not ratio_cols:
        return []
    labels = []
    for _, r in table.iterrows():
        p = r.get("P")
        on = "" if p is None or (isinstance(p, float) and math.isnan(p)) else f", P={int(p)}"
        labels.append(f"{r['benchmark']} ({r['params']}{on})" + (" [reduced]" if r["size"] != "paper" else ""))
    n = len(labels)
    fig, ax = plt.subplots(figsize=(cr.FIG_WIDTH, 0.42 * n + 1.6))
    offsets = {c: (i - (len(ratio_cols) - 1) / 2) * min(0.5 / max(len(ratio_cols), 1), 0.12)
               for i, c in enumerate(ratio_cols)}
    values = []
    seen_styles = set()
    noisy = set(noisy_ratio_cells(table, REFERENCE))
    for c in ratio_cols:
        b = c[: -len(f" / {REFERENCE}")]
        style = cr.backend_style(b)
        # Variants of a family share its colour and marker (lines tell them apart by style;
        # markers cannot): the second and later ones get a marker of their own.
        spare = iter(VARIANT_MARKERS)
        while (style["color"], style["marker"]) in seen_styles:
            style["marker"] = next(spare, "o")
            if style["marker"] == "o":
                break
        seen_styles.add((style["color"], style["marker"]))
        ys, xs, hollow = [], [], []
        for i, v in enumerate(table[c]):
            if isinstance(v, float) and not math.isnan(v) and v > 0:
                y = n - 1 - i + offsets[c]
                ys.append(y)
                xs.append(v)
                lo, hi = table[c + " lo"].iloc[i] if c + " lo" in table else math.nan, \
                    table[c + " hi"].iloc[i] if c + " hi" in table else math.nan
                if isinstance(lo, float) and isinstance(hi, float) and 0 < lo < hi:
                    # The ratio's interval (hierarchical bootstrap over forks, both sides resampled) as a whisker.
                    ax.plot([lo, hi], [y, y], color=style["color"], linewidth=1.4, alpha=0.7,
                            solid_capstyle="butt", label="_interval")
                    values += [lo, hi]
                if (i, c) in noisy:
                    hollow.append((v, y))
        values += xs
        ax.plot(xs, ys, linestyle="none", marker=style["marker"], color=style["color"], markersize=7,
                label=f"{b} / {REFERENCE}")
        if hollow:  # resting on a noisy measurement: the same marker, hollow (a dagger beside it overprinted)
            ax.plot([v for v, _ in hollow], [y for _, y in hollow], linestyle="none", marker=style["marker"],
                    color=style["color"], markerfacecolor="white", markersize=7, label="_noisy")
    paper = [(n - 1 - i, v) for i, v in enumerate(table["paper Native / Linux"])
             if isinstance(v, float) and not math.isnan(v) and v > 0]
    if paper:
        # A bar, a mark no backend has (a hollow star read as one more tokio point, tokio's being a
        # filled one): the paper's value as a tick on the row's line.
        ax.plot([v for _, v in paper], [y for y, _ in paper], linestyle="none", marker="|", color="black",
                markersize=13, markeredgewidth=2, label="paper: Native / Linux")
        values += [v for _, v in paper]
    ax.axvline(1.0, color="#1f77b4", linewidth=1, alpha=0.6)
    ax.set_xscale("log")
    if values:
        lo, hi = min(values + [1.0]), max(values + [1.0])
        ax.set_xlim(lo / 1.6, hi * 1.6)
        if hi / lo < 300:
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}"))
    ax.set_yticks(range(n))
    # A row with a noisy ratio carries one dagger, in its label (one per marker overprinted in dense rows).
    noisy_rows = {i for i, _ in noisy}
    labels = [f"{lab} {NOISY_MARK}" if i in noisy_rows else lab for i, lab in enumerate(labels)]
    ax.set_yticklabels(list(reversed(labels)), fontsize=8)
    ax.set_ylim(-0.6, n - 0.4)
    for y in range(n):
        ax.axhline(y + 0.5, color="#dddddd", linewidth=0.6)
    ax.set_xlabel(f"run time relative to {REFERENCE} (log; < 1: faster than {REFERENCE})")
    ax.set_title("Table 1 — application benchmarks, time relative to pthreads")
    ax.grid(True, axis="x", which="major", alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    if any(c + " lo" in table for c in ratio_cols):
        handles.append(Line2D([], [], color="#555555", linewidth=1.4))
        f = table["forks"].dropna() if "forks" in table.columns else pd.Series(dtype=float)
        names.append("whisker: " + (cr.interval_label(int(f.min())) if len(f) else "interval"))
    if noisy:
        handles.append(Line2D([], [], linestyle="none", marker="o", color="#555555", markerfacecolor="white"))
        names.append(f"hollow, {NOISY_MARK} on its row: machine busy")
    failed = any(isinstance(v, str) and v == "failed" for c in table.columns for v in table[c])
    if failed:
        handles.append(Line2D([], [], linestyle="none"))
        names.append("(a missing marker: failed or not run)")
    # Legend and caption below the axes (beside them, the figure was 1,700 px wide with the
    # axes on half of it).
    ax.set_title("Table 1 — application benchmarks, time relative to pthreads", fontsize=10)
    fig.tight_layout()
    fig.legend(handles, names, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(len(names), 3))
    cr.add_caption(fig, context)
    return cr.save_figure(fig, outdir, NAME)


def write(res, outdir) -> tuple[pd.DataFrame, str, list]:
    """write — build the table and write table1.md, table1.csv and the figure into outdir;
    (table, markdown, paths: .md, .csv, then the figure's files)."""
    table = build(res)
    if table.empty:
        return table, "", []
    md = to_markdown(table, res.context)
    paths = cr.write_table(table, md, outdir, NAME, "Table 1 — application benchmarks")
    paths += figure(table, res.context, Path(outdir))
    return table, md, paths


def make(res, outdir):
    """make — the Table 1 items for plot.py (the ratio figure, the compact table), or [] when the
    results hold no Table 1 workload."""
    table, md, paths = write(res, outdir)
    if table.empty:
        return []
    items = []
    figs = [p for p in paths if p.suffix in (".png", ".svg")]
    if figs:
        items.append({"title": f"Table 1 — application benchmarks: time relative to {REFERENCE} "
                               "(the paper's Native/Linux as a black bar)", "files": [str(p) for p in figs]})
    items.append({"title": "Table 1 — application benchmarks (median ms; each coop policy / go; best coop / best of each peer family; "
                           f"the paper's Native/Linux; {NOISY_MARK}: {NOISY_NOTE}; every ratio in table1.csv)",
                  "markdown": md})
    return items


def main(argv=None) -> int:
    return cr.standalone_main(argv, __doc__, "table1.py", lambda res, out: write(res, out)[1:],
                              "no Table 1 workload in these results")


if __name__ == "__main__":
    sys.exit(main())
