#!/usr/bin/env bash
# e2e.sh COOPBENCH SOURCE_DIR — the user's path end to end: a tiny sweep of every registered
# backend x every workload it runs, through the real binary in process isolation, then
# scripts/plot.py; checks the files, that every point is ok, and the figures.
set -euo pipefail
bin=$1
src=$2
out=$(mktemp -d /tmp/coopbench-e2e.XXXXXX)
trap 'rm -rf "$out"' EXIT

# Exit code 3 (a point failed) still makes the figures; the check below names the failed points.
status=0
"$bin" run --plan tiny --out "$out/run" --quiet --timeout 120 > "$out/stdout.txt" || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 3 ] || { echo "e2e: coopbench run exited $status" >&2; exit 1; }
"$bin" list --json > "$out/list.json"
/usr/bin/python3 "$src/scripts/plot.py" "$out/run"

/usr/bin/python3 - "$out" "$status" <<'PY'
import csv, json, sys, pathlib
out = pathlib.Path(sys.argv[1])
listing = json.loads((out / "list.json").read_text())
rows = list(csv.DictReader(open(out / "run" / "results.csv")))
assert rows, "no rows in results.csv"
failed = [r for r in rows if r["status"] != "ok"]
assert not failed, "failed points:\n" + "\n".join(f'{r["point"]}: {r["reason"]}' for r in failed)
seen = {(r["backend"], r["workload"]) for r in rows}
tiny = {w["name"] for w in listing["workloads"] if "tiny" in w.get("plans", [])}
missing = [(b["name"], w) for b in listing["backends"] for w in b.get("workloads", []) if w in tiny and (b["name"], w) not in seen]
assert not missing, f"pairs never measured: {missing}"
bj = json.loads((out / "run" / "benchmark.json").read_text())
assert "git_commit" in bj["context"] and bj["benchmarks"], "benchmark.json lacks context or benchmarks"
figs = out / "run" / "figures"
for name in ["fig7_thread_creation", "fig8_context_switch", "fig9_locking"]:
    for ext in ["png", "svg"]:
        assert (figs / f"{name}.{ext}").exists(), f"missing figure {name}.{ext}"
report = (out / "run" / "report.md").read_text()
assert "fig7_thread_creation" in report, "report.md does not show the figures"
assert sys.argv[2] == "0", f"coopbench run exited {sys.argv[2]} with no failed point"
print(f"e2e ok: {len(rows)} points, {len(seen)} backend x workload pairs, {len(listing['backends'])} backends")
PY

# Google Benchmark's own tools/compare.py (Debian's libbenchmark-tools) reads our
# benchmark.json: two small sweeps of one point, compared by its U test (our statistics and
# Google's must agree on the same files).
compare=/usr/share/benchmark/compare.py
if [ -f "$compare" ]; then
  for side in a b; do
    "$bin" run -w create -b native -p N=100 -P 1 -r 3 --warmup 1 --iterations 3 --out "$out/$side" --quiet > /dev/null
  done
  /usr/bin/python3 "$compare" benchmarks "$out/a/benchmark.json" "$out/b/benchmark.json" > "$out/compare.txt"
  grep -q "native/create/N=100/P=1" "$out/compare.txt" || { echo "compare.py did not report the point:"; cat "$out/compare.txt"; exit 1; }
  grep -q "_pvalue" "$out/compare.txt" || { echo "compare.py ran no U test:"; cat "$out/compare.txt"; exit 1; }
  # A fork is one repetition of Google's (harness/gbench_reporter.hpp): its U test counts forks.
  grep -q "Repetitions: 3 vs 3" "$out/compare.txt" || { echo "compare.py did not count 3 forks:"; cat "$out/compare.txt"; exit 1; }
  echo "e2e ok: Google's compare.py read both benchmark.json and ran its U test"
else
  echo "e2e: $compare missing (scripts/install-deps.sh installs libbenchmark-tools); compare.py check skipped"
fi
