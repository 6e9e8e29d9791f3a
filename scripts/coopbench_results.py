"""coopbench_results — the figure modules' one import: a thin facade over the `coopbench` package.

The code lives in scripts/coopbench/ (schema, load, stats, style, figure); this module
re-exports its public API under the names figure modules have always used:

    load(results_dir) -> Results          Results.df, Results.context, Results.dir, Results.workload(name)
    save_figure(fig, outdir, name) -> list[Path]
    caption(context) -> str, backend_style(name) -> dict, add_caption(fig, context, df)
    plot_lines(ax, df, x, ...), summarize(df, x, which), ok_rows(df), failed_rows(df),
    median_ci(x), ratio_ci(a, b), point_stats(df), fmt_ci, fmt_ratio, ...

NUMERIC_COLUMNS: the results.csv columns of schema type int or float (harness/schema.json).
"""

from coopbench import *  # noqa: F401,F403  (the facade)
from coopbench import __all__ as _all
from coopbench import schema as _schema

NUMERIC_COLUMNS = tuple(c["name"] for c in _schema.COLUMNS if c["type"] in ("int", "float"))

__all__ = list(_all) + ["NUMERIC_COLUMNS"]
