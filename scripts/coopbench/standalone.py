"""coopbench.standalone — what a figure or table module needs to also run as a script of its own.

    main(argv, doc, script, produce, nothing)   the command line `SCRIPT RESULTS_DIR [--out DIR]`
    write_table(table, md, outdir, name, heading)   <name>.md (heading + Markdown) and <name>.csv
    sibling_module(file, name)   another module of a figure module's folder (cal_fig4 uses cal_fig3's panels)

A module keeps its own make(res, outdir) for plot.py and ends with
`sys.exit(cr.standalone_main(None, __doc__, "table1.py", produce, "no Table 1 workload in these results"))`.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from .load import ResultsError, load


def main(argv, doc: str, script: str, produce, nothing: str) -> int:
    """main — load RESULTS_DIR, call produce(res, outdir) -> (markdown, paths) with outdir --out (default
    RESULTS_DIR/figures), print the Markdown (when there is some) on stdout and `wrote <path>` for each path
    on stderr. Exit status: 0; 1 with `<script>: <nothing>` when produce wrote no file; 2 when RESULTS_DIR is
    not a results folder. doc's first line is the --help description."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("results_dir")
    ap.add_argument("--out", help="output folder (default RESULTS_DIR/figures)")
    a = ap.parse_args(argv)
    try:
        res = load(a.results_dir)
    except ResultsError as e:
        print(f"{script}: {e}", file=sys.stderr)
        return 2
    md, paths = produce(res, a.out or Path(a.results_dir) / "figures")
    if not paths:
        print(f"{script}: {nothing}", file=sys.stderr)
        return 1
    if md:
        print(md)
    for p in paths:
        print(f"wrote {p}", file=sys.stderr)
    return 0


def write_table(table, md: str, outdir, name: str, heading: str) -> list:
    """write_table — write `# heading`, a blank line and md into <outdir>/<name>.md, the table (a DataFrame) into
    <name>.csv (outdir created); [the .md path, the .csv path]."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"{name}.md", out / f"{name}.csv"]
    paths[0].write_text(f"# {heading}\n\n{md}\n")
    table.to_csv(paths[1], index=False)
    return paths


def sibling_module(file, name: str):
    """sibling_module — the module `name` (name.py beside `file`, a figure module's __file__), imported from its
    file under that name; plot.py imports the figure modules by path, without their folder on sys.path."""
    spec = importlib.util.spec_from_file_location(name, Path(file).with_name(f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
