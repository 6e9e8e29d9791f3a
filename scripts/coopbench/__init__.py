"""coopbench — read, summarize and draw coopbench results folders (split as Google's gbench splits util/report).

    schema   the columns of results.csv and keys of context.json, typed, from harness/schema.json (the one schema)
    load     load(dir) -> Results (typed df, typed context), ResultsError
    stats    median_ci, ratio_ci, u_test, point_stats, summarize, ok_rows (bootstrap, U test)
    style    caption, backend_style, compact_number
    figure   save_figure, plot_lines, series_labels, legend_entries, figure_note, add_caption
    claims   the papers' claims (results/paper/claims-*.json), their verdicts and REPRODUCTION.md
             (import coopbench.claims; scripts/reproduce.sh, docs/reproducing.md)

Figure modules import `coopbench_results` (scripts/coopbench_results.py), which re-exports
all of this under the names they have always used.
"""

from .figure import add_caption, figure_note, legend_entries, plot_lines, save_figure, series_labels
from .load import Results, ResultsError, load
from .stats import (METHOD, cold_sample, failed_rows, fmt_ci, fmt_ratio, fmt_value, median_ci, ok_rows, point_stats,
                    ratio_ci, sample,
                    summarize, u_test, warm_sample)
from .style import backend_style, caption, compact_number

__all__ = [
    "Results", "ResultsError", "load",
    "METHOD", "median_ci", "ratio_ci", "u_test", "point_stats", "summarize", "ok_rows", "failed_rows",
    "sample", "warm_sample", "cold_sample",
    "fmt_value", "fmt_ci", "fmt_ratio",
    "caption", "backend_style", "compact_number",
    "save_figure", "plot_lines", "series_labels", "legend_entries", "figure_note", "add_caption",
]
