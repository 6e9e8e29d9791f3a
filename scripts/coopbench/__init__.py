"""coopbench — read, summarize and draw coopbench results folders (split as Google's gbench splits util/report).

    schema   the columns of results.csv and keys of context.json, typed, from harness/schema.json (the one schema)
    load     load(dir) -> Results (typed df, typed context), ResultsError
    stats    median_ci, ratio_ci, diff_ci (hierarchical bootstrap over forks), u_test, round_medians and
             signed_rank_test (two backends of one sweep paired by round), point_stats, summarize,
             ok_rows, fork rules (MIN_FORKS_ONE, MIN_FORKS_TWO, fork_shortfall)
    style    caption, backend_colors (one colour-blind-safe colour per backend), backend_style, compact_number
    figure   save_figure, line_figure (small multiples), plot_lines, split_series, legend_entries, figure_note,
             add_caption
    standalone  standalone_main (a figure module's `SCRIPT RESULTS_DIR [--out DIR]`), write_table (<name>.md and
             <name>.csv of a table), sibling_module (another module of a figure module's folder)
    claims   the papers' claims (results/paper/claims-*.json), their verdicts and REPRODUCTION.md
             (import coopbench.claims; scripts/reproduce.sh, docs/reproducing.md)

Figure modules, plot.py and compare.py `import coopbench as cr` (scripts/ on sys.path): every name
below is the package's. NUMERIC_COLUMNS: the results.csv columns of schema type int or float
(harness/schema.json).
"""

from . import schema
from .figure import (FIG_WIDTH, add_caption, backend_group, figure_note, fixed_parameters, legend_entries, line_figure, plot_lines,
                     save_figure, series_labels, split_series, tight_layout)
from .load import Results, ResultsError, load
from .standalone import main as standalone_main, sibling_module, write_table
from .stats import (FORKS_RULE, METHOD, MIN_FORKS_ONE, MIN_FORKS_TWO, MIN_PAIRS, ONE_FORK, cold_sample, diff_ci,
                    failed_rows, fmt_ci, is_cold_only, fmt_ratio, fmt_value, fork_shortfall, interval_label, median_ci, n_forks,
                    ok_rows, point_stats, ratio_ci, round_medians, sample, signed_rank_test, summarize, u_test,
                    warm_sample, with_forks)
from .style import PALETTE, backend_colors, backend_style, caption, compact_number, use_backends

NUMERIC_COLUMNS = tuple(c["name"] for c in schema.COLUMNS if c["type"] in ("int", "float"))

__all__ = [
    "Results", "ResultsError", "load",
    "METHOD", "ONE_FORK", "FORKS_RULE", "MIN_FORKS_ONE", "MIN_FORKS_TWO", "MIN_PAIRS", "median_ci", "ratio_ci", "diff_ci",
    "round_medians", "signed_rank_test",
    "n_forks", "fork_shortfall", "interval_label", "with_forks", "u_test", "point_stats", "summarize", "ok_rows", "failed_rows",
    "sample", "warm_sample", "cold_sample", "is_cold_only",
    "fmt_value", "fmt_ci", "fmt_ratio",
    "caption", "backend_style", "backend_colors", "use_backends", "PALETTE", "compact_number",
    "save_figure", "plot_lines", "line_figure", "split_series", "backend_group", "series_labels", "legend_entries",
    "figure_note", "fixed_parameters", "add_caption", "FIG_WIDTH", "tight_layout",
    "standalone_main", "write_table", "sibling_module",
    "NUMERIC_COLUMNS",
]
