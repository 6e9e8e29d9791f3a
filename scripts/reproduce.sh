#!/usr/bin/env bash
# reproduce.sh — reproduce a paper: run its plan(s) on the systems it compares plus our peers
# (go, Boost.Fiber, native-ws; tokio when `coopbench list` has it), draw the figures
# (scripts/plot.py) and write REPRODUCTION.md: per figure ours beside the paper's, per claim
# (results/paper/claims-PAPER.json) the measured value with its interval and a verdict computed
# from the results (scripts/coopbench/claims.py), the errata, and the P=64 predictions.
#
#   scripts/reproduce.sh PAPER|all [--out DIR] [--tiny] [--allow-dirty]
#       PAPER: negele, marathe, quirk, parasail. Runs into DIR (default
#       results/reproduce-PAPER-<UTC time>), one sub-folder per run, REPRODUCTION.md on top.
#       --tiny: every run at the workloads' tiny plan, one repetition (a smoke test of the
#       machinery in a minute or two; its verdicts mean nothing).
#       A tree with uncommitted changes (outside results/) is refused: its results could not
#       be traced to a commit. --allow-dirty runs anyway and writes the changes (git diff) to
#       each run's uncommitted.diff, which the report links.
#   scripts/reproduce.sh --report-only DIR [DIR...] PAPER [--out FILE]
#       only the report, from existing results folders (a DIR without results.csv stands for
#       its sub-folders that have one), e.g. the committed results/reference/* folders.
#       FILE defaults to the first DIR's REPRODUCTION.md.
#   scripts/reproduce.sh --rescore PAPER|all
#       re-score the committed results (results/reference/reproduce-PAPER) with the current
#       claims and rules, without running: rewrites their REPRODUCTION.md.
#   scripts/reproduce.sh --list      the runs, their commands and planned durations
#   scripts/reproduce.sh --check PAPER|all
#       prints every run's arguments and checks that each is a sweep the harness accepts (`coopbench run ... --dry-run`:
#       backends, workloads, parameters), which a run also does for all its runs before the first
#       starts: a bad run fails in seconds, not after the runs before it (tests/harness: the
#       committed run lists are checked against the built binary).
#
# Forks: 6 per point (-r 6), the fewest from which one point's interval covers its median 95 % of
# the time: the order-statistic interval of k forks' medians covers 1 - 2 * 0.5^k, 87.5 % at 4 forks,
# 93.75 % at 5, 96.9 % at 6 (coopbench.stats.MIN_FORKS_ONE, order_rank), so the tables' intervals carry
# no "below 95 %" mark and the rules that read one point's interval (value_within, anticorrelated,
# shares_match) can decide; a comparison needs 4 a side (a rank test on k forks a side cannot reach
# a two-sided p below 2/C(2k, k): 0.10 at 3, 0.029 at 4; MIN_FORKS_TWO), and a comparison paired by
# round 6 rounds (MIN_PAIRS). 6 forks cost half as much again as 4 did.
# COOPBENCH_PRECISION=5% chooses the forks of each run instead, with scripts/plan_precision.py:
# from a pilot folder (COOPBENCH_PILOT, a folder holding one sub-folder per run as this script
# writes, default results/reference/reproduce-PAPER), the forks 90 % of the run's points need
# for that relative half-width of the 95 % interval (Kalibera and Jones's optimal repetition
# counts), at least the 6 and at most what COOPBENCH_BUDGET_MIN minutes per run pay for (default:
# the run's planned minutes, `--list`, which pay for the 6; a round of forks is costed as a
# sixth of them).
#
# Planned duration of `all` on a 2-core machine: about 2 hours (negele 55, marathe 33,
# quirk 20, parasail 11 minutes), estimated from the reference runs' durations (scripts/reference.sh
# --list) scaled by their number of points and from 3 forks to 6. Sizes: the paper's where
# they fit (Table 1's parameters, Fig. 7's N up to 10^7, the lock paper's patience and thread counts scaled to
# the cores here), the quick plan for Figs. 8-9, a 600x600 matrix for Fig. 10 (the paper
# gives no size), fib k=18 and ddb 300 rounds for Quirk. The processors are this machine's
# (nproc): the paper's 30-64-core claims are reported as "cannot be tested here".
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
PY=/usr/bin/python3  # Debian's python3 with pandas and matplotlib (scripts/install-deps.sh)
bin=${COOPBENCH_BIN:-build/release/harness/coopbench}  # the binary (a test points it at its build)

usage() { sed -n '2,51p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
papers=(negele marathe quirk parasail)
is_paper() { local p; for p in "${papers[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }

cores=$(nproc)
# The peers beside each paper's own systems; tokio joins when this build has it.
peers="native-ws,go,boostfiber/work_stealing"

# runs_of PAPER — "name|minutes on 2 cores|coopbench run arguments" lines of the paper's runs.
runs_of() {
  local c=$cores
  case "$1" in
    negele)
      local b="native,pthreads,$peers"
      echo "create|12|-w create -b $b -p N=1,100,1000,10000,100000,1000000,10000000 -P $c -r 6 --timeout 90"
      echo "micro|11|-w switch,lock-local,lock-global -b $b --plan quick -P $c -r 6 --timeout 60"
      # The paper's program (via=monitor: monitors and mailboxes); the apps' channel variant
      # is the project's own comparison with Go (table_channels), not a claim of the paper.
      echo "apps|17|-w city,eratosthenes,mandelbrot,news,producer,tokenring -b $b --plan paper -p via=monitor -P $c -r 6 --timeout 120"
      echo "matrix|6|-w matrix -b native,pthreads,$peers -p N=600 -p M=$(seq -s, 1 $((2 * c))) -P $c -r 6 --timeout 60"
      # the conclusion's quantum-check overhead: the plugin's checks against the same compiler without them
      echo "implicit|6|-w mandelbrot,matrix -b native-clang,native-implicit --plan paper -p M=1 -P $c -r 6 --timeout 120"
      # Table 1's News sentence blames the implicit scheduler calls: the same checks, on News
      # at the paper's parameters (a run of its own: -p M=1 above would change News' M)
      # (News has no `via`: its monitor and mailbox are its only form)
      echo "implicit-news|3|-w news -b native-clang,native-implicit --plan paper -P $c -r 6 --timeout 120"
      ;;
    marathe)
      echo "fig3|5|-w abortable-lock --plan fig3_scalability -r 6"
      # The paper's Figure 4 goes from 30 to 40 threads on 30 processors (up to 4/3 per
      # processor): the claims read T = c to ceil(4c/3); 2c..8c show the figure beyond.
      echo "fig4|22|-w abortable-lock --plan fig4_preemption -p T=$(fig4_threads "$c") -r 6"
      echo "fig5|6|-w abortable-lock --plan fig5_degradation -r 6"
      ;;
    quirk)
      echo "units|20|-w fib,fib-mutex,ddb,ddb-mutex -b native,pthreads,native-ws -p k=18 -p rounds=300 -p work=0,1000 -P $(seq -s, 1 "$c") -r 6 --timeout 120"
      ;;
    parasail)
      echo "owner|11|-w owner-access --plan owner_access -p share_permille=990,1000 -r 6"
      ;;
  esac
}

fig4_threads() {  # fig4_threads C — C, ceil(4C/3) (when more than C), 2C, 4C, 8C
  local c=$1 t=$(( (4 * $1 + 2) / 3 ))
  if [ "$t" -gt "$c" ] && [ "$t" -lt $((2 * c)) ]; then echo "$c,$t,$((2 * c)),$((4 * c)),$((8 * c))"
  else echo "$c,$((2 * c)),$((4 * c)),$((8 * c))"; fi
}

with_tokio() {
  # tokio (another engineer's backend) is added to every -b list when this build lists it.
  # grep reads the whole list (no -q): under pipefail, `list | grep -q` fails whenever grep
  # stops reading before `list` has written everything (it dies of SIGPIPE), which left tokio
  # out of some runs and not others, at random.
  if "$bin" list 2>/dev/null | grep '^  tokio\b' >/dev/null; then sed 's/-b \([^ ]*\)/-b \1,tokio/'; else cat; fi
}

tiny() {
  # the smoke-test form of a run: the tiny plan, one repetition, no sweeps of our own (-p dropped)
  sed -e 's/--plan [^ ]*//' -e 's/-p [^ ]*//g' -e 's/-r [0-9]*//' -e 's/$/ --plan tiny -r 1/'
}

forks_for() {  # forks_for PAPER RUN MINUTES ARGS — ARGS with the -r that COOPBENCH_PRECISION asks for
  local paper=$1 name=$2 minutes=$3 args=$4 r
  local pilot="${COOPBENCH_PILOT:-results/reference/reproduce-$paper}/$name"
  if [ -z "${COOPBENCH_PRECISION:-}" ]; then echo "$args"; return; fi
  if [ ! -f "$pilot/results.csv" ]; then
    echo "reproduce.sh: no pilot $pilot/results.csv for COOPBENCH_PRECISION: keeping $(echo "$args" | grep -o -- '-r [0-9]*')" >&2
    echo "$args"; return
  fi
  local planned
  planned=$(echo "$args" | grep -o -- '-r [0-9]*' | cut -d' ' -f2)
  # One round (a fork of every point) takes the planned minutes over the planned forks: the
  # wall time, process starts and the driver's work included, which iteration times leave out.
  r=$("$PY" scripts/plan_precision.py "$pilot" --precision "$COOPBENCH_PRECISION" \
        --budget "${COOPBENCH_BUDGET_MIN:-$minutes}" --round-seconds $((minutes * 60 / planned)) --format r) \
    || { echo "$args"; return; }
  [ "$r" -ge "$planned" ] || r=$planned  # never fewer than the run's claims need
  echo "$args" | sed "s/-r [0-9]*/-r $r/"
}

run_args() {  # run_args PAPER NAME MINUTES ARGS — the arguments the run is made with
  local args=$4
  [ "$size" = tiny ] && args=$(echo "$args" | tiny)
  [ "$size" = tiny ] || args=$(forks_for "$1" "$2" "$3" "$args")
  echo "$args" | with_tokio
}

check_runs() {  # check_runs PAPER... — every run a sweep the harness accepts, or exit 2 naming it
  local paper name dur args err bad=0  # $verbose: print each run's arguments
  for paper in "$@"; do
    while IFS='|' read -r name dur args; do
      args=$(run_args "$paper" "$name" "$dur" "$args")
      # shellcheck disable=SC2086  # args is a list of words by construction
      if ! err=$("$bin" run $args --dry-run 2>&1 >/dev/null); then
        echo "reproduce.sh: run $paper/$name is not a sweep the harness accepts (coopbench run $args): $err" >&2
        bad=1
      elif [ -n "$verbose" ]; then
        echo "$paper/$name: coopbench run $args"
      fi
    done < <(runs_of "$paper")
  done
  [ $bad = 0 ] || exit 2
}

report() {  # report PAPER OUTFILE DIR...
  local paper=$1 out=$2; shift 2
  (cd scripts && PYTHONDONTWRITEBYTECODE=1 MPLBACKEND=Agg "$PY" -m coopbench.claims report "$paper" "$@" --out "$out")
}

abspath() { (cd "$1" && pwd); }

[ $# -eq 0 ] && { usage; exit 2; }
case "$1" in
  -h|--help) usage; exit 0 ;;
  --list)
    for p in "${papers[@]}"; do
      runs_of "$p" | while IFS='|' read -r name dur args; do printf '%-9s %-7s %3s min  coopbench run %s\n' "$p" "$name" "$dur" "$args"; done
    done
    exit 0 ;;
  --check)
    [ $# -eq 2 ] || { echo "reproduce.sh: --check PAPER|all" >&2; exit 2; }
    if [ "$2" = all ]; then todo=("${papers[@]}"); else
      is_paper "$2" || { echo "reproduce.sh: unknown paper '$2' (${papers[*]} or all)" >&2; exit 2; }
      todo=("$2")
    fi
    size=full verbose=1
    [ -x "$bin" ] || { echo "reproduce.sh: no $bin: build it first (cmake --preset release && cmake --build build/release)" >&2; exit 2; }
    check_runs "${todo[@]}"
    echo "reproduce.sh: every run of ${todo[*]} is a sweep the harness accepts"
    exit 0 ;;
  --rescore)
    [ $# -eq 2 ] || { echo "reproduce.sh: --rescore PAPER|all" >&2; exit 2; }
    if [ "$2" = all ]; then todo=("${papers[@]}"); else
      is_paper "$2" || { echo "reproduce.sh: unknown paper '$2' (${papers[*]} or all)" >&2; exit 2; }
      todo=("$2")
    fi
    for paper in "${todo[@]}"; do
      ref=results/reference/reproduce-$paper
      [ -d "$ref" ] || { echo "reproduce.sh: no committed results $ref" >&2; exit 2; }
      dirs=()
      for s in "$ref"/*/; do [ -f "$s/results.csv" ] && dirs+=("$(abspath "$s")"); done
      report "$paper" "$(abspath "$ref")/REPRODUCTION.md" "${dirs[@]}"
    done
    exit 0 ;;
  --report-only)
    shift
    out=""
    args=()
    while [ $# -gt 0 ]; do
      case "$1" in
        --out) out=$2; shift 2 ;;
        *) args+=("$1"); shift ;;
      esac
    done
    [ ${#args[@]} -ge 2 ] || { echo "reproduce.sh: --report-only DIR [DIR...] PAPER" >&2; exit 2; }
    paper=${args[-1]}
    unset 'args[-1]'
    is_paper "$paper" || { echo "reproduce.sh: unknown paper '$paper' (${papers[*]})" >&2; exit 2; }
    dirs=()
    for d in "${args[@]}"; do
      [ -d "$d" ] || { echo "reproduce.sh: no folder $d" >&2; exit 2; }
      if [ -f "$d/results.csv" ]; then dirs+=("$(abspath "$d")")
      else
        for s in "$d"/*/; do [ -f "$s/results.csv" ] && dirs+=("$(abspath "$s")"); done
      fi
    done
    [ ${#dirs[@]} -gt 0 ] || { echo "reproduce.sh: no results.csv in ${args[*]}" >&2; exit 2; }
    [ -n "$out" ] || out="${args[0]}/REPRODUCTION.md"
    out="$(abspath "$(dirname "$out")")/$(basename "$out")"
    report "$paper" "$out" "${dirs[@]}"
    exit 0 ;;
esac

target=$1; shift
out=""; size=full; allow_dirty=""; verbose=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --tiny) size=tiny; shift ;;
    --allow-dirty) allow_dirty=1; shift ;;
    *) echo "reproduce.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ "$target" = all ]; then todo=("${papers[@]}"); else
  is_paper "$target" || { echo "reproduce.sh: unknown paper '$target' (${papers[*]} or all)" >&2; exit 2; }
  todo=("$target")
fi

# The harness stamps a run from a changed tree "<commit>-dirty" (harness/machine.cpp, results/ left
# out); a report from it could not say what measured it, so such a tree is refused up front.
changes=$(git status --porcelain --untracked-files=no -- . ':(exclude)results' 2>/dev/null || true)
if [ -n "$changes" ] && [ -z "$allow_dirty" ]; then
  echo "reproduce.sh: uncommitted changes outside results/ ($(echo "$changes" | wc -l) files): commit them, or --allow-dirty to record them in each run's uncommitted.diff" >&2
  exit 2
fi

cmake --preset release >/dev/null
cmake --build build/release --target coopbench -j "$cores"
check_runs "${todo[@]}"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
for paper in "${todo[@]}"; do
  dir=${out:-results/reproduce-$paper-$stamp}
  [ ${#todo[@]} -gt 1 ] && [ -n "$out" ] && dir="$out/$paper"
  mkdir -p "$dir"
  dirs=()
  while IFS='|' read -r name dur args; do
    args=$(run_args "$paper" "$name" "$dur" "$args")
    sub="$dir/$name"
    if [ -n "$changes" ]; then mkdir -p "$sub" && git diff -- . ':(exclude)results' >"$sub/uncommitted.diff"; fi
    echo "=== $paper/$name (planned $dur min on 2 cores): coopbench run $args" >&2
    # Exit code 3: the run ended with failed points, which are results (README, "Exit codes").
    status=0
    if [ -f "$sub/sweep.json" ] && [ ! -f "$sub/report.md" ]; then
      "$bin" run --resume "$sub" || status=$?  # an interrupted run continues where it stopped
    elif [ ! -f "$sub/report.md" ]; then
      # shellcheck disable=SC2086  # args is a list of words by construction
      "$bin" run $args --out "$sub" || status=$?
    fi
    [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || exit "$status"
    "$PY" scripts/plot.py "$sub" >/dev/null || echo "reproduce.sh: plot.py $sub reported a problem (see $sub/report.md)" >&2
    dirs+=("$(abspath "$sub")")
  done < <(runs_of "$paper")
  report "$paper" "$(abspath "$dir")/REPRODUCTION.md" "${dirs[@]}"
  echo "=== $paper: $dir/REPRODUCTION.md" >&2
done
