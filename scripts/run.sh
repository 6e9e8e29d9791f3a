#!/usr/bin/env bash
# run.sh — the main job: install what is missing, build coopbench (Release), run a sweep
# (default: the `quick` plan, every backend x every workload), then draw the figures and
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
[ ${#args[@]} -eq 0 ] && args=(--plan quick)
out=""
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[$i]}" in
    --out|-o|--resume) out="${args[$((i + 1))]:-}" ;;
    --out=*|--resume=*) out="${args[$i]#*=}" ;;
    --dry-run|--help|-h) exec build/release/harness/coopbench run "${args[@]}" ;;
  esac
done
if [ -z "$out" ]; then
  out="results/$(hostname -s 2>/dev/null || echo host)-$(date -u +%Y%m%dT%H%M%SZ)"
  args+=(--out "$out")
fi
build/release/harness/coopbench run "${args[@]}"
/usr/bin/python3 scripts/plot.py "$out"
echo "coopbench: results, figures and report in $out (open $out/report.md)"
