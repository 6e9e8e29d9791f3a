"""coopbench.style — what makes every figure look alike: captions, backend styles, tick labels.

caption(context) names the machine, compiler, build type and commit; backend_colors(names)
gives every backend of a figure its own colour from a colour-blind-safe palette (Okabe-Ito,
then Tol's muted), known backends fixed; backend_style(name) adds the family's marker and a
variant's line style; compact_number formats tick labels (1k, 10M).
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


# Colour-blind-safe palettes: Okabe and Ito, "Color Universal Design" (2008), then Paul Tol's
# "muted" scheme (Tol, "Colour Schemes", SRON/EPS/TN/09-002) for a run with more backends.
# PALETTE is both, the yellow and the pale grey (hard to see on white) last.
OKABE_ITO = ["#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
TOL_MUTED = ["#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499",
             "#DDDDDD"]
PALETTE = [c for c in OKABE_ITO + TOL_MUTED if c not in ("#F0E442", "#DDDDDD")] + ["#F0E442", "#DDDDDD"]

# Fixed colours for the backends we know, each its own (a backend keeps its colour in every
# figure, whatever else is drawn beside it); kernel threads in blues and greens, fibers in
# purples. coop's five builds are set apart in hue and lightness as well as by marker (vermillion,
# orange, pink, dark wine, olive: a rose beside the vermillion and the pink read as one line).
# A variant ("boostfiber/work_stealing") is a backend of its own: its own colour, its family's marker.
_KNOWN_COLORS = {
    "native": "#D55E00",            # vermillion
    "native-ws": "#E69F00",         # orange: coop with work stealing
    "native-parasail": "#CC79A7",   # reddish purple: coop with ParaSail's deques
    "native-clang": "#882255",      # wine: the same runtime built by clang
    "native-implicit": "#999933",   # olive: clang with compiler-inserted quantum checks
    "pthreads": "#0072B2",          # blue
    "stdthread": "#009E73",         # bluish green
    "go": "#56B4E9",                # sky blue
    "tokio": "#000000",             # black
    "boostfiber": "#332288",        # indigo
    "boostfiber/round_robin": "#332288",
    "boostfiber/shared_work": "#AA4499",  # purple
    "boostfiber/work_stealing": "#44AA99",  # teal
}


def contrast_on_white(color: str) -> float:
    """contrast_on_white — the WCAG 2 contrast ratio of a "#RRGGBB" colour against the white background (1 to 21)."""
    def lin(c):
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    lum = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
    return 1.05 / (lum + 0.05)


# The least contrast against white an unknown backend's colour may have: the pale palette colours (Okabe-Ito's
# yellow, Tol's pale grey, sand and pale cyan) are near-invisible as a thin line or a small marker, so an unknown
# backend never gets one (a known one keeps its fixed colour).
MIN_CONTRAST = 2.5
# Colours no known backend has, readable on white: where an unknown backend goes first (a hash of its name picks one).
_FREE = [c for c in PALETTE if c not in set(_KNOWN_COLORS.values()) and contrast_on_white(c) >= MIN_CONTRAST]
_KNOWN_MARKERS = {"native": "o", "native-ws": "v", "native-parasail": "X", "native-clang": "h",
                  "native-implicit": "p", "pthreads": "s", "stdthread": "^", "boostfiber": "D", "go": "P",
                  "tokio": "*"}
_MARKERS = ["<", ">", "d", "H", "8", "*", "P", "X"]
_LINESTYLES = ["-", "--", "-.", ":"]
# The registered variants get distinct line styles (a hash of the name gave round_robin and
# work_stealing the same one); other variants fall back to the hash.
_KNOWN_VARIANT_STYLES = {"round_robin": "--", "shared_work": ":", "work_stealing": "-."}
# The backends of the folder loaded last (coopbench.load calls use_backends): every figure of a
# run takes its colours from one assignment over all of them, so an unknown backend keeps its
# colour from figure to figure even when it had to move off its hashed colour.
_RUN_BACKENDS: tuple = ()


def use_backends(names) -> None:
    """use_backends — the backends of the run being drawn (coopbench.load calls it): colours are assigned over all of them."""
    global _RUN_BACKENDS
    _RUN_BACKENDS = tuple(sorted({str(n) for n in names}))


def _extra_color(i: int) -> str:
    """More backends than the readable free colours: hues spaced by the golden angle (no longer colour-blind-safe,
    but distinct), dark enough to read on white (a light hue such as yellow darkened until it has MIN_CONTRAST)."""
    import colorsys
    value = 0.7
    while True:
        r, g, b = colorsys.hsv_to_rgb((i * 0.618034) % 1.0, 0.8, value)
        c = "#{:02X}{:02X}{:02X}".format(int(r * 255), int(g * 255), int(b * 255))
        if contrast_on_white(c) >= MIN_CONTRAST or value < 0.3:
            return c
        value -= 0.05


def backend_colors(names) -> dict:
    """backend_colors — {backend: colour} with a different colour for every name, from PALETTE.

    Known backends have fixed colours; unknown ones take a free colour readable on white (contrast at least
    MIN_CONTRAST: never the pale yellow or grey) picked by a hash of the name (evenly spaced dark-enough hues
    when none is left), in name order, so the answer depends only on the
    set of names. Names of the run registered by use_backends take part too, so that a figure
    showing some of them gives each the colour it has in the others.
    """
    names = sorted({str(n) for n in names} | set(_RUN_BACKENDS))
    out, used = {}, set()
    for n in names:
        c = _KNOWN_COLORS.get(n)
        if c is not None and c not in used:
            out[n] = c
            used.add(c)
    for n in names:
        if n in out:
            continue
        free = [c for c in _FREE if c not in used]
        if free:
            c = free[zlib.crc32(n.encode()) % len(free)]
        else:
            c = next(_extra_color(i) for i in range(len(used) + 1) if _extra_color(i) not in used)
        out[n] = c
        used.add(c)
    return out


def backend_style(name: str, others=()) -> dict:
    """backend_style — matplotlib kwargs (color, marker, linestyle) for a backend, the same in every figure.

    The colour is backend_colors's (of name, `others` — the other backends of the figure — and the
    run's backends): known backends fixed, each its own; unknown ones a stable colour no other
    backend of the figure has. The marker is the family's ("boostfiber/work_stealing" has
    boostfiber's); a variant has a line style of its own.
    """
    name = str(name)
    family, _, variant = name.partition("/")
    style = {"color": backend_colors([name, *others])[name]}
    if family in _KNOWN_MARKERS:
        style["marker"] = _KNOWN_MARKERS[family]
    else:
        style["marker"] = _MARKERS[(zlib.crc32(family.encode()) // 7) % len(_MARKERS)]
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


