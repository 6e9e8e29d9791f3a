#!/usr/bin/env python3
"""io_bar.py RESULTS_DIR — the I/O workloads' comparison tables (docs/io-workloads.md, "The bar"),
in Markdown, from a results folder of the I/O workloads (scripts/reference.sh io):

  1. closed-loop echo, per P, message size and connection count: each family's best variant
     (coop, Go, tokio, Boost.Asio; the epoll ceiling), coop's best over the best peer's on
     throughput, and on server CPU per request where the load generator bounded every server
     (its `client_bound` counter set in most forks), and coop over the ceiling;
  2. open-loop echo at 50 % offered load: p99 (us), coop's best over the best peer's (< 1: ahead);
  3. echo-idle: RSS per idle connection (KiB), coop's best over Go's;
  4. echo-hogs: p99 (us) by slice, coop over the best peer.

A point's value is the median over its forks' measured rows (status ok, phase measure); the
number of forks is given beside it. A family's best variant is the one with the best median
(coopbench.families). Nothing is judged where a side has no value: the cell says "—".
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coopbench.families import family_of  # noqa: E402
from coopbench.load import ResultsError, load  # noqa: E402

PEERS = ("go", "tokio", "asio")
LABEL = {"coop": "coop", "go": "Go", "tokio": "tokio", "asio": "Asio", "epoll": "epoll"}


def medians(df: pd.DataFrame, workload: str, keys: list, value: str = "value") -> pd.DataFrame:
    """medians — per (keys, backend): the median of `value` over the measured ok rows, the forks counted."""
    d = df[(df["workload"] == workload) & (df["status"] == "ok")]
    if "phase" in d.columns:
        d = d[d["phase"] == "measure"]
    if d.empty or value not in d.columns:
        return pd.DataFrame()
    d = d.assign(_v=pd.to_numeric(d[value], errors="coerce")).dropna(subset=["_v"])
    extra = {"forks": ("repetition", "nunique"), "v": ("_v", "median")}
    if "counter.client_bound" in d.columns:
        extra["bound"] = ("counter.client_bound", "mean")
    if "counter.server_cpu_us_per_request" in d.columns:
        extra["cpu"] = ("counter.server_cpu_us_per_request", "median")
    g = d.groupby(keys + ["backend"], dropna=False).agg(**extra).reset_index()
    g["family"] = g["backend"].map(family_of)
    return g


def best(g: pd.DataFrame, family: str, higher: bool, col: str = "v"):
    """best — the row of `family`'s best variant in group g (None when it has none)."""
    f = g[g["family"] == family].dropna(subset=[col])
    if f.empty:
        return None
    return f.loc[f[col].idxmax() if higher else f[col].idxmin()]


def cell(r, col: str = "v", fmt: str = "{:,.0f}") -> str:
    if r is None:
        return "—"
    return f"{fmt.format(r[col])} {r['backend']} ({int(r['forks'])})"


def ratio(a, b) -> str:
    return "—" if a is None or b is None or not b else f"{a / b:.2f}"


def table(head: list, rows: list) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def closed_echo(df: pd.DataFrame) -> str:
    g = medians(df, "echo", ["processors", "param.size", "param.connections"])
    if g.empty:
        return "No closed-loop echo points.\n"
    rows, met, judged = [], 0, 0
    for (p, size, conns), grp in g.groupby(["processors", "param.size", "param.connections"]):
        c = best(grp, "coop", True)
        peers = [best(grp, f, True) for f in PEERS]
        peer = max((r for r in peers if r is not None), key=lambda r: r["v"], default=None)
        e = best(grp, "epoll", True)
        sides = [r for r in [c] + peers if r is not None]
        bound = bool(sides) and all(r.get("bound", 0) > 0.5 for r in sides)
        verdict = "—"
        if c is not None and peer is not None:
            judged += 1
            if bound and "cpu" in grp.columns:
                # Every server bounded by the generator: the rate does not tell them apart; CPU per request does.
                pcs = [r for r in (best(grp, f, False, "cpu") for f in PEERS) if r is not None]
                pc = min(pcs, key=lambda r: r["cpu"], default=None)
                cc = best(grp, "coop", False, "cpu")
                ok = cc is not None and pc is not None and cc["cpu"] <= pc["cpu"]
                verdict = ("client-bound; CPU/request "
                           + (f"{cc['cpu']:.2f} {cc['backend']} vs {pc['cpu']:.2f} {pc['backend']} us: " if ok or
                              (cc is not None and pc is not None) else "") + ("ahead" if ok else "behind"))
            else:
                ok = c["v"] >= peer["v"]
                verdict = "ahead" if ok else "behind"
            met += ok
        # Server CPU per request, each side's lowest (shown everywhere: near the generator's bound the rates
        # say little, and a reader sees where the verdict would turn).
        cpu = "—"
        if "cpu" in grp.columns:
            cmin = best(grp, "coop", False, "cpu")
            pmin = min((r for r in (best(grp, f, False, "cpu") for f in PEERS) if r is not None),
                       key=lambda r: r["cpu"], default=None)
            if cmin is not None and pmin is not None:
                cpu = f"{cmin['cpu']:.2f} / {pmin['cpu']:.2f} {pmin['backend']}"
        rows.append([int(p), int(size), int(conns), cell(c)] + [cell(r) for r in peers] +
                    [ratio(c["v"] if c is not None else None, peer["v"] if peer is not None else None), cpu,
                     cell(e), ratio(c["v"] if c is not None else None, e["v"] if e is not None else None), verdict])
    head = ["P", "size (B)", "conns", "coop best", "Go", "tokio", "Asio", "coop / best peer",
            "CPU us/request: coop / best peer", "epoll", "coop / epoll", "verdict"]
    return (f"Closed-loop echo, requests/s (median over forks; the forks in brackets): coop's best ahead at "
            f"{met} of {judged} points.\n\n" + table(head, rows) + "\n")


def lower_table(df: pd.DataFrame, workload: str, keys: list, title: str, value: str = "value",
                versus=PEERS, fmt="{:,.0f}", filt=None) -> str:
    d = df if filt is None else filt(df)
    g = medians(d, workload, keys, value)
    if g.empty:
        return f"No {workload} points.\n"
    rows, met, judged = [], 0, 0
    for k, grp in g.groupby(keys):
        k = k if isinstance(k, tuple) else (k,)
        c = best(grp, "coop", False)
        peers = [best(grp, f, False) for f in versus]
        peer = min((r for r in peers if r is not None), key=lambda r: r["v"], default=None)
        e = best(grp, "epoll", False)
        verdict = "—"
        if c is not None and peer is not None:
            judged += 1
            met += c["v"] <= peer["v"]
            verdict = "at most" if c["v"] <= peer["v"] else "above"
        rows.append([*(int(x) for x in k), cell(c, fmt=fmt)] + [cell(r, fmt=fmt) for r in peers] +
                    [ratio(c["v"] if c is not None else None, peer["v"] if peer is not None else None),
                     cell(e, fmt=fmt), verdict])
    head = [{"processors": "P"}.get(x, x.replace("param.", "")) for x in keys] + ["coop best"] + [LABEL[f] for f in versus] + \
        ["coop / best" if len(versus) > 1 else f"coop / {LABEL[versus[0]]}", "epoll", "verdict"]
    return f"{title}: coop's best at most the best peer's at {met} of {judged} points.\n\n" + table(head, rows) + "\n"


def main(argv) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        r = load(Path(argv[1]))
    except ResultsError as e:
        print(f"io_bar.py: {e}", file=sys.stderr)
        return 2
    df = r.df
    half = (lambda d: d[pd.to_numeric(d.get("param.load"), errors="coerce") == 50]) if "param.load" in df else None
    parts = [
        "## Closed-loop echo\n\n" + closed_echo(df),
        "## Open-loop echo at 50 % load\n\n" + lower_table(df, "echo-open", ["processors", "param.connections"],
                                                           "p99 (us) at 50 % of each server's own maximum", filt=half),
        "## Idle connections\n\n" + lower_table(df, "echo-idle", ["processors", "param.idle"], "RSS per idle connection (KiB)",
                                                value="counter.rss_per_idle_kib", versus=("go",), fmt="{:.2f}"),
        "## Hogs\n\n" + lower_table(df, "echo-hogs", ["processors", "param.slice_us"], "p99 (us) while hogs compute"),
    ]
    print("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
