#!/usr/bin/env bash
# reference.sh — re-make the reference runs under results/reference/ with the commands that
# made them (one place, so that a reader can see and repeat exactly how each folder was
# measured). Each run goes into a scratch folder first and replaces results/reference/NAME
# only when it completed and its figures were drawn: a failed or interrupted run never
# destroys the folder it was meant to replace (its partial results stay in the scratch
# folder, which `--resume` continues).
#
#   scripts/reference.sh --list              # the names, their commands and rough durations
#   scripts/reference.sh micro-create quick  # re-make these (in this order)
#   scripts/reference.sh all                 # every one (hours on 2 cores: see --list)
#
# Measure on a quiet machine: every fork records the load average and the runnable
# processes before and after it, and report.md marks the points where the machine was busy.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# P=all: every CPU this process may use (never a fixed count); "1,1" on one CPU is one P (duplicates dropped).
all=$(nproc)
# The I/O backends (docs/io-workloads.md): coop's three algorithms, a thread per connection, Boost.Asio, the
# epoll ceiling, Go's net, tokio's two runtimes.
io_backends=native,native-ws,native-parasail,pthreads,stdthread,asio,epoll,go,tokio,tokio/current_thread
# The I/O workloads of the io run, and of io-extra (echo-hogs: p99 under CPU hogs, by slice_us; echo-idle: RSS
# per idle connection, the active ones' p99 at 50 % load), a run of its own because the io run's four loads would
# multiply them.
io_workloads=echo,echo-open,http-hello,rpc,churn
io_extra=echo-hogs,echo-idle

# name | rough duration on a 2-core machine | coopbench run arguments (without --out)
refs=(
  "micro-cold-warm|10 min|-w create,switch -b native,native-ws,native-parasail,pthreads,boostfiber,go -p N=1000,10000,1000000 -p T=2,10,100,1000 -p K=10000 -P 1,2 -r 3 --timeout 120"
  "peers|10 min|-w create,switch,tokenring,producer,eratosthenes,lock-global -b native,native-ws,native-parasail,go,tokio,tokio-std-mutex,tokio/current_thread,boostfiber/round_robin,boostfiber/shared_work,boostfiber/work_stealing --plan quick -P 1,2 -r 4 --timeout 120"
  "ws-apps|8 min|-w tokenring,producer,eratosthenes -b native,native-ws,native-parasail,boostfiber,go --plan paper -P 1,2 -r 3 --timeout 120"
  "ws-paper|8 min|--plan paper -b native-ws,native-parasail -P 1,2 --warmup 0 --iterations 1 -r 1 --timeout 120"
  "ws-mm|5 min|-w matrix,mandelbrot -b native,native-ws,native-parasail,pthreads --plan paper -p M=1,2 -p C=1000 -P 1,2 -r 3 --timeout 120"
  "micro-create|5 min|-w create -b native,pthreads,stdthread --plan paper -P 1,2 -r 3"
  "micro-paper|40 min|-w create,switch,lock-local,lock-global -b native,pthreads,stdthread --plan paper -P 1,2 -r 3 --timeout 90"
  "quick|10 min|--plan quick -r 3"
  "apps-paper|40 min|-w city,eratosthenes,mandelbrot,matrix,news,producer,tokenring --plan paper -r 3"
  "go-peer|90 min|-b go,native,boostfiber,pthreads -w create,switch,lock-local,lock-global,city,eratosthenes,mandelbrot,matrix,news,producer,tokenring --plan paper -P 1,2 -p M=1,2,4 -r 3 --timeout 60"
  "go-peer-paper-mm|30 min|-w mandelbrot,matrix -b go,native,pthreads,boostfiber --plan paper -p M=1,2 -P 1,2 -r 3"
  "locks-fig3_scalability|2 min|--plan fig3_scalability -r 3"
  "locks-fig4_preemption|15 min|--plan fig4_preemption -r 3"
  "locks-fig5_degradation|3 min|--plan fig5_degradation -r 3"
  "locks-owner_access|10 min|--plan owner_access -r 3"
  "units-quirk|8 min|-w fib,fib-mutex,ddb,ddb-mutex -b native,pthreads -p k=18 -p rounds=300 -p work=0,1000 -P 1,2 -r 3"
  # The I/O workloads on every I/O backend at P=1 and P=all, 3 forks a point (the forks are the unit): the
  # anchors plan's points (echo at 1-10,000 connections × 64/512/4096 B, echo-open at 100 and 1000 connections,
  # http-hello at 64/256/1024, rpc at work 600/6000/60000, churn at 64 connectors) with the open loops at
  # 25/50/75/90 % load, in windows short enough for 25 minutes: 250 ms of warm-up and calibration and a 500 ms
  # window in each run, one run per fork (W=0, I=1: the run's own warm-up window warms the server; 200 ms
  # windows measured 1 request at 10,000 connections, as a round of 10,000 requests did not fit). --dry-run:
  # 570 points, ~1562 s by the cost model on 2 CPUs; 10,000 connections cost more than it says (their
  # connects: ~3 s a fork measured on a busy 2-CPU VM).
  "io|26 min|--plan anchors -w $io_workloads -b $io_backends -P 1,$all -p load=25,50,75,90 -p duration_ms=500 -p warmup_ms=250 -p calibrate_ms=250 -W 0 -I 1 -r 3 --timeout 120"
  # echo-hogs at slice_us 100/1000/10000 and echo-idle's 10,000 idle connections beside 100 at 50 % load, the same
  # windows and forks; --dry-run: 76 points, ~361 s by the cost model (10,000 idle connects cost more than it says).
  "io-extra|12 min|--plan anchors -w $io_extra -b $io_backends -P 1,$all -p duration_ms=500 -p warmup_ms=250 -p calibrate_ms=250 -W 0 -I 1 -r 3 --timeout 120"
)

usage() { sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
list() {
  for r in "${refs[@]}"; do
    IFS='|' read -r name dur args <<<"$r"
    printf '%-24s %-8s coopbench run %s\n' "$name" "$dur" "$args"
  done
}
[ $# -eq 0 ] && { usage; exit 2; }
case "$1" in
  -h|--help) usage; exit 0 ;;
  --list) list; exit 0 ;;
esac

names=("$@")
if [ "${names[0]}" = all ]; then
  names=()
  for r in "${refs[@]}"; do names+=("${r%%|*}"); done
fi
# Check every name before running anything (a typo should not cost the runs before it).
for n in "${names[@]}"; do
  found=no
  for r in "${refs[@]}"; do [ "${r%%|*}" = "$n" ] && found=yes; done
  [ $found = yes ] || { echo "reference.sh: unknown reference run '$n' (see --list)" >&2; exit 2; }
done

cmake --preset release >/dev/null
cmake --build build/release --target coopbench -j "$(nproc)"
for n in "${names[@]}"; do
  for r in "${refs[@]}"; do
    IFS='|' read -r name dur args <<<"$r"
    [ "$name" = "$n" ] || continue
    scratch="results/reference/.$name.new"
    resume=()
    if [ -f "$scratch/sweep.json" ]; then resume=(--resume "$scratch"); fi
    echo "=== $name (about $dur): coopbench run $args" >&2
    # shellcheck disable=SC2086  # args is a list of words by construction
    # Exit code 3: the sweep ran to its end with failed points, which a reference run records
    # as results (README, "Exit codes"); any other failure stops the script.
    status=0
    if [ ${#resume[@]} -gt 0 ]; then
      build/release/harness/coopbench run "${resume[@]}" || status=$?
    else
      build/release/harness/coopbench run $args --out "$scratch" || status=$?
    fi
    [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || exit "$status"
    [ "$status" -eq 0 ] || echo "=== $name: some points failed (their reasons: $scratch/results.csv)" >&2
    /usr/bin/python3 scripts/plot.py "$scratch"
    # A folder's own README (how it was made, e.g. go-peer's) moves along with it.
    [ -f "results/reference/$name/README.md" ] && [ ! -f "$scratch/README.md" ] &&
      cp "results/reference/$name/README.md" "$scratch/README.md"
    rm -rf "results/reference/$name"
    mv "$scratch" "results/reference/$name"
    /usr/bin/python3 scripts/plot.py "results/reference/$name" >/dev/null  # titled by its final name
    echo "=== $name: results/reference/$name/report.md" >&2
  done
done
