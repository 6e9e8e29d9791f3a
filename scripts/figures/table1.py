#!/usr/bin/env python3
"""table1 — Negele et al. 2017, Table 1: run times of the application benchmarks.

Rows: the paper's benchmarks (city, eratosthenes, mandelbrot, news, producer, tokenring, in
the paper's order), one row per parameter set measured (and per processor count when a run
has several); columns: the measured backends, each the median value in ms over the
repetitions ("failed" when no repetition succeeded), then each backend's ratio to pthreads
(median / pthreads' median; > 1 is slower), then the paper's own Native / Linux / Windows
numbers and its Native/Linux ratio, read from results/paper/table1.csv.

A measured row is set beside the paper's row of the same benchmark whose parameters agree
with it the most (producer N=1 with the paper's N=1 row, N=64 with N=64); the column `size`
says "paper" when every parameter equals the paper's and "reduced" otherwise (the quick
plan), so the paper's numbers are never mistaken for the same size. `paper params` gives
the paper's parameters.

Writes <outdir>/table1.md and <outdir>/table1.csv; as a plot.py module, make(res, outdir)
returns the Markdown as a table item. Standalone:
    /usr/bin/python3 scripts/figures/table1.py RESULTS_DIR [--out DIR]   (default RESULTS_DIR/figures)
Reads only results files (results.csv, context.json) and results/paper/table1.csv.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import coopbench_results as cr  # noqa: E402

NAME = "table1"
REFERENCE = "pthreads"
PAPER_CSV = Path(__file__).resolve().parents[2] / "results" / "paper" / "table1.csv"
PAPER_COLUMNS = (("native_ms", "paper Native"), ("linux_ms", "paper Linux"), ("windows_ms", "paper Windows"))


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


def _backend_order(backends) -> list:
    """pthreads first (the reference), then stdthread and native, then the others by name."""
    first = [REFERENCE, "stdthread", "native"]
    return sorted(backends, key=lambda b: (first.index(b) if b in first else len(first), b))


def _median(rows: pd.DataFrame):
    """The median of the ok values; "failed" when every repetition failed; NaN when there are none."""
    ok = rows[(rows["status"] == "ok") & rows["value"].notna()]["value"]
    if len(ok):
        return float(ok.median())
    return math.nan if rows.empty else "failed"


def build(res, paper: pd.DataFrame | None = None) -> pd.DataFrame:
    """build — the table as a DataFrame (one row per benchmark and parameter set); empty without data.

    Processors: a row is split by P only when some backend ran that parameter set at several
    P (a processor sweep). Otherwise each backend's cell is its value at the P it ran at, and
    when that differs from the row's P (the most common one; e.g. boostfiber/round_robin runs
    on one processor only) the `notes` column says so.
    """
    paper = load_paper() if paper is None else paper
    order = list(dict.fromkeys(paper["workload"]))
    df = res.df[res.df["workload"].isin(order)].copy()
    if df.empty:
        return pd.DataFrame()
    backends = _backend_order(df["backend"].unique())
    rows = []
    for workload in order:
        w = df[df["workload"] == workload]
        if w.empty:
            continue
        pcols = [c for c in w.columns if c.startswith("param.") and w[c].notna().any()
                 and w[c].astype(str).str.strip().ne("").any()]
        for key, g in w.groupby(pcols[0] if len(pcols) == 1 else pcols, sort=True, dropna=False):
            key = key if isinstance(key, tuple) else (key,)
            params = {c[len("param."):]: _num(v) for c, v in zip(pcols, key)}
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
    medians, notes = {}, []
    for b in backends:
        gb = g[g["backend"] == b]
        medians[b] = _median(gb)
        row[b] = medians[b]
        bp = sorted(gb["processors"].dropna().astype(int).unique())
        if len(bp) and bp != [row_p]:
            notes.append(f"{b} at P={','.join(str(x) for x in bp)}")
    base = medians.get(REFERENCE)
    for b in backends:
        if b == REFERENCE:
            continue
        mb = medians[b]
        both = isinstance(base, float) and isinstance(mb, float) and not math.isnan(base + mb) and base > 0
        row[f"{b} / {REFERENCE}"] = mb / base if both else math.nan
    row["paper params"] = _params_text(ref["param"], list(ref["param"])) if ref is not None else ""
    for col, label in PAPER_COLUMNS:
        row[label] = float(ref[col]) if ref is not None else math.nan
    row["paper Native / Linux"] = float(ref["native_ms"]) / float(ref["linux_ms"]) if ref is not None else math.nan
    row["notes"] = "; ".join(notes)
    return row


def to_markdown(table: pd.DataFrame, context: dict) -> str:
    """to_markdown — the table as GitHub Markdown, with a note on units, ratios and the source."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in cols) + " |",
             "|" + "|".join("---" if c in ("benchmark", "workload", "params", "size", "paper params", "notes") else "---:"
                            for c in cols) + "|"]
    for _, r in table.iterrows():
        cells = []
        for c in cols:
            v = r[c]
            if isinstance(v, str):
                cells.append(v)
            elif " / " in c:
                cells.append(_fmt_ratio(v))
            elif c == "P":
                cells.append("" if v is None or math.isnan(v) else str(int(v)))
            elif c.startswith("paper "):
                cells.append("" if math.isnan(v) else f"{v:,.0f}".replace(",", "'"))
            else:
                cells.append(_fmt_ms(v))
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["",
              f"Values: median run time in ms over the repetitions (whole program: from before the first "
              f"spawn to after the last join); `X / {REFERENCE}`: X's median divided by {REFERENCE}' (> 1: slower); "
              "P: the processors the row ran on (`notes` names backends that ran on other P). "
              "`size` reduced: our parameters differ from the paper's, so the paper's columns are a different "
              "size. Paper columns: Negele et al. 2017, Table 1 (64-core AMD Opteron 6380; Linux 2.6.32, Windows "
              "Server 2008 R2), from results/paper/table1.csv.",
              "", f"_{cr.caption(context)}_"]
    return "\n".join(lines)


def write(res, outdir) -> tuple[pd.DataFrame, str, list]:
    """write — build the table and write table1.md and table1.csv into outdir; (table, markdown, paths)."""
    table = build(res)
    if table.empty:
        return table, "", []
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    md = to_markdown(table, res.context)
    paths = [out / f"{NAME}.md", out / f"{NAME}.csv"]
    paths[0].write_text("# Table 1 — application benchmarks\n\n" + md + "\n")
    table.to_csv(paths[1], index=False)
    return table, md, paths


def make(res, outdir):
    """make — the Table 1 item for plot.py, or [] when the results hold no Table 1 workload."""
    table, md, _ = write(res, outdir)
    if table.empty:
        return []
    return [{"title": "Table 1 — application benchmarks (median ms; ratios to pthreads; the paper's numbers)",
             "markdown": md}]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results_dir")
    ap.add_argument("--out", help="output folder (default RESULTS_DIR/figures)")
    a = ap.parse_args(argv)
    try:
        res = cr.load(a.results_dir)
    except cr.ResultsError as e:
        print(f"table1.py: {e}", file=sys.stderr)
        return 2
    table, md, paths = write(res, a.out or Path(a.results_dir) / "figures")
    if table.empty:
        print("table1.py: no Table 1 workload in these results", file=sys.stderr)
        return 1
    print(md)
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
