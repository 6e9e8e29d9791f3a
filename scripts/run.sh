#!/usr/bin/env bash
# run.sh — the main job: install what is missing, build coopbench (Release), run a sweep
# (default: the `quick` plan, every backend x every workload; --plan NAME picks another), then draw the figures and
# report.md and report.html into the result folder.
#
#   scripts/run.sh                                   # the quick plan into results/<host>-<UTC time>/
#   scripts/run.sh --plan paper --workloads create   # any `coopbench run` arguments
#   scripts/run.sh --resume results/<folder>         # continue an interrupted sweep
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# What a sweep needs only: the tests' packages (Slurm, munge, Spin, Pth) are named, not installed.
scripts/install-deps.sh --for-run
# Configured as test.sh configures it (scripts/build-env.sh), so neither rebuilds what the other built.
. scripts/build-env.sh
configure_preset release
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
# point_counts DIR — "FAILED REFUSED": the points of DIR/results.csv with a row neither ok nor refused, and those
# whose rows are all refused (never run: a system limit known before the run, e.g. more threads than pid_max).
point_counts() {
  /usr/bin/python3 - "$1/results.csv" <<'PY'
import csv, sys
seen = {}
try:
    with open(sys.argv[1], newline="") as f:
        for r in csv.DictReader(f):
            if r.get("point"):
                seen.setdefault(r["point"], set()).add((r.get("status") or "").strip().lower())
except OSError:
    pass
print(sum(1 for s in seen.values() if s - {"ok", "refused"}), sum(1 for s in seen.values() if s == {"refused"}))
PY
}
# Exit code 3: the sweep ran to its end and some points failed (README, "Exit codes"): its
# results and figures are made as for a clean sweep, and run.sh exits 3 after them. A refused
# point is not a failure: the machine cannot run it (the quick plan asks for 10^5 threads; a
# small machine's pid_max refuses them), which is a result; with only refusals run.sh exits 0,
# whether or not the driver counted them in its exit code.
status=0
build/release/harness/coopbench run "${args[@]}" || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || exit "$status"
/usr/bin/python3 scripts/plot.py "$out"
read -r failed refused < <(point_counts "$out")
[ "$status" -eq 3 ] && [ "$failed" -eq 0 ] && [ "$refused" -gt 0 ] && status=0
echo "coopbench: results, figures and report in $out (open $out/report.html in a browser, or $out/report.md)"
if [ "$refused" -gt 0 ]; then
  echo "coopbench: $refused point(s) refused: not run, a limit of this machine known before the run (not a failure;" \
       "listed in $out/report.md, Refused points)" >&2
fi
if [ "$status" -ne 0 ]; then
  [ "$failed" -gt 0 ] || failed=some  # the driver counted a failure this folder's rows do not show
  echo "coopbench: ${failed} point(s) failed: their reasons are in $out/results.csv and $out/report.md" >&2
fi
exit "$status"
