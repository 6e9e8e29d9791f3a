#!/bin/sh
# noise.sh BIN — the noise guard against real competing work: two busy loops
# started by this script run during a ~1 s point at P = all cores; the point's rows must
# say noisy=true and other_cpus > 0.5 (the busy time that was not the fork's own). The
# loops are stopped by PID on every exit. The opposite direction (the sweep's own threads
# are not noise) is tested with fake /proc values in test_driver (DriverNoise.*).
set -u
bin=$1
out=$(mktemp -d) || exit 1
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$out"' EXIT
cores=$(nproc)
for i in 1 2; do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
done
"$bin" run -b native -w tokenring -p N=1000 -p K=3000 -P "$cores" -r 1 -W 0 -I 1 -o "$out/r" -q \
    > "$out/log" 2>&1 || { cat "$out/log"; echo "FAIL: the sweep failed"; exit 1; }
python3 - "$out/r/results.csv" <<'PY' || exit 1
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert rows, "no rows"
for r in rows:
    print("noisy=%s other_cpus=%s runnable=%s/%s" % (r["noisy"], r["other_cpus"], r["runnable_before"], r["runnable_after"]))
    assert r["noisy"] == "true", "two busy loops ran: the fork must be noisy"
    assert float(r["other_cpus"]) > 0.5, "two busy loops ran: other_cpus must see more than half a CPU"
print("PASS")
PY
