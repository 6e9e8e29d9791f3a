#!/usr/bin/env bash
# run.sh — the main job: install what is missing, build coopbench (Release), run a sweep
# (default: the `quick` plan, every backend x every workload; --plan NAME picks another), then draw the figures and
# report.md into the result folder.
#
#   scripts/run.sh                                   # the quick plan into results/<host>-<UTC time>/
#   scripts/run.sh --plan paper --workloads create   # any `coopbench run` arguments
#   scripts/run.sh --resume results/<folder>         # continue an interrupted sweep
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build build/release --target coopbench -j "$(nproc)"

args=("$@")
out=""
plan_given=no
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --plan|--plan=*) plan_given=yes ;;
    --resume|--resume=*) plan_given=yes ;;  # the interrupted sweep's own plan
  esac
  case "${args[$i]}" in
    --out|-o|--resume) out="${args[$((i + 1))]:-}" ;;
    --out=*|--resume=*) out="${args[$i]#*=}" ;;
    --dry-run|--help|-h) exec build/release/harness/coopbench run "${args[@]}" ;;
  esac
done
# The quick plan unless another is named (--param still overrides single parameters).
[ "$plan_given" = no ] && args+=(--plan quick)
if [ -z "$out" ]; then
  out="results/$(hostname -s 2>/dev/null || echo host)-$(date -u +%Y%m%dT%H%M%SZ)"
  args+=(--out "$out")
fi
# Exit code 3: the sweep ran to its end and some points failed (README, "Exit codes"): its
# results and figures are made as for a clean sweep, and run.sh exits 3 after them.
status=0
build/release/harness/coopbench run "${args[@]}" || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || exit "$status"
/usr/bin/python3 scripts/plot.py "$out"
echo "coopbench: results, figures and report in $out (open $out/report.md)"
[ "$status" -eq 0 ] || echo "coopbench: some points failed: their reasons are in $out/results.csv and $out/report.md" >&2
exit "$status"
