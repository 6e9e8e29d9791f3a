#!/usr/bin/env bash
# merge.sh SWEEP_DIR [OUT] — merge the shards of a sweep (SWEEP_DIR/shard-I-of-N, written by
# sweep.sbatch or coopbench run --shard) into OUT (default SWEEP_DIR/merged) and draw its
# figures and report.md. Exit 1 when shards or points are missing (the merged folder and its
# figures are still written; what is missing, and the command that completes it, is on stderr).
set -uo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: merge.sh SWEEP_DIR [OUT]" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin=${COOPBENCH_BIN:-$root/build/release/harness/coopbench}
out=${2:-$1/merged}
"$bin" merge "$out" "$1"
rc=$?
[ $rc -eq 2 ] && exit 2
/usr/bin/python3 "$root/scripts/plot.py" "$out" || exit $?
exit $rc
