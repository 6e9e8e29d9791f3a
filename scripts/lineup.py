#!/usr/bin/env python3
"""lineup.py — several results folders of the same points lined up on one page, as asv lines results up across
commits: per point, each folder's median with its interval (a trend, oldest first), and between neighbours
compare.py's verdict (U test on the forks' medians; "cannot be tested" below its fork rule).

Usage: lineup.py DIR DIR [DIR ...] [--out FILE.html] [--order given|name]

Folders are shown in the order given (default), or by folder name (`--order name`: run.sh's default names,
results/<host>-<UTC time>, sort by time). Each is labelled with its name and context.json's git_commit. A point is a point id (backend, workload, parameters, P), in
every folder that has it; one only in some folders shows "–" elsewhere. A step is marked where compare.py's
verdict between two neighbours is faster or slower (▲ slower, ▼ faster; = no significant difference, ? cannot be
tested). Each step is a comparison of two sweeps: the U test treats the forks of both as one population apart
from the folder, so a difference of machine state between the sweeps (another load, another boot, another
frequency) is counted as the commit's; the page says so, and a step is worth believing only when the folders
were measured alike (same host, same plan). The page is self-contained like report.html (no script, no network).
Writes FILE (default: lineup.html in the current folder). Exit 2 when a folder is not a results folder.
"""

from __future__ import annotations

import argparse
import html
import math
import sys
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
sys.path.insert(0, str(SCRIPTS))

import coopbench as cr  # noqa: E402
import compare  # noqa: E402
import report_html as rh  # noqa: E402

MARK = {"slower": "▲ slower", "faster": "▼ faster", "more": "▲ more", "less": "▼ less",
        "no significant difference": "="}


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def _which(res) -> str:
    return "warm" if bool((res.df["iteration"] > 0).any()) else "cold"


def _label(res) -> str:
    c = res.context or {}
    commit = str(c.get("git_commit") or "")
    return f"{res.dir.resolve().name}" + (f" ({commit[:12]})" if commit else "")


def trend_svg(cells: list, unit: str) -> str:
    """A small trend: per folder its median (dot) and interval (whisker), folders left to right."""
    vals = [v for c in cells if c for v in c[:3] if v == v and v > 0]
    if not vals:
        return ""
    w, h, left, pad = 60 * len(cells) + 60, 70, 50, 8
    lo, hi = min(vals), max(vals)
    log = hi / lo > 20
    f = (lambda v: math.log10(v)) if log else (lambda v: v)
    a, b = f(lo), f(hi)
    span = (b - a) or (abs(b) * 0.1 or 1.0)
    a, b = a - span * 0.1, b + span * 0.1

    def y(v):
        return pad + (1 - (f(v) - a) / (b - a)) * (h - 2 * pad)

    g = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='9'>",
         f"<text x='2' y='{y(hi) + 3:.1f}'>{esc(cr.fmt_value(hi))}</text>",
         f"<text x='2' y='{y(lo) + 3:.1f}'>{esc(cr.fmt_value(lo))}</text>",
         f"<text x='2' y='{h - 1}' fill='#666'>{esc(unit)}</text>"]
    prev = None
    for i, c in enumerate(cells):
        x = left + 30 + 60 * i
        if not c or not c[0] == c[0]:
            prev = None
            continue
        m, ilo, ihi = c[:3]
        if ilo == ilo and ihi == ihi and ihi > ilo:
            g.append(f"<line x1='{x}' x2='{x}' y1='{y(ihi):.1f}' y2='{y(ilo):.1f}' stroke='#888' stroke-width='3'/>")
        if prev is not None:
            g.append(f"<line x1='{prev[0]}' x2='{x}' y1='{prev[1]:.1f}' y2='{y(m):.1f}' stroke='#0072B2'/>")
        g.append(f"<circle cx='{x}' cy='{y(m):.1f}' r='3' fill='#0072B2'><title>{esc(cr.fmt_value(m))}</title>"
                 "</circle>")
        prev = (x, y(m))
    return "".join(g) + "</svg>"


def lineup(folders: list) -> str:
    """lineup — the page's HTML for the loaded folders (cr.Results), in the order given."""
    names = [_label(r) for r in folders]
    per = [compare.samples(r.df, _which(r), "value") for r in folders]
    steps = [compare.compare(per[i], per[i + 1]) for i in range(len(per) - 1)]
    step_of = [{row["point"]: row for _, row in s.iterrows()} for s in steps]
    points = sorted(set().union(*[set(p) for p in per]))
    shared = [p for p in points if sum(p in d for d in per) > 1]
    changed = 0
    body = []
    by_workload: dict = {}
    for p in shared:
        w = next(d[p][0] for d in per if p in d)
        by_workload.setdefault(w, []).append(p)
    for w in sorted(by_workload):
        t = [f"<h2 id='w-{esc(rh._slug(w))}'>{esc(w)}</h2><table><thead><tr><th>point</th>"]
        for i, n in enumerate(names):
            t.append(f"<th>{esc(n)}</th>" + ("<th>step</th>" if i < len(names) - 1 else ""))
        t.append("<th>trend</th></tr></thead><tbody>")
        for p in by_workload[w]:
            cells, row = [], [f"<td><code>{esc(p)}</code></td>"]
            unit = next(d[p][1] for d in per if p in d)
            for i, d in enumerate(per):
                if p in d and len(d[p][2]):
                    m, lo, hi = cr.median_ci(d[p][2])
                    cells.append((m, lo, hi))
                    row.append(f"<td class='num'>{esc(cr.fmt_ci(m, lo, hi))}<br><span class='muted'>"
                               f"{cr.n_forks(d[p][2])} forks</span></td>")
                else:
                    cells.append(None)
                    row.append("<td class='muted'>–</td>")
                if i < len(per) - 1:
                    s = step_of[i].get(p)
                    v = str(s["verdict"]) if s is not None and s["state"] == "ok" else ""
                    mark = MARK.get(v, "?" if v.startswith("cannot") else "")
                    hit = v in ("slower", "faster", "more", "less")
                    changed += hit
                    ratio = (f"<br>{s['ratio']:.2f}×" if s is not None and s["ratio"] == s["ratio"] else "")
                    row.append(f"<td class='{'win' if v in ('faster', 'less') else 'warnc' if hit else ''}' "
                               f"title='{esc(v)}'>{esc(mark)}{ratio}</td>")
            row.append(f"<td>{trend_svg(cells, unit)}</td>")
            t.append("<tr>" + "".join(row) + "</tr>")
        body.append("".join(t) + "</tbody></table>")
    head = ["<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
            "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">",
            f"<title>coopbench lineup — {len(folders)} folders</title><style>{rh.CSS}"
            ".warnc{background:#fde8e8}</style></head><body>",
            f"<h1>coopbench lineup — {len(folders)} results folders</h1>",
            "<p class='note'>Folders, oldest first as given: " + ", ".join(f"<b>{esc(n)}</b>" for n in names) + ". "
            f"{len(shared)} points are in more than one folder; {changed} step(s) between neighbours are faster or "
            "slower by compare.py's U test on the forks' medians (▲ slower, ▼ faster, = no significant difference, "
            f"? cannot be tested: {esc(cr.FORKS_RULE)}). A cell: median (interval) and forks. <b>A step compares two "
            "sweeps</b>: it cannot tell a change of the code from a change of the machine between them (load, "
            "boot, frequency), which no interval here includes; trust a step only between folders measured alike "
            "(same host, plan and forks), and look for it at neighbouring points too.</p>"]
    if not shared:
        body.append("<p>No point is in more than one of these folders.</p>")
    return "\n".join(head + body + ["</body></html>"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Line several coopbench results folders up on one page.")
    ap.add_argument("dirs", type=Path, nargs="+")
    ap.add_argument("--out", type=Path, default=Path("lineup.html"))
    ap.add_argument("--order", choices=("given", "name"), default="given")
    a = ap.parse_args(argv)
    if len(a.dirs) < 2:
        print("lineup.py: give two folders or more", file=sys.stderr)
        return 2
    folders = []
    for d in a.dirs:
        try:
            folders.append(cr.load(d))
        except cr.ResultsError as e:
            print(f"lineup.py: {e}", file=sys.stderr)
            return 2
    if a.order == "name":
        folders.sort(key=lambda r: r.dir.resolve().name)
    a.out.write_text(lineup(folders), encoding="utf-8")
    print(f"lineup.py: {len(folders)} folders; wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
