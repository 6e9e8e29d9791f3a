"""report_html — report.html, the page a person opens in a browser, beside report.md (plot.py writes both).

write_html(res, items, errors, out_dir, context=[(key, text)]) writes OUT_DIR/report.html:
  1. the summary first: per workload and P, the backend fastest at most points and each family's best variant
     with its ratio to the fastest and that ratio's interval (coopbench.summary.summary_rows), the forks once
     per row;
  2. one section per figure (the module's SVG beside the page, figures/NAME.svg, shown with <img>; PNG linked)
     and per table;
  3. every point: its forks' iterations as a strip plot, cold (iteration 0 of each fork) apart from warm (the
     timed iterations), each fork's median marked, the point's median and interval drawn with their label,
     and the command line that measures the point alone;
  4. the failed, refused and noisy points, each in a section of its own;
  5. the machine context last.

Self-contained: the page references only files of its own folder (figures/) and carries its own CSS; no
script, no font or stylesheet from a network, no server. The strip plots are inline SVG written here (a few
dozen lines: a point's plot needs no matplotlib figure, so a sweep of 1,500 points costs seconds, not
minutes); the figures are the modules' matplotlib SVGs. docs/results-format.md (*report.html*) says why.
"""

from __future__ import annotations

import html
import math
import os
import re
from pathlib import Path

import pandas as pd

import coopbench as cr
from coopbench import summary
from coopbench.families import family_label

FORK_COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#332288",
                "#117733", "#999933"]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:0 auto;max-width:1180px;
padding:0 1.2em 3em;color:#1a1a1a;line-height:1.4}
h1{font-size:1.5em;margin:.8em 0 .2em}h2{border-bottom:2px solid #ccc;padding-bottom:.15em;margin-top:1.8em}
h3{margin:1.2em 0 .3em;font-size:1.08em}
nav{font-size:.92em;background:#f4f4f4;padding:.4em .8em;border-radius:4px}nav a{margin-right:1em}
table{border-collapse:collapse;font-size:.88em;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}th{background:#eee;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.ratio{font-weight:600;font-variant-numeric:tabular-nums}.ci{color:#555;font-size:.9em}
.variant{color:#333;font-size:.85em}.win{background:#e6f4ea}.fast{color:#11691b;font-weight:700}
.bad{color:#a00}.muted{color:#777}.note{color:#444;font-size:.92em;max-width:62em}
figure{margin:.6em 0 1.6em}figure img{width:100%;max-width:1000px;height:auto;border:1px solid #ddd}
figcaption{font-size:.9em;color:#333;max-width:62em}
details{margin:.3em 0}summary{cursor:pointer;font-weight:600}
.point{border-top:1px solid #e3e3e3;padding:.4em 0}.point code{font-size:.82em}
.cmd{background:#f6f6f6;padding:.2em .4em;display:inline-block;word-break:break-all}
.warn{background:#fff4e5;border:1px solid #e0a040;padding:.4em .8em}
"""


def esc(s) -> str:
    return html.escape(str(s), quote=True)


def _inline_md(s: str) -> str:
    """A cell of a module's Markdown table: `code`, **bold**, links kept as text; everything else escaped."""
    out = esc(s)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    out = re.sub(r"(?<![*\w])\*([^*\s][^*]*)\*(?![*\w])", r"<i>\1</i>", out)
    return out


def markdown_block(md: str) -> str:
    """markdown_block — a module's Markdown (pipe tables and paragraphs) as HTML; what it does not know stays
    text. Enough for the tables the figure modules write (scripts/figures/table*.py)."""
    out, para, rows = [], [], []

    def flush_para():
        if para:
            out.append(f"<p class='note'>{_inline_md(' '.join(para))}</p>")
            para.clear()

    def flush_table():
        if not rows:
            return
        cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", r.strip().strip("|"))] for r in rows]
        head, body = cells[0], [c for c in cells[1:] if not all(re.fullmatch(r":?-+:?", x or "-") for x in c)]
        t = ["<table><thead><tr>" + "".join(f"<th>{_inline_md(h)}</th>" for h in head) + "</tr></thead><tbody>"]
        t += ["<tr>" + "".join(f"<td>{_inline_md(x)}</td>" for x in r) + "</tr>" for r in body]
        out.append("".join(t) + "</tbody></table>")
        rows.clear()

    for line in str(md).splitlines():
        if line.lstrip().startswith("|"):
            flush_para()
            rows.append(line)
        else:
            flush_table()
            if line.strip():
                para.append(line.strip())
            else:
                flush_para()
    flush_table()
    flush_para()
    return "\n".join(out)


def _fmt_ratio_cell(c: dict, fastest_here: bool, marked: bool = False) -> str:
    """A summary cell; marked: its bracket says what it is on its forks (a row whose cells rest on different fork
    counts; else the row's forks column says it once)."""
    parts = []
    if c["ran"]:
        names = ", ".join(c["variants"][:2]) + (", …" if len(c["variants"]) > 2 else "")
        if fastest_here:
            parts.append(f"<span class='fast'>fastest</span> <span class='variant'>{esc(names)}</span>")
        else:
            r, lo, hi = c["ratio"], c["lo"], c["hi"]
            f = (lambda v: f"{v:.2f}" if abs(v) >= 0.1 else f"{v:.2g}")
            mark = summary.fork_mark(c["forks"]) if marked else ""
            ci = ("" if lo != lo or hi != hi or lo == hi else
                  f" <span class='ci'>({f(lo)}–{f(hi)}{'; ' + esc(mark) if mark else ''})</span>")
            parts.append(f"<span class='ratio'>{f(r)}×</span>{ci}<br><span class='variant'>{esc(names)}</span>")
    for k in ("failed", "refused"):
        if c[k]:
            parts.append(f"<span class='bad'>{k}" + ("" if c[k] == c["points"] else f" at {c[k]}") + "</span>")
    return "<br>".join(parts) if parts else "<span class='muted'>–</span>"


def summary_html(df: pd.DataFrame) -> str:
    """summary_html — the summary table: a row per (workload, P), the winner, each family's best variant."""
    out = ["<h2 id='summary'>Summary: who wins where</h2>"]
    if df.empty:
        return out[0] + "<p>No rows: results.csv holds no result yet.</p>"
    rows, families = summary.summary_rows(df)
    failed, refused = summary.failed_points(df), summary.refused_points(df)
    noisy = df[df["noisy"]]["point"].nunique()
    out.append(
        "<p class='note'>Per workload and processor count P: the backend fastest at most of its points (the "
        "<b>winner</b>), and each family's best variant with its ratio to the winner — <b>1.00× is the winner, "
        "2× twice as slow</b> (a time: its value over the winner's; a rate: the winner's over its). Over several "
        "points a cell is the geometric mean of the per-point ratios, in brackets the geometric means of the "
        f"per-point interval ends ({esc(cr.METHOD)}). <i>forks</i>: the forks behind the row's cells, once for "
        "the row with what its brackets are then (a range when the cells differ, each cell then saying its own); "
        f"with 1 fork a bracket is the {esc(cr.ONE_FORK.split(': ')[1])}, not an interval across processes.</p>")
    ok = df[df["status"] == "ok"]
    ran_backends = ok.groupby(["workload", "processors"])["backend"].nunique().to_dict()
    ran_names = ok.groupby(["workload", "processors"])["backend"].first().to_dict()
    head = ["workload", "P", "points", "forks", "winner (points won)"] + [family_label(f) for f in families]
    t = ["<table id='summary-table'><thead><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr></thead><tbody>"]
    for r in rows:
        fk = summary.forks_text(r)  # as report.md's: "6", "3 forks: not 95 %", or "1–3" when the cells differ
        mixed = len(set(summary.row_forks(r))) > 1
        alone = ran_backends.get((r["workload"], r["P"]), 0) == 1  # nothing to be faster than: not a winner
        # A backend alone in its row is named, never crowned (the summary rows leave `fastest`
        # empty there: nothing to be faster than).
        only = r["fastest"] or ran_names.get((r["workload"], r["P"]), "")
        win = (f"<span class='muted'>only</span> <b>{esc(only)}</b> <span class='muted'>ran</span>" if alone and only
               else "<span class='muted'>none ran</span>" if not r["fastest"]
               else f"<b>{esc(r['fastest'])}</b> ({r['wins']}/{r['points']})")
        w = esc(r["workload"]) + (" <span class='muted'>(rate: higher is better)</span>" if r["higher"] else "")
        cells = [f"<td>{w}</td>", f"<td class='num'>{esc(cr.compact_number(r['P']))}</td>",
                 f"<td class='num'>{r['points']}</td>", f"<td class='num'>{fk}</td>", f"<td>{win}</td>"]
        for f in families:
            c = r["cells"][f]
            here = bool(only) and only in c["variants"][:1] and c["ran"] and (alone or abs(c["ratio"] - 1) < 1e-9)
            text = (f"<span class='muted'>alone</span> <span class='variant'>{esc(c['variants'][0])}</span>"
                    if here and alone else _fmt_ratio_cell(c, here, marked=mixed))
            cells.append(f"<td class='{'win' if here and not alone else ''}'>{text}</td>")
        t.append("<tr>" + "".join(cells) + "</tr>")
    out.append("".join(t) + "</tbody></table>")
    out.append(f"<p><b>Failed points: {len(failed)}</b> (<a href='#failed'>reasons</a>). "
               f"<b>Refused points: {len(refused)}</b> (never started: a limit of the machine, "
               f"<a href='#refused'>which</a>). <b>Noisy points: {noisy}</b> of {df['point'].nunique()} "
               "(measured while the machine was busy, <a href='#noisy'>which</a>).</p>")
    return "\n".join(out)


def _rel(path, out_dir: Path) -> str:
    return os.path.relpath(Path(path).resolve(), out_dir.resolve()).replace(os.sep, "/")


def figure_html(item: dict, out_dir: Path, anchor: str) -> str:
    out = [f"<h3 id='{anchor}'>{esc(item['title'])}</h3>"]
    if "files" in item:
        rel = [_rel(f, out_dir) for f in item["files"]]
        show = next((r for r in rel if r.endswith(".svg")), next((r for r in rel if r.endswith(".png")), None))
        out.append("<figure>")
        if show:
            out.append(f"<img src='{esc(show)}' alt='{esc(item['title'])}' loading='lazy'>")
        cap = _inline_md(item.get("text", ""))
        links = " · ".join(f"<a href='{esc(r)}'>{esc(Path(r).name)}</a>" for r in rel)
        out.append(f"<figcaption>{cap}{' ' if cap else ''}<span class='muted'>Files: {links}</span></figcaption>")
        out.append("</figure>")
    else:
        if item.get("text"):
            out.append(f"<p class='note'>{_inline_md(item['text'])}</p>")
        out.append(markdown_block(item.get("markdown", "")))
    return "\n".join(out)


# ---- a point's strip plot (inline SVG) -------------------------------------------------------------------

W, LEFT, RIGHT, ROW_H = 720, 150, 20, 46


def _axis(lo: float, hi: float):
    """(to_x, ticks, log): the x mapping of the values lo..hi onto the plot and 3-6 tick values."""
    log = lo > 0 and hi / lo > 20
    if log:
        a, b = math.log10(lo), math.log10(hi)
        pad = (b - a) * 0.05 or 0.1
        a, b = a - pad, b + pad
        ticks = [10 ** k * m for k in range(math.floor(a), math.ceil(b) + 1) for m in (1, 2, 5)]
        ticks = [t for t in ticks if a <= math.log10(t) <= b]
        if len(ticks) > 7:
            ticks = [t for t in ticks if abs(math.log10(t) - round(math.log10(t))) < 1e-9]

        def to_x(v):
            return LEFT + (math.log10(v) - a) / (b - a) * (W - LEFT - RIGHT)
    else:
        span = (hi - lo) or abs(hi) * 0.1 or 1.0
        a, b = lo - span * 0.08, hi + span * 0.08
        step = 10 ** math.floor(math.log10((b - a) / 4))
        for m in (1, 2, 5, 10):
            if (b - a) / (step * m) <= 6:
                step *= m
                break
        ticks = [k * step for k in range(math.ceil(a / step), math.floor(b / step) + 1)]

        def to_x(v):
            return LEFT + (v - a) / (b - a) * (W - LEFT - RIGHT)
    return to_x, ticks, log


def _tick_label(v: float) -> str:
    if v != 0 and abs(v) < 1:
        return f"{v:g}"
    return cr.compact_number(v)


def strip_svg(rows: list, unit: str) -> str:
    """strip_svg — one point's distribution as inline SVG.

    rows: [(label, sample, (median, lo, hi), interval label)] with sample a Series of values indexed by fork:
    a row per kind (cold, warm). Each value is a dot in its fork's colour and sub-row; each fork's median a
    short bar; the point's median a black line; its interval a grey band labelled under the row."""
    vals = [float(v) for _, s, _, _ in rows for v in s if v == v]
    vals += [float(x) for _, _, ci, _ in rows for x in ci if x == x]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    if lo <= 0:
        lo = min(lo, 0.0)
    to_x, ticks, log = _axis(lo, hi)
    h = ROW_H * len(rows) + 40
    g = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{W}' height='{h}' viewBox='0 0 {W} {h}' "
         "role='img' font-family='sans-serif' font-size='11'>"]
    top = 6
    for label, s, (m, ilo, ihi), ilabel in rows:
        y0 = top
        y1 = top + ROW_H - 16
        g.append(f"<text x='4' y='{(y0 + y1) / 2 + 4:.1f}' font-weight='bold'>{esc(label)}</text>")
        if len(s) == 1 or not (ilo == ilo and ihi == ihi and ihi > ilo):
            what = "one run" if len(s) == 1 else "median"
            g.append(f"<text x='{LEFT}' y='{y1 + 11:.1f}' fill='#333'>{what} {esc(cr.fmt_value(m))}"
                     f"{'' if len(s) == 1 else ' · no spread'}</text>")
        else:
            x0, x1 = to_x(ilo), to_x(ihi)
            g.append(f"<rect x='{x0:.1f}' y='{y0:.1f}' width='{max(x1 - x0, 1):.1f}' height='{y1 - y0:.1f}' "
                     "fill='#999' fill-opacity='0.25'/>")
            g.append(f"<text x='{LEFT}' y='{y1 + 11:.1f}' fill='#333'>median {esc(cr.fmt_value(m))} · "
                     f"{esc(ilabel)}: {esc(cr.fmt_value(ilo))}–{esc(cr.fmt_value(ihi))}</text>")
        forks = list(dict.fromkeys(s.index))
        n = max(len(forks), 1)
        for i, f in enumerate(forks):
            col = FORK_COLOURS[i % len(FORK_COLOURS)]
            fy = y0 + (i + 0.5) * (y1 - y0) / n
            fv = [float(v) for v in s[s.index == f] if v == v]
            for v in fv:
                g.append(f"<circle cx='{to_x(v):.1f}' cy='{fy:.1f}' r='2.6' fill='{col}' fill-opacity='0.75'>"
                         f"<title>fork {i}: {esc(cr.fmt_value(v))}</title></circle>")
            if len(fv) > 1:
                fm = float(pd.Series(fv).median())
                half = max(2.5, (y1 - y0) / n / 2 - 0.5)
                g.append(f"<line x1='{to_x(fm):.1f}' x2='{to_x(fm):.1f}' y1='{fy - half:.1f}' y2='{fy + half:.1f}' "
                         f"stroke='{col}' stroke-width='2.5'/>")
        if m == m:
            g.append(f"<line x1='{to_x(m):.1f}' x2='{to_x(m):.1f}' y1='{y0 - 2:.1f}' y2='{y1 + 2:.1f}' "
                     "stroke='#000' stroke-width='1.6'/>")
        top += ROW_H
    ya = top + 2
    g.append(f"<line x1='{LEFT}' x2='{W - RIGHT}' y1='{ya}' y2='{ya}' stroke='#444'/>")
    for t in ticks:
        x = to_x(t)
        g.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{ya}' y2='{ya + 4}' stroke='#444'/>"
                 f"<text x='{x:.1f}' y='{ya + 15}' text-anchor='middle'>{esc(_tick_label(t))}</text>")
    g.append(f"<text x='{W - RIGHT}' y='{ya + 29}' text-anchor='end' fill='#555'>{esc(unit)}"
             f"{' (log)' if log else ''}</text>")
    g.append("</svg>")
    return "".join(g)


def point_command(g: pd.DataFrame) -> str:
    """point_command — the coopbench command that measures this point alone, with its forks, warm-up and
    timed iterations."""
    r = g.iloc[0]
    params = [f"-p {c[len('param.'):]}={_param_text(v)}" for c in sorted(g.columns) if c.startswith("param.")
              for v in [r[c]] if v == v and str(v) != ""]
    forks = int(g["repetition"].nunique())
    per_fork = g[g["repetition"] == g["repetition"].min()]
    warm = int((per_fork["phase"] == "warmup").sum())
    timed = int((per_fork["phase"] == "measure").sum())
    cmd = ["coopbench run", f"-b {r['backend']}", f"-w {r['workload']}", *params,
           f"-P {int(r['processors'])}", f"-r {forks}"]
    if timed:
        cmd += [f"-W {warm}", f"-I {timed}"]
    return " ".join(cmd)


def _param_text(v) -> str:
    """A parameter's value as the command line takes it: 5000, not 5000.0."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _ci(sample_: pd.Series):
    if not len(sample_):
        return (math.nan, math.nan, math.nan)
    return cr.median_ci(sample_)


def points_html(df: pd.DataFrame) -> str:
    """points_html — every point, grouped by workload (a <details> each): status, strip plot, command."""
    out = ["<h2 id='points'>Every point: each fork's iterations</h2>",
           "<p class='note'>Each point in its own process per fork. <b>cold</b>: iteration 0 of each fork (the "
           "first run in a fresh process); <b>warm</b>: the timed iterations. A dot is one iteration, in its "
           "fork's colour and row; a short coloured bar a fork's median; the black line the point's median and the "
           "grey band its interval, labelled under the row. The command measures the point alone.</p>"]
    if df.empty:
        return "\n".join(out + ["<p>No points.</p>"])
    for w, dw in df.groupby("workload", sort=True):
        pts = sorted(dw["point"].unique())
        out.append(f"<details class='workload' id='points-{esc(_slug(w))}'><summary>{esc(w)} — {len(pts)} "
                   f"point{'s' if len(pts) != 1 else ''}</summary>")
        for p, g in dw.groupby("point", sort=True):
            status = summary.point_status(g)
            unit = next((u for u in g["unit"] if u), "")
            badges = []
            if status != "ok":
                badges.append(f"<span class='bad'>{status}</span>")
            if bool(g["noisy"].any()):
                badges.append("<span class='bad'>⚠ noisy</span>")
            rows = []
            cold, warm = cr.cold_sample(g), cr.warm_sample(g)
            if len(cold):
                rows.append(("cold", cold, _ci(cold), cr.interval_label(cr.n_forks(cold))))
            if len(warm) and bool((g["iteration"] > 0).any()):
                rows.append(("warm", warm, _ci(warm), cr.interval_label(cr.n_forks(warm))))
            out.append(f"<div class='point'><code><b>{esc(p)}</b></code> {' '.join(badges)}<br>")
            svg = strip_svg(rows, unit) if rows else ""
            out.append(svg or "<span class='muted'>no ok value</span>")
            out.append(f"<br><code class='cmd'>{esc(point_command(g))}</code></div>")
        out.append("</details>")
    return "\n".join(out)


def _slug(s) -> str:
    return re.sub(r"[^a-zA-Z0-9_-]+", "-", str(s)).strip("-") or "x"


def failed_html(df: pd.DataFrame) -> str:
    f = df[~df["status"].isin(("ok", summary.REFUSED))].copy()
    out = ["<h2 id='failed'>Failed points</h2>"]
    if f.empty:
        return out[0] + "<p>None.</p>"
    f["reason"] = f["reason"].where(f["reason"] != "", "(no reason given)")
    t = ["<table><thead><tr><th>point</th><th>failed forks</th><th>reason</th></tr></thead><tbody>"]
    for (point, reason), g in f.groupby(["point", "reason"], sort=True):
        reps = ", ".join(str(int(r)) for r in sorted(g["repetition"].dropna().unique()))
        t.append(f"<tr><td><code>{esc(point)}</code></td><td>{reps}</td><td>{esc(reason)}</td></tr>")
    return out[0] + "".join(t) + "</tbody></table>"


def refused_html(df: pd.DataFrame) -> str:
    pts = summary.refused_points(df)
    out = ["<h2 id='refused'>Refused points</h2>"]
    if not pts:
        return out[0] + "<p>None.</p>"
    out.append("<p class='note'>Not run: the harness refused them before they started, for a limit of this "
               "machine; they do not count as failed.</p>")
    t = ["<table><thead><tr><th>point</th><th>reason</th></tr></thead><tbody>"]
    for point, g in df[df["point"].isin(pts)].groupby("point", sort=True):
        reasons = [x for x in g["reason"].astype(str).unique() if x] or ["(no reason given)"]
        t.append(f"<tr><td><code>{esc(point)}</code></td><td>{esc('; '.join(reasons))}</td></tr>")
    return "\n".join(out) + "".join(t) + "</tbody></table>"


def noisy_html(df: pd.DataFrame) -> str:
    out = ["<h2 id='noisy'>Noisy points</h2>"]
    n = df[df["noisy"]]
    if n.empty:
        return out[0] + "<p>None.</p>"
    out.append("<p class='note'>A fork is noisy when other processes had more runnable threads than the point "
               "left cores free, or used more CPU time than that (<code>other_cpus</code>, docs/results-format.md, "
               "<i>Noise guard</i>); its values may be slower than on a quiet machine.</p>")
    forks_of = df.groupby("point")["repetition"].nunique()
    t = ["<table><thead><tr><th>point</th><th>noisy forks</th><th>other_cpus per noisy fork</th></tr></thead><tbody>"]
    for point, g in n.groupby("point", sort=True):
        forks = g.drop_duplicates("repetition").sort_values("repetition")
        other = forks["other_cpus"] if "other_cpus" in forks else []
        which = ", ".join(str(int(r)) for r in forks["repetition"])
        t.append(f"<tr><td><code>{esc(point)}</code></td><td>{len(forks)} of {int(forks_of[point])} ({which})</td>"
                 f"<td>{esc(', '.join(cr.fmt_value(o) for o in other))}</td></tr>")
    return "\n".join(out) + "".join(t) + "</tbody></table>"


def context_html(context: list) -> str:
    out = ["<h2 id='context'>Machine and run context</h2>"]
    if not context:
        return out[0] + "<p>No context.json in this folder.</p>"
    t = ["<table id='context-table'><thead><tr><th>key</th><th>value</th></tr></thead><tbody>"]
    for k, v in context:
        v = str(v)
        cell = (f"<details><summary>{len(v)} characters</summary><pre>{esc(v)}</pre></details>"
                if len(v) > 240 else esc(v))
        t.append(f"<tr><td><code>{esc(k)}</code></td><td>{cell}</td></tr>")
    return out[0] + "".join(t) + "</tbody></table>"


def write_html(res, items, errors, out_dir=None, context=()) -> Path:
    """write_html — OUT_DIR/report.html (default: the results folder). items as plot.py's run_modules gives them
    ((module, item)); errors [(module, traceback)]; context [(key, text)], the machine last."""
    d = Path(out_dir) if out_dir is not None else res.dir
    df = res.df
    figs = [i for _, i in items if "files" in i]
    tables = [i for _, i in items if "files" not in i]
    name = res.dir.resolve().name
    parts = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
             "<meta name='viewport' content='width=device-width, initial-scale=1'>",
             # Nothing from elsewhere: no script at all, images and links only within this folder.
             "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; img-src 'self' data:; "
             "style-src 'unsafe-inline'\">",
             f"<title>coopbench results — {esc(name)}</title><style>{CSS}</style></head><body>",
             f"<h1>coopbench results — {esc(name)}</h1>", f"<p class='muted'>{esc(cr.caption(res.context))}</p>",
             "<nav><a href='#summary'>Summary</a><a href='#figures'>Figures</a>"
             + ("<a href='#tables'>Tables</a>" if tables else "")
             + "<a href='#points'>Points</a><a href='#failed'>Failed</a><a href='#refused'>Refused</a>"
               "<a href='#noisy'>Noisy</a><a href='#context'>Context</a><a href='report.md'>report.md</a></nav>"]
    if errors:
        parts.append(f"<p class='warn'><b>{len(errors)} figure module(s) failed</b>: "
                     + ", ".join(esc(n) for n, _ in errors) + " (tracebacks in report.md).</p>")
    if res.dropped:
        parts.append(f"<p class='warn'><b>{len(res.dropped)} row(s) of results.csv dropped</b> (line(s) "
                     + esc(", ".join(str(n) for n, _ in res.dropped)) + "): not results.</p>")
    parts.append(summary_html(df))
    parts.append("<h2 id='figures'>Figures</h2>")
    parts += [figure_html(i, d, f"fig-{k}") for k, i in enumerate(figs)] or ["<p>No figure for these results.</p>"]
    if tables:
        parts.append("<h2 id='tables'>Tables</h2>")
        parts += [figure_html(i, d, f"table-{k}") for k, i in enumerate(tables)]
    parts.append(points_html(df))
    parts.append(failed_html(df))
    parts.append(refused_html(df))
    parts.append(noisy_html(df))
    parts.append(context_html(list(context)))
    parts.append("</body></html>")
    out = d / "report.html"
    out.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return out
