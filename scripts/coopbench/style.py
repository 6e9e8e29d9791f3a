"""coopbench.style — what makes every figure look alike: captions, backend styles, tick labels.

caption(context) names the machine, compiler, build type and commit; backend_style(name)
gives a backend the same colour, marker and line style in every figure (known families
fixed, unknown names a stable style from a hash of the name); compact_number formats
tick labels (1k, 10M).
"""

from __future__ import annotations

import zlib


def _short(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}={v[k]}" for k in v)
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return str(v)


def caption(context: dict) -> str:
    """caption — one line for a figure: machine (CPU, cores), compiler, commit. Tolerates missing keys.

    The keys are schema.json's (the context typed by coopbench.load); there are no other spellings.
    """
    cpu = context.get("cpu_model")
    host = context.get("host")
    cores = context.get("cores_available")
    compiler = context.get("compiler")
    build = context.get("build_type")
    commit = context.get("git_commit")
    parts = []
    machines = context.get("machines") if isinstance(context.get("machines"), dict) else {}
    if len(machines) > 1:
        # A merged sweep (coopbench merge) from several hosts: say so, and what each one is.
        mixed = context.get("mixed_machines") is True
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


