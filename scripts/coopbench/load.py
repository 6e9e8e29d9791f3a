"""coopbench.load — read a results folder (docs/results-format.md) into a typed `Results`.

results.csv becomes a DataFrame with every column typed by harness/schema.json
(coopbench.schema): numbers are numbers, `noisy` is a bool, `counters` is a dict and is
also expanded into `counter.<name>` numeric columns. A folder written before schema
version 2 (no iteration/phase/noise columns) reads as schema.json's "legacy" says: each
row one cold shot (iteration 0, phase measure, not noisy). context.json becomes a dict
typed by schema.json's "context" list (coopbench.schema.typed_context): the driver writes
it typed; an older folder's strings ("2", "yes", the sweep as a JSON string) are read
into the same types, so no caller converts or looks for another spelling of a key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from . import schema, style

REQUIRED = ("point", "backend", "workload", "status")


class ResultsError(Exception):
    """ResultsError — the folder is not a results folder (no readable results.csv)."""


@dataclass
class Results:
    """Results — one results folder: `df` (results.csv, typed), `context` (context.json), `dir`."""

    dir: Path
    df: pd.DataFrame
    context: dict = field(default_factory=dict)
    # The lines of results.csv that are not results (no status, point, backend or workload): [(line number, text)].
    dropped: list = field(default_factory=list)
    # The workloads asked for through workload() (plot.py: which workloads a figure module knows).
    asked: set = field(default_factory=set)

    def workload(self, name: str) -> pd.DataFrame:
        """workload — the rows of one workload (a copy; empty frame when absent)."""
        self.asked.add(name)
        return self.df[self.df["workload"] == name].copy()

    def dropped_note(self) -> str:
        """dropped_note — one sentence on the dropped lines of results.csv ("" when none)."""
        if not self.dropped:
            return ""
        lines = [n for n, _ in self.dropped]
        shown = ", ".join(str(n) for n in lines[:20]) + (", ..." if len(lines) > 20 else "")
        return (f"dropped {len(lines)} row(s) of results.csv that are not results (no status, point, backend or "
                f"workload): line(s) {shown}; e.g. {self.dropped[0][1]!r}")

    @property
    def has_warm(self) -> bool:
        """has_warm — True when some fork ran more than one iteration (so warm differs from cold)."""
        return bool((self.df["iteration"] > 0).any())


def _expand_counters(df: pd.DataFrame) -> pd.DataFrame:
    """Expand the (parsed) `counters` column into `counter.<name>` numeric columns."""
    names = sorted({k for d in df["counters"] for k in d})
    if not names:
        return df
    # All at once: a column added at a time fragments the frame (a workload with a counter per processor and
    # per unit has hundreds), and pandas then warns (PerformanceWarning) at every later insert.
    cols = {"counter." + k: pd.to_numeric(pd.Series([d.get(k) for d in df["counters"]], index=df.index),
                                          errors="coerce") for k in names}
    return pd.concat([df.drop(columns=[c for c in cols if c in df.columns]), pd.DataFrame(cols, index=df.index)],
                     axis=1)


def _record_lines(path: Path) -> list:
    """The 1-based line on which each data record of a CSV file starts (blank lines skipped, as pandas does)."""
    import csv

    starts, prev_end = [], 0
    with open(path, newline="", errors="replace") as f:
        r = csv.reader(f)
        for rec in r:
            if rec:
                starts.append(prev_end + 1)
            prev_end = r.line_num
    return starts[1:]  # the header is not a data record


def read_context(d: Path) -> dict:
    """read_context — context.json of folder d as a dict, typed by the schema (schema.typed_context); {} when missing or broken."""
    f = d / "context.json"
    if not f.is_file():
        return {}
    try:
        ctx = json.loads(f.read_text())
    except (ValueError, UnicodeDecodeError):
        return {}
    return schema.typed_context(ctx) if isinstance(ctx, dict) else {}


def load(results_dir) -> Results:
    """load — read RESULTS_DIR/results.csv and context.json into a Results.

    Columns are typed by the schema (coopbench.schema.to_typed); a row without a status
    or point, backend or workload (a line cut short while a sweep is still writing, or
    garbage) is left out and listed in Results.dropped (line numbers; dropped_note()); `family` is filled
    from the backend where empty; `processors` defaults to 1, `repetition` to 0; `host`
    is the row's (a merged folder) or the context's. Raises ResultsError when
    results.csv is missing, unreadable or lacks a required column. A missing or broken
    context.json gives an empty context.
    """
    d = Path(results_dir)
    csv = d / "results.csv"
    if not csv.is_file():
        raise ResultsError(f"{d}: no results.csv (not a coopbench results folder)")
    try:
        raw = pd.read_csv(csv, dtype=str, keep_default_na=False)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise ResultsError(f"{csv}: cannot read: {e}") from e
    for c in REQUIRED:
        if c not in raw.columns:
            raise ResultsError(f"{csv}: missing column '{c}'")
    # Every schema column exists after loading (empty when the file has none), then all are typed.
    for c in schema.COLUMNS:
        if c["name"] != schema.PARAM and c["name"] not in raw.columns and c["name"] not in schema.LEGACY_COLUMNS:
            raw[c["name"]] = ""
    # A row without a status, point, backend or workload is not a point: a line cut short (results.csv is
    # appended while a sweep runs) or garbage. Left out, and said so (Results.dropped, with line numbers).
    bad = (raw[["status", "point", "backend", "workload"]].apply(lambda c: c.str.strip() == "")).any(axis=1)
    dropped = []
    if bad.any():
        starts = _record_lines(csv)
        text = csv.read_text(errors="replace").splitlines()
        for i in raw.index[bad]:
            n = starts[i] if i < len(starts) else i + 2
            dropped.append((n, text[n - 1][:80] if 0 < n <= len(text) else ""))
    raw = raw[~bad].reset_index(drop=True)
    df = schema.to_typed(raw)
    df["status"] = df["status"].str.lower()
    df["family"] = df["family"].where(df["family"] != "", df["backend"].str.split("/").str[0])
    for c, default in (("processors", 1), ("repetition", 0)):
        if df[c].isna().any():
            df[c] = df[c].fillna(default).astype("int64")
    df = _expand_counters(df)
    context = read_context(d)
    if "host" not in df.columns:
        df["host"] = str(context.get("host") or "")
    df["host"] = df["host"].fillna("").astype(str)
    style.use_backends(df["backend"].unique())  # one colour per backend in every figure of this run
    return Results(dir=d, df=df, context=context, dropped=dropped)
