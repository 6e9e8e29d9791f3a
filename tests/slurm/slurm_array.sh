#!/usr/bin/env bash
# slurm_array.sh COOPBENCH SOURCE_DIR — a sweep on a real Slurm, not a mock (a mock would
# not catch what a real sbatch, srun and array task environment do).
#
# Starts, on this machine and without systemd, munged (as user munge, its key, socket, pid
# and log in a temporary folder), slurmctld and slurmd (a one-node slurm.conf: the node is
# `hostname -s` with CPUs=$(nproc), proctrack/linuxproc, task/none, state, spool and logs in
# the temporary folder, free ports); submits scripts/slurm/sweep.sbatch as an array of 3
# shards of a small sweep; waits (bounded); merges and plots with scripts/slurm/merge.sh;
# checks that the merged folder holds exactly the points of the same sweep unsharded
# (`coopbench run --dry-run`), each repetition once, with the host; then stops every daemon
# it started by its PID and removes the folder (also on failure or interruption).
#
# Exit 77 (CTest: skipped) with the reason when it cannot run: not root, a package missing.
set -euo pipefail
bin=$(realpath "$1")
src=$(realpath "$2")
SKIP=77
skip() { echo "SKIPPED: $*" >&2; exit $SKIP; }

[ "$(id -u)" -eq 0 ] || skip "needs root to start munged as user munge and slurmd (run as root, as CI does)"
missing=()
for c in /usr/sbin/munged /usr/bin/munge /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue \
         /usr/bin/scontrol /usr/bin/sinfo /usr/bin/scancel /usr/bin/setpriv /usr/bin/python3; do
  [ -x "$c" ] || missing+=("$c")
done
[ ${#missing[@]} -eq 0 ] || skip "missing ${missing[*]} (scripts/install-deps.sh installs slurm-wlm and munge)"
id munge >/dev/null 2>&1 || skip "no user munge (the munge package creates it)"

tmp=$(mktemp -d /tmp/coopbench-slurm.XXXXXX)
chmod 755 "$tmp"  # munged requires every folder above its socket to be searchable by all
pids=()           # every daemon we started, stopped by PID on exit
job=""
export SLURM_CONF=$tmp/slurm.conf

cleanup() {
  local rc=$?
  set +e
  if [ -n "$job" ] && [ -e /proc/"${pids[1]:-0}" ]; then
    scancel "$job" 2>/dev/null
    for _ in $(seq 1 20); do [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break; sleep 0.5; done
  fi
  # Reverse order: slurmd, slurmctld, munged. TERM, up to 10 s, then KILL.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    local p=${pids[i]}
    kill -TERM "$p" 2>/dev/null || continue
    for _ in $(seq 1 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  if [ $rc -ne 0 ] && [ $rc -ne $SKIP ]; then
    echo "--- slurm_array.sh failed ($rc); logs:" >&2
    for f in "$tmp"/log/* "$tmp"/job-*.out; do
      [ -f "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
    done
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND... — poll until COMMAND succeeds; fail after SECONDS.
wait_for() {
  local secs=$1 what=$2
  shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "FAILED: $what within ${secs} s" >&2; return 1; fi
    sleep 0.5
  done
}

free_port() { /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# --- munged, as user munge, everything under $tmp/munge
mkdir -p "$tmp/munge/key" "$tmp/log" "$tmp/state" "$tmp/spool" "$tmp/results"
dd if=/dev/urandom of="$tmp/munge/key/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$tmp/munge"
chmod 755 "$tmp/munge"
chmod 700 "$tmp/munge/key"
chmod 400 "$tmp/munge/key/munge.key"
sock=$tmp/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground --socket="$sock" \
  --key-file="$tmp/munge/key/munge.key" --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munge/munged.log" \
  --seed-file="$tmp/munge/key/munged.seed" 2>"$tmp/log/munged.err" &
pids+=($!)
wait_for 20 "munged to answer on $sock" sh -c "munge -n -S '$sock' | unmunge -S '$sock'"

# --- slurmctld and slurmd with a one-node slurm.conf; new ports if the first ones were taken meanwhile
node=$(hostname -s)
cpus=$(nproc)
: >"$tmp/plugstack.conf"
started=no
for attempt in 1 2 3; do
  ctld_port=$(free_port)
  d_port=$(free_port)
  cat >"$SLURM_CONF" <<EOF
ClusterName=coopbenchtest
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
PlugStackConfig=$tmp/plugstack.conf
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=600
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=coopbench Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
  /usr/sbin/slurmctld -D -f "$SLURM_CONF" >>"$tmp/log/slurmctld.out" 2>&1 &
  ctld=$!
  pids+=("$ctld")
  if wait_for 30 "slurmctld to answer" scontrol ping; then
    /usr/sbin/slurmd -D -N "$node" -f "$SLURM_CONF" >>"$tmp/log/slurmd.out" 2>&1 &
    pids+=($!)
    started=yes
    break
  fi
  kill -TERM "$ctld" 2>/dev/null; wait "$ctld" 2>/dev/null || true
  unset 'pids[-1]'
  echo "slurmctld did not start (attempt $attempt, ports $ctld_port/$d_port); trying other ports" >&2
done
[ $started = yes ] || { echo "FAILED: slurmctld would not start" >&2; exit 1; }
node_idle() { [ "$(sinfo -h -n "$node" -o %t)" = idle ]; }
wait_for 60 "node $node to be idle in Slurm" node_idle

# --- the sweep: 3 shards as an array job, the shared binary, a shared results folder
sweep=(--plan tiny --workloads create,switch,lock-global,tokenring --backends pthreads,native --repetitions 2 --timeout 60)
job=$(COOPBENCH_BIN=$bin sbatch --parsable --array=0-2 --chdir="$tmp" --output="$tmp/job-%A_%a.out" \
        "$src/scripts/slurm/sweep.sbatch" "$tmp/results/sweep" "${sweep[@]}")
job=${job%%;*}
echo "submitted array job $job (3 shards) to the Slurm on $node"
array_done() { [ -z "$(squeue -h -j "$job" 2>/dev/null)" ]; }
wait_for 400 "array job $job to finish" array_done
states=$(scontrol -o show job "$job" | grep -o 'JobState=[A-Z_]*\|ExitCode=[0-9:]*' | paste -sd' ')
echo "tasks: $states"
n_done=$(grep -o 'JobState=COMPLETED ExitCode=0:0' <<<"$states" | wc -l || true)
[ "$n_done" -eq 3 ] || { echo "FAILED: not every task completed with exit code 0: $states" >&2; exit 1; }

# --- merge and plot with the one command; check against the sweep unsharded
COOPBENCH_BIN=$bin "$src/scripts/slurm/merge.sh" "$tmp/results/sweep" "$tmp/merged"
"$bin" run "${sweep[@]}" --dry-run | sed '$d' | awk '{print $1}' >"$tmp/unsharded-points.txt"
/usr/bin/python3 - "$tmp" "$node" <<'PY'
import csv, json, pathlib, sys
tmp, node = pathlib.Path(sys.argv[1]), sys.argv[2]
expected = set(p for p in (tmp / "unsharded-points.txt").read_text().split() if p)
rows = list(csv.DictReader(open(tmp / "merged" / "results.csv")))
keys = [(r["point"], r["repetition"], r["iteration"]) for r in rows]
assert len(keys) == len(set(keys)), "a measurement appears twice in the merged results"
got = {p for p, _, _ in keys}
assert got == expected, f"merged points differ from the sweep unsharded: missing {sorted(expected - got)[:5]}, extra {sorted(got - expected)[:5]}"
assert {(p, r) for p, r, _ in keys} == {(p, str(r)) for p in expected for r in range(2)}, "not every point has repetitions 0 and 1"
bad = [(r["point"], r["reason"]) for r in rows if r["status"] != "ok"]
assert not bad, f"failed points: {bad[:5]}"
assert {r["host"] for r in rows} == {node}, "the host column does not name this machine"
shards = sorted(p.name for p in (tmp / "results" / "sweep").iterdir() if p.name.startswith("shard-"))
assert shards == ["shard-0-of-3", "shard-1-of-3", "shard-2-of-3"], shards
per_shard = [sum(1 for _ in open(tmp / "results" / "sweep" / s / "results.csv")) - 1 for s in shards]
assert sum(per_shard) == len(rows) and all(n > 0 for n in per_shard), per_shard
ctx = json.loads((tmp / "merged" / "context.json").read_text())
assert ctx["shards"] == 3 and ctx["host"] == node and "merge_incomplete" not in ctx, ctx
assert (tmp / "merged" / "report.md").is_file() and any((tmp / "merged" / "figures").glob("*.png")), "no figures"
print(f"slurm ok: {len(expected)} points x 2 repetitions (each W+I iterations) from 3 array tasks ({per_shard} rows) on {node}")
PY
