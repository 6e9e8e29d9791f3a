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

Further helpers (optional for modules): Results.workload(name), ok_rows(df),
failed_rows(df), summarize(df, x), context_get(context, *keys), compact_number(v),
series_labels(df, x), plot_lines(ax, df, x, ...) (a Fig. 7-9 style line plot),
legend_entries(axes), figure_note(df), add_caption(fig, context, df).

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
    "compact_number",
    "series_labels",
    "plot_lines",
    "legend_entries",
    "figure_note",
    "add_caption",
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
    ("" where empty); `counters` is expanded into `counter.<name>` columns; a row without
    a status (a line cut short while a sweep is still writing) is left out. Raises
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
    # A row without a status is a line cut short (results.csv is appended while a sweep runs): not a point.
    df = df[df["status"] != ""].reset_index(drop=True)
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
    # `host`: a merged folder (coopbench merge) has one per row; a single run's is its context's host.
    if "host" not in df.columns:
        df["host"] = str(context_get(context, "host", "host_name", "hostname", default=""))
    df["host"] = df["host"].fillna("").astype(str)
    return Results(dir=d, df=df, context=context)


def save_figure(fig, outdir, name: str) -> list:
    """save_figure — write `name`.png and `name`.svg into outdir (created), close fig, return the paths."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    # Reproducible files: fixed SVG ids, no date in the metadata, so a re-plot of the same data diffs clean.
    with plt.rc_context({"svg.hashsalt": "coopbench"}):
        for ext in ("png", "svg"):
            p = out / f"{name}.{ext}"
            meta = {"Date": None} if ext == "svg" else {}
            fig.savefig(p, dpi=150 if ext == "png" else None, bbox_inches="tight", metadata=meta)
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
    cores = context_get(context, "cores_available", "cores", "logical_cpus", "num_cpus", "machine.cores")
    compiler = context_get(context, "compiler", "build.compiler", "cxx_compiler")
    build = context_get(context, "build_type", "library_build_type", "build.type")
    commit = context_get(context, "git_commit", "commit", "git.commit", "build.commit")
    parts = []
    machines = context.get("machines") if isinstance(context.get("machines"), dict) else {}
    if len(machines) > 1:
        # A merged sweep (coopbench merge) from several hosts: say so, and what each one is.
        mixed = str(context.get("mixed_machines", "")).lower() == "yes"
        each = "; ".join(f"{h} ({m})" for h, m in machines.items())
        parts.append(("MIXED MACHINES, lines per host: " if mixed else f"{len(machines)} hosts of one kind: ") + each)
    else:
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
    "native-ws": {"color": "#ff7f0e", "marker": "v"},  # issue 10: coop, work stealing
    "native-parasail": {"color": "#8c564b", "marker": "X"},  # issue 10: coop, ParaSail deques
    "pthreads": {"color": "#1f77b4", "marker": "s"},
    "stdthread": {"color": "#2ca02c", "marker": "^"},
    "boostfiber": {"color": "#9467bd", "marker": "D"},
    "go": {"color": "#00a3c4", "marker": "P"},  # Go's own cyan; a filled plus
}
_PALETTE = ["#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#ff9896", "#393b79", "#637939", "#8c6d31"]
_MARKERS = ["v", "<", ">", "p", "h", "*", "P", "X", "d"]
_LINESTYLES = ["-", "--", "-.", ":"]
# The registered variants get distinct line styles (a hash of the name gave round_robin and
# work_stealing the same one); other variants fall back to the hash.
_KNOWN_VARIANT_STYLES = {"round_robin": "--", "shared_work": ":", "work_stealing": "-."}


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
    if not variant:
        style["linestyle"] = "-"
    elif variant in _KNOWN_VARIANT_STYLES:
        style["linestyle"] = _KNOWN_VARIANT_STYLES[variant]
    else:
        style["linestyle"] = _LINESTYLES[zlib.crc32(variant.encode()) % (len(_LINESTYLES) - 1) + 1]
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


# ---------------------------------------------------------------------------------------
# Line figures in the paper's style (shared by fig07/fig08/fig09 and any module that wants it)
# ---------------------------------------------------------------------------------------

_P_LINESTYLES = ["-", "--", ":", "-."]
_HOST_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def compact_number(v, _pos=None) -> str:
    """compact_number — 1, 10, 100, 1k, 10k, 1M, ... for tick labels (a matplotlib FuncFormatter)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return str(v)
    if v == 0:
        return "0"
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= div:
            return f"{v / div:g}{suffix}"
    return f"{v:g}"


def series_labels(df: pd.DataFrame, x: str) -> list:
    """series_labels — the columns that split a workload's rows into lines, besides x.

    Always `backend`; `processors` when more than one P is present; `host` when the rows
    come from more than one host (a merged sweep, coopbench merge); and every other
    `param.*` column that takes more than one value in df (e.g. K), so that no line
    mixes points with different parameters.
    """
    cols = ["backend"]
    if df["processors"].nunique(dropna=True) > 1:
        cols.append("processors")
    if "host" in df.columns and df["host"][df["host"] != ""].nunique() > 1:
        cols.append("host")  # a merged sweep from several hosts: never one line across machines
    for c in sorted(c for c in df.columns if c.startswith("param.") and c != x):
        vals = df[c]
        vals = vals[vals.notna() & (vals.astype(str) != "")]
        if vals.nunique() > 1:
            cols.append(c)
    return cols


def _series_name(cols, key) -> str:
    parts = []
    for c, v in zip(cols, key):
        if c == "backend":
            parts.append(str(v))
        elif c == "processors":
            parts.append(f"P={compact_number(v)}")
        elif c == "host":
            parts.append(f"@{v}")
        else:
            parts.append(f"{c[len('param.'):]}={compact_number(v) if isinstance(v, (int, float)) else v}")
    return " ".join(parts)


def plot_lines(ax, df: pd.DataFrame, x: str, *, xlabel: str, ylabel: str, yscale: str = "auto", title: str = "",
               legend: bool = True):
    """plot_lines — draw one workload's points on ax: one line per series (see series_labels).

    Each line is the median over repetitions, with a min–max band; a point with no ok
    repetition is drawn as an 'x' in the series' colour at the height of the series'
    nearest ok median (or near the bottom of the axis when the series has none), so the
    place where a backend stopped is visible. x is always logarithmic; yscale "log",
    "linear" or "auto" (log when the medians span a factor of 10 or more). legend: draw
    the legend outside, right of the axes (False: leave it to the caller, e.g. one
    legend for several panels via legend_entries). Returns the number of failed points.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    d = df.copy()
    d[x] = pd.to_numeric(d[x], errors="coerce")
    d = d[d[x] > 0]  # log x: a non-positive x cannot be drawn (it still appears in report.md's tables)
    cols = series_labels(d, x)
    procs = sorted(d["processors"].dropna().unique())
    hosts = sorted(d["host"].unique()) if "host" in cols else []
    pending_failed = []  # (x, series key, style) — placed once the y range is known
    all_medians = []
    bands = []  # (x, y) corners of the min–max bands, so that the axis limits include them
    for key, g in d.groupby(cols if len(cols) > 1 else cols[0], sort=True):
        key = key if isinstance(key, tuple) else (key,)
        style = backend_style(key[0])
        if "processors" in cols:
            p = key[cols.index("processors")]
            style["linestyle"] = _P_LINESTYLES[procs.index(p) % len(_P_LINESTYLES)]
        if "host" in cols:  # the backend's colour, a marker per host
            style["marker"] = _HOST_MARKERS[hosts.index(key[cols.index("host")]) % len(_HOST_MARKERS)]
        s = summarize(g, x).sort_values(x)
        ok = s[s["n_ok"] > 0]
        name = _series_name(cols, key)
        if len(ok):
            ax.plot(ok[x], ok["median"], label=name, markersize=5, linewidth=1.5, **style)
            if (ok["max"] > ok["min"]).any():
                ax.fill_between(ok[x], ok["min"], ok["max"], color=style["color"], alpha=0.12, linewidth=0)
                bands.extend(zip(ok[x], ok["min"]))
                bands.extend(zip(ok[x], ok["max"]))
            all_medians.extend(ok["median"].tolist())
        else:
            ax.plot([], [], label=name, **style)
        for xv in s[s["n_ok"] == 0][x]:
            pending_failed.append((xv, ok, style))
    if yscale == "auto":
        pos = [m for m in all_medians if m > 0]
        yscale = "log" if pos and max(pos) / min(pos) >= 10 else "linear"
    ax.set_xscale("log")
    ax.set_yscale(yscale)
    if all_medians:
        ax.relim()
        if bands:
            ax.update_datalim(bands)
        ax.autoscale_view()
    lo, hi = ax.get_ylim()
    for xv, ok, style in pending_failed:
        if len(ok):
            before = ok[ok[x] <= xv]
            yv = before["median"].iloc[-1] if len(before) else ok["median"].iloc[0]
        else:
            yv = (lo * (hi / lo) ** 0.08) if yscale == "log" and lo > 0 else lo + 0.08 * (hi - lo)
        ax.plot([xv], [yv], linestyle="none", marker="x", markersize=10, markeredgewidth=2.2, color=style["color"])
    xs = sorted(d[x].unique())
    if 0 < len(xs) <= 12:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.xaxis.set_major_formatter(FuncFormatter(compact_number))
    if yscale == "log":
        lo, hi = ax.get_ylim()
        if lo > 0 and hi / lo < 300:
            # Under ~2.5 decades the powers of 10 alone leave the axis nearly unlabelled: label 1, 2, 5 x 10^k.
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(FuncFormatter(compact_number))
    ax.set_xlabel(xlabel + " (log)")
    ax.set_ylabel(ylabel + (" (log)" if yscale == "log" else ""))
    if title:
        ax.set_title(title)
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)
    if legend:
        handles, labels = legend_entries([ax], failed=bool(pending_failed))
        if handles:
            ax.legend(handles, labels, fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return len(pending_failed)


def legend_entries(axes, failed: bool = False):
    """legend_entries — (handles, labels) of the series on axes, without duplicates; plus the failed marker."""
    from matplotlib.lines import Line2D

    handles, labels = [], []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    if failed:
        handles.append(Line2D([], [], linestyle="none", marker="x", color="black", markersize=8, markeredgewidth=2))
        labels.append("failed (reason in report.md)")
    return handles, labels


def figure_note(df: pd.DataFrame) -> str:
    """figure_note — how to read a line figure: repetitions per point, band and marker meaning."""
    reps = df.groupby("point")["repetition"].nunique()
    r = int(reps.max()) if len(reps) else 0
    procs = sorted(df["processors"].dropna().unique())
    on = f"P={compact_number(procs[0])} processors; " if len(procs) == 1 else ""
    if r > 1:
        return on + f"median of up to {r} repetitions, band: min–max; × marks a failed point"
    return on + "one repetition per point; × marks a failed point"


def add_caption(fig, context: dict, df: pd.DataFrame | None = None) -> None:
    """add_caption — the machine/commit caption (and the reading note) under a figure."""
    text = caption(context)
    if df is not None:
        text += "\n" + figure_note(df)
    fig.text(0.5, -0.01, text, ha="center", va="top", fontsize=7.5, color="#444444", wrap=True)
