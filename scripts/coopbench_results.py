"""coopbench_results — the old name of the `coopbench` package (scripts/coopbench/); new code imports `coopbench`.

Kept only while importers outside the package's users still spell it so (tests/apps/test_app_scripts.py,
scripts/figures/table1.py, scripts/figures/fig10_matrix.py, tests/scripts/test_table1.py): the same
public names as `coopbench`, nothing of its own.
"""

from coopbench import *  # noqa: F401,F403
