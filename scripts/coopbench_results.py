"""coopbench_results — load a coopbench results folder; shared helpers for figure modules.

A results folder (docs/results-format.md) holds results.csv (one row per point and
repetition) and context.json (machine, compiler, commit, sweep). Figure and table
modules under scripts/figures/ receive a `Results` from `load()` and use `save_figure`,
`caption` and `backend_style` so that every figure looks alike.

Public API (fixed; other modules depend on it):
    load(results_dir) -> Results          Results.df, Results.context, Results.dir
    save_figure(fig, outdir, name) -> list[Path]
    caption(context) -> str
    backend_style(name) -> dict

Further helpers (optional for modules): median_table(df), series(df), ok_rows(df),
failed_rows(df), context_get(context, *keys).

Reads only results files, never console output. Uses matplotlib's Agg backend.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after selecting the Agg backend)
import pandas as pd  # noqa: E402

__all__ = [
    "Results",
    "ResultsError",
    "load",
    "save_figure",
    "caption",
    "backend_style",
    "context_get",
    "ok_rows",
    "failed_rows",
    "summarize",
    "NUMERIC_COLUMNS",
]

# NUMERIC_COLUMNS — results.csv columns converted to numbers by load().
NUMERIC_COLUMNS = ("processors", "repetition", "value", "seconds", "peak_rss_kib", "cpu_seconds")

# Columns that are text even when empty (kept as str, empty -> "").
_TEXT_COLUMNS = ("point", "backend", "family", "workload", "status", "unit", "reason", "counters")


class ResultsError(Exception):
    """ResultsError — the folder is not a results folder (no readable results.csv)."""


@dataclass
class Results:
    """Results — one results folder: `df` (results.csv, typed), `context` (context.json), `dir`."""

    dir: Path
    df: pd.DataFrame
    context: dict = field(default_factory=dict)

    def workload(self, name: str) -> pd.DataFrame:
        """workload — the rows of one workload (a copy; empty frame when absent)."""
        return self.df[self.df["workload"] == name].copy()


def _numeric_or_text(col: pd.Series) -> pd.Series:
    """Convert a column to numbers when every non-empty cell is a number, else keep strings."""
    s = col.astype(str).str.strip()
    s = s.where(~col.isna(), "")
    nonempty = s[s != ""]
    conv = pd.to_numeric(nonempty, errors="coerce")
    if len(nonempty) and conv.notna().all():
        return pd.to_numeric(s.replace("", float("nan")), errors="coerce")
    return s


def _expand_counters(df: pd.DataFrame) -> pd.DataFrame:
    """Expand the `counters` JSON column into `counter.<name>` numeric columns."""
    if "counters" not in df.columns:
        return df
    parsed = []
    for cell in df["counters"]:
        obj = {}
        if isinstance(cell, str) and cell.strip():
            try:
                val = json.loads(cell)
                if isinstance(val, dict):
                    obj = val
            except ValueError:
                obj = {}
        parsed.append(obj)
    names = sorted({k for d in parsed for k in d})
    for k in names:
        df["counter." + k] = pd.to_numeric(pd.Series([d.get(k) for d in parsed], index=df.index), errors="coerce")
    return df


def load(results_dir) -> Results:
    """load — read RESULTS_DIR/results.csv and context.json into a Results.

    Numeric columns (NUMERIC_COLUMNS) become floats (NaN where empty); each `param.X`
    column becomes numeric when all its non-empty values are numbers, else stays text
    ("" where empty); `counters` is expanded into `counter.<name>` columns. Raises
    ResultsError when results.csv is missing or unreadable. A missing or broken
    context.json gives an empty context.
    """
    d = Path(results_dir)
    csv = d / "results.csv"
    if not csv.is_file():
        raise ResultsError(f"{d}: no results.csv (not a coopbench results folder)")
    try:
        df = pd.read_csv(csv, dtype=str, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise ResultsError(f"{csv}: cannot read: {e}") from e
    for c in ("point", "backend", "workload", "status"):
        if c not in df.columns:
            raise ResultsError(f"{csv}: missing column '{c}'")
    for c in _TEXT_COLUMNS:
        if c not in df.columns:
            df[c] = ""
    if "family" in df.columns:
        df["family"] = df["family"].where(df["family"] != "", df["backend"].str.split("/").str[0])
    for c in NUMERIC_COLUMNS:
        if c in df.columns:
            df[c] = pd.to_numeric(df[c].replace("", float("nan")), errors="coerce")
        else:
            df[c] = float("nan")
    df["processors"] = df["processors"].fillna(1)
    df["repetition"] = df["repetition"].fillna(0)
    for c in [c for c in df.columns if c.startswith("param.")]:
        df[c] = _numeric_or_text(df[c])
    df["status"] = df["status"].str.strip().str.lower()
    df = _expand_counters(df)
    context = {}
    ctx_file = d / "context.json"
    if ctx_file.is_file():
        try:
            context = json.loads(ctx_file.read_text())
            if not isinstance(context, dict):
                context = {}
        except (ValueError, UnicodeDecodeError):
            context = {}
    return Results(dir=d, df=df, context=context)


def save_figure(fig, outdir, name: str) -> list:
    """save_figure — write `name`.png and `name`.svg into outdir (created), close fig, return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        p = out / f"{name}.{ext}"
        fig.savefig(p, dpi=150 if ext == "png" else None, bbox_inches="tight")
        paths.append(p)
    plt.close(fig)
    return paths


def context_get(context: dict, *keys, default=None):
    """context_get — the first present, non-empty value among `keys`; a key may be dotted ("machine.cpu")."""
    for key in keys:
        cur = context
        ok = True
        for part in key.split("."):
            if isinstance(cur, dict) and part in cur:
                cur = cur[part]
            else:
                ok = False
                break
        if ok and cur not in (None, "", [], {}):
            return cur
    return default


def _short(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={v[k]}" for k in v)
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def caption(context: dict) -> str:
    """caption — one line for a figure: machine (CPU, cores), compiler, commit. Tolerates missing keys."""
    cpu = context_get(context, "cpu", "cpu_model", "machine.cpu", "machine.cpu_model", "cpu_name")
    host = context_get(context, "host", "host_name", "hostname", "machine.host")
    cores = context_get(context, "cores", "num_cpus", "machine.cores", "machine.num_cpus")
    compiler = context_get(context, "compiler", "build.compiler", "cxx_compiler")
    build = context_get(context, "build_type", "library_build_type", "build.type")
    commit = context_get(context, "commit", "git_commit", "git.commit", "build.commit")
    parts = []
    machine = " ".join(str(x) for x in (host, f"({cpu})" if cpu else None) if x)
    if machine:
        parts.append(machine)
    if cores is not None:
        parts.append(f"{cores} cores")
    if compiler:
        parts.append(_short(compiler))
    if build:
        parts.append(str(build))
    if commit:
        c = str(commit)
        parts.append("commit " + (c[:12] if len(c) >= 40 else c))
    return " · ".join(parts) if parts else "(no context.json)"


# Fixed styles for the backends we know; others get a stable style from a hash of their name.
_KNOWN_STYLES = {
    "native": {"color": "#d62728", "marker": "o"},
    "pthreads": {"color": "#1f77b4", "marker": "s"},
    "stdthread": {"color": "#2ca02c", "marker": "^"},
    "boostfiber": {"color": "#9467bd", "marker": "D"},
}
_PALETTE = ["#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31"]
_MARKERS = ["v", "<", ">", "p", "h", "*", "P", "X", "d"]
_LINESTYLES = ["-", "--", "-.", ":"]


def backend_style(name: str) -> dict:
    """backend_style — matplotlib kwargs (color, marker, linestyle) for a backend, the same in every figure.

    Known families have fixed colours; a variant ("boostfiber/work_stealing") keeps its
    family's colour and marker with a line style of its own; unknown names get a stable
    colour from a hash of the name.
    """
    family, _, variant = str(name).partition("/")
    if family in _KNOWN_STYLES:
        style = dict(_KNOWN_STYLES[family])
    else:
        h = zlib.crc32(family.encode())
        style = {"color": _PALETTE[h % len(_PALETTE)], "marker": _MARKERS[(h // 7) % len(_MARKERS)]}
    style["linestyle"] = _LINESTYLES[zlib.crc32(variant.encode()) % (len(_LINESTYLES) - 1) + 1] if variant else "-"
    return style


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """ok_rows — the rows with status ok and a value."""
    return df[(df["status"] == "ok") & df["value"].notna()]


def failed_rows(df: pd.DataFrame) -> pd.DataFrame:
    """failed_rows — the rows with status failed."""
    return df[df["status"] != "ok"]


def summarize(df: pd.DataFrame, x: str) -> pd.DataFrame:
    """summarize — per (backend, processors, x): median, min, max of ok values, count, and failed flag.

    Columns: backend, processors, <x>, median, min, max, n_ok, n_failed, reason (first
    failure reason). A point is 'failed' for plotting when it has no ok repetition.
    """
    keys = ["backend", "processors", x]
    d = df.dropna(subset=[x]) if x in df.columns else df.iloc[0:0]
    if d.empty:
        return pd.DataFrame(columns=keys + ["median", "min", "max", "n_ok", "n_failed", "reason"])
    rows = []
    for k, g in d.groupby(keys, sort=True):
        ok = g[(g["status"] == "ok") & g["value"].notna()]["value"]
        bad = g[g["status"] != "ok"]
        reasons = [r for r in bad["reason"].astype(str) if r]
        rows.append(
            dict(zip(keys, k))
            | {
                "median": ok.median() if len(ok) else float("nan"),
                "min": ok.min() if len(ok) else float("nan"),
                "max": ok.max() if len(ok) else float("nan"),
                "n_ok": int(len(ok)),
                "n_failed": int(len(bad)),
                "reason": reasons[0] if reasons else "",
            }
        )
    return pd.DataFrame(rows)
