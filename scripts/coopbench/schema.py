"""coopbench.schema — the columns of results.csv, read from harness/schema.json (the one schema).

harness/results.cpp writes the columns listed in harness/schema.json, in that order;
this module takes the names, types and the legacy defaults from that file and from
nowhere else, and converts a raw (all-text) table to typed columns:

    string -> str ("" where empty)      int   -> int64 (float with NaN where a cell is empty)
    float  -> float (NaN where empty)   bool  -> bool ("true"/"1" true; empty false)
    json   -> dict (parsed; {} where empty or broken)

`param.<NAME>` stands for one column per workload parameter: such a column becomes
numeric when every non-empty cell is a number, else stays text.

context.json's keys are schema.json's "context" list (name, type, when it is written, what
null means). The driver writes them typed; folders written before that (every value a
string, the sweep a JSON string, mixed_machines "yes"/"no", warmup "per point") are read
into the same types by typed_context.

Public: SCHEMA_FILE, VERSION, COLUMNS (list of {"name","type","doc"}), MERGED_COLUMNS,
LEGACY_COLUMNS (the version-2 columns a version-1 folder lacks, with their default),
CONTEXT (list of {"name","type","when","doc"}), column_type(name), context_type(key),
concrete_columns(params), to_typed(df), typed_context(ctx).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

# scripts/coopbench/schema.py -> the repository root is two folders up.
SCHEMA_FILE = Path(__file__).resolve().parents[2] / "harness" / "schema.json"

_schema = json.loads(SCHEMA_FILE.read_text())
VERSION: int = int(_schema["version"])
COLUMNS: list = list(_schema["columns"])
MERGED_COLUMNS: list = list(_schema.get("merged_columns", []))
CONTEXT: list = list(_schema.get("context", []))
PARAM = "param.<NAME>"

# What a version-1 folder (no per-iteration rows) lacks, and what readers take instead
# (schema.json's "legacy": each old row is one cold shot, iteration 0, phase measure,
# not noisy, load unknown).
# schema.json states it in prose today; should it become an object {column: default}, that is used.
LEGACY_COLUMNS = {"iteration": 0, "phase": "measure", "load_before": float("nan"), "load_after": float("nan"),
                  "runnable_before": float("nan"), "runnable_after": float("nan"), "noisy": False,
                  "other_cpus": float("nan"), "steal_cpus": float("nan")}
# other_cpus and steal_cpus: also absent from early version-2 folders
if isinstance(_schema.get("legacy"), dict):
    LEGACY_COLUMNS = {k: (float("nan") if v is None else v) for k, v in _schema["legacy"].items()}

_TYPES = {c["name"]: c["type"] for c in COLUMNS + MERGED_COLUMNS}
assert set(LEGACY_COLUMNS) <= set(_TYPES), "schema.json lost a column that the legacy rule names"


def column_type(name: str) -> str | None:
    """column_type — the schema type of a column ("string", "int", ...), None when it is not in the schema."""
    if name.startswith("param."):
        return _TYPES[PARAM]
    return _TYPES.get(name)


def concrete_columns(params, merged: bool = False) -> list:
    """concrete_columns — the header of a results.csv with these parameter names (sorted), in the schema's order."""
    out = []
    for c in COLUMNS:
        if c["name"] == PARAM:
            out += [f"param.{p}" for p in sorted(params)]
        else:
            out.append(c["name"])
        if merged:
            out += [m["name"] for m in MERGED_COLUMNS if m.get("after") == c["name"]]
    return out


def _text(col: pd.Series) -> pd.Series:
    return col.fillna("").astype(str).str.strip()


def _param(col: pd.Series) -> pd.Series:
    """A parameter column: numbers when every non-empty cell is a number, else text ("" where empty)."""
    s = _text(col)
    nonempty = s[s != ""]
    conv = pd.to_numeric(nonempty, errors="coerce")
    if len(nonempty) and conv.notna().all():
        return pd.to_numeric(s.replace("", float("nan")), errors="coerce")
    return s


def _json(cell) -> dict:
    if isinstance(cell, dict):
        return cell
    if isinstance(cell, str) and cell.strip():
        try:
            v = json.loads(cell)
            return v if isinstance(v, dict) else {}
        except ValueError:
            return {}
    return {}


def convert(col: pd.Series, typ: str) -> pd.Series:
    """convert — one raw column to its schema type (see the module's doc)."""
    if typ == "string":
        return _text(col)
    if typ in ("int", "float"):
        num = pd.to_numeric(_text(col).replace("", float("nan")), errors="coerce")
        if typ == "int" and num.notna().all():
            return num.astype("int64")
        return num.astype(float)
    if typ == "bool":
        return _text(col).str.lower().isin(("true", "1", "yes"))
    if typ == "json":
        return col.map(_json)
    raise ValueError(f"schema.json: unknown type {typ!r}")


def to_typed(df: pd.DataFrame) -> pd.DataFrame:
    """to_typed — every schema column of df converted to its type; missing version-2 columns added with the legacy defaults.

    Columns not in the schema are left as they are. Returns a new frame.
    """
    df = df.copy()
    for name, default in LEGACY_COLUMNS.items():
        if name not in df.columns:
            df[name] = default
    for c in df.columns:
        if c.startswith("param."):
            df[c] = _param(df[c])
        elif c in _TYPES:
            df[c] = convert(df[c], _TYPES[c])
    return df


def _key_matches(pattern: str, key: str) -> bool:
    """"backend.<NAME>.<KEY>" matches "backend.go.go_version" (<NAME> one dotted part, <KEY> the rest)."""
    if "<" not in pattern:
        return pattern == key
    pp, kp = pattern.split("."), key.split(".")
    if pp[-1] == "<KEY>":
        if len(kp) < len(pp):
            return False
        kp = kp[:len(pp) - 1] + [".".join(kp[len(pp) - 1:])]
    return len(pp) == len(kp) and all(p == k or (p.startswith("<") and k) for p, k in zip(pp, kp))


def context_type(key: str) -> str | None:
    """context_type — the schema type of a context.json key, None when the schema does not list it."""
    for c in CONTEXT:
        if _key_matches(c["name"], key):
            return c["type"]
    return None


def _context_value(v, typ: str):
    """One context value in its schema type; a legacy string converted, anything unconvertible kept as it is."""
    if v is None or not isinstance(v, str):
        return v
    t = v.strip()
    if typ == "int":
        try:
            return int(t)
        except ValueError:
            return None if t == "per point" else v  # warmup/iterations before the typed context
    if typ == "float":
        try:
            return float(t)
        except ValueError:
            return v
    if typ == "bool":
        if t.lower() in ("true", "yes", "1"):
            return True
        if t.lower() in ("false", "no", "0"):
            return False
        return v
    if typ == "json" and t[:1] == "{":
        try:
            return json.loads(t)
        except ValueError:
            return v
    return v


def typed_context(ctx: dict) -> dict:
    """typed_context — a context.json dict with every schema key in its type (see the module's doc); a new dict."""
    return {k: _context_value(v, context_type(k) or "string") for k, v in ctx.items()}

