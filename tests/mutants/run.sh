#!/bin/sh
# run.sh [NAME...] — hand mutants of coop's concurrency protocols: for each mutant NAME (all
# of them when none is named), apply tests/mutants/NAME.patch to a scratch copy of the
# repository, build the test targets it needs, run the tests that should kill it and print
#     NAME killed|survived|slow|error SECONDS
# (SECONDS: the test run, not the build), then a table (mutant, the test named to kill it,
# seconds, result, the first failing test or why not). Not run in CI (each mutant is a
# rebuild; all of them take about half an hour on 2 cores); the lead runs it after touching
# a protocol. Exit 0 when every mutant was killed within $MUTANTS_MAX_SECONDS (default 60):
# a kill that took longer is "slow", not a pass.
#
# First, every named patch is tried (patch --dry-run) on today's working tree: one that no
# longer applies is named at once, on stderr, counts as "error" and makes the exit status 1
# (regenerate it with tests/mutants/mk.py, which writes a patch from exact replacements).
#
# A mutant is two files here:
#   NAME.patch  a unified diff that applies with `patch -p1` at the repository root
#   NAME.tests  line 1: the ctest -R regex of the tests that must kill it;
#               line 2 (optional): the preset to build with, release (default), tsan or asan
# "killed" means: the patch applied, the targets built, at least one test matched and ctest
# failed; "error" (patch, build, or no test matched) is not a kill.
#
# The scratch copy: $MUTANTS_WORK (default ${TMPDIR:-/tmp}/coopbench-mutants)/src, the files
# `git ls-files` lists as they are in the working tree, copied only where they differ, so a
# build directory is reused between mutants (ccache: CCACHE_BASEDIR is set to it, the flags
# are the lead's, -DCOOPBENCH_WERROR=ON with the ccache launcher). Before each mutant, and at
# the end, the copy is made clean again (a file restored gets a new mtime, so it is rebuilt).
# The targets: every test executable (coopbench_add_test in some tests/**/CMakeLists.txt)
# whose sources define a GoogleTest suite or test named in the regex; tests that are scripts
# (the Spin models) need none. $MUTANTS_JOBS: build jobs (default 2); $MUTANTS_TIMEOUT: the
# ctest timeout per test in seconds (default 90: above MUTANTS_MAX_SECONDS, so a hang shows
# as "slow" rather than as a survivor).
set -u
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=${MUTANTS_WORK:-${TMPDIR:-/tmp}/coopbench-mutants}
src=$work/src
jobs=${MUTANTS_JOBS:-2}
timeout=${MUTANTS_TIMEOUT:-90}
max_seconds=${MUTANTS_MAX_SECONDS:-60}
# The store-buffer stresses (ParkTso, tests/native_ws/test_park_tso.cpp) run 6 s in the test
# suite; a mutant that removes a fence gets 45, still under a minute, so a loaded machine's
# other processes between the two pinned threads cannot let it survive.
export COOP_TEST_PARK_TSO_SECONDS=${COOP_TEST_PARK_TSO_SECONDS:-45}

die() { echo "run.sh: $*" >&2; exit 2; }
command -v patch > /dev/null || die "patch is not installed"
command -v cmake > /dev/null || die "cmake is not installed"

if [ $# -eq 0 ]; then
    set --
    for p in "$here"/*.patch; do
        [ -e "$p" ] || die "no mutants in $here"
        n=$(basename "$p" .patch)
        set -- "$@" "$n"
    done
fi
for n in "$@"; do
    [ -f "$here/$n.patch" ] || die "no mutant '$n' ($here/$n.patch missing)"
    [ -f "$here/$n.tests" ] || die "mutant '$n' has no $n.tests"
done

# Every patch against today's tree, before any build: the stale ones named at once.
stale=""
for n in "$@"; do
    if ! (cd "$repo" && patch -p1 --dry-run --quiet --force < "$here/$n.patch") > /dev/null 2>&1; then
        stale="$stale $n"
    fi
done
if [ -n "$stale" ]; then
    echo "run.sh: these mutants no longer apply to today's code (an error; regenerate them with tests/mutants/mk.py):$stale" >&2
fi

# sync — make $src equal to the working tree's tracked files (copy only what differs).
sync() {
    mkdir -p "$src" || die "cannot create $src"
    (cd "$repo" && git ls-files -z) | (cd "$repo" && xargs -0 sh -c '
        for f do
            [ -f "$f" ] || continue
            if ! cmp -s "$f" "$0/$f"; then mkdir -p "$0/$(dirname "$f")" && cp "$f" "$0/$f"; fi
        done' "$src") || die "cannot copy the repository to $src"
}

# targets_for REGEX — the test executables that define a suite or test matching REGEX.
targets_for() {
    python3 - "$src" "$1" << 'EOF'
import re, sys, pathlib
src, regex = pathlib.Path(sys.argv[1]), re.compile(sys.argv[2])
names = {}  # source path -> GoogleTest names "Suite.Test" it defines (and "Suite." alone)
test_re = re.compile(r'\b(?:TEST|TEST_F|TEST_P|TYPED_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)')
for f in (src / "tests").rglob("*.cpp"):
    found = test_re.findall(f.read_text(errors="replace"))
    if found:
        names[f.resolve()] = [f"{s}.{t}" for s, t in found]
targets = set()
add_re = re.compile(r'coopbench_add_test\(\s*(\w+)\s+SOURCES\s+([^)]*?)(?:\s+(?:LIBS|LABELS|TIMEOUT)\b|\))', re.S)
for cm in (src / "tests").rglob("CMakeLists.txt"):
    for target, sources in add_re.findall(cm.read_text()):
        for s in sources.split():
            path = (cm.parent / s).resolve()
            if any(regex.search(n) for n in names.get(path, [])):
                targets.add(target)
print(" ".join(sorted(targets)))
EOF
}

results=""
total_fail=0
for n in "$@"; do
    regex=$(sed -n 1p "$here/$n.tests")
    preset=$(sed -n 2p "$here/$n.tests")
    [ -n "$preset" ] || preset=release
    case "$preset" in release|tsan|asan) ;; *) die "$n.tests: preset must be release, tsan or asan, not '$preset'";; esac
    [ -n "$regex" ] || die "$n.tests: empty regex"
    sync
    status=error secs=0 why=""
    if ! (cd "$src" && patch -p1 --quiet --force --no-backup-if-mismatch < "$here/$n.patch") > "$work/$n.patch.log" 2>&1; then
        why="patch does not apply to today's code ($work/$n.patch.log)"
    else
        build=$src/build/$preset
        export CCACHE_BASEDIR=$src
        if ! (cd "$src" && cmake --preset "$preset" -DCOOPBENCH_WERROR=ON -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) > "$work/$n.configure.log" 2>&1; then
            why="configure failed ($work/$n.configure.log)"
        else
            targets=$(targets_for "$regex")
            b0=$(date +%s)
            if [ -n "$targets" ] && ! nice cmake --build "$build" -j"$jobs" --target $targets > "$work/$n.build.log" 2>&1; then
                why="build failed ($work/$n.build.log)"
            else
                b1=$(date +%s)
                t0=$(date +%s.%N)
                (cd "$build" && ctest -R "$regex" --timeout "$timeout" --no-tests=error --output-on-failure) > "$work/$n.ctest.log" 2>&1
                rc=$?
                t1=$(date +%s.%N)
                secs=$(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}')
                ran=$(sed -n 's/.*tests passed, \([0-9][0-9]*\) tests failed out of \([0-9][0-9]*\).*/\2/p' "$work/$n.ctest.log" | tail -n1)
                if [ -z "$ran" ] || [ "$ran" -eq 0 ]; then
                    why="no test matched '$regex' ($work/$n.ctest.log)"
                elif [ "$rc" -ne 0 ]; then
                    status=killed
                    # The first failing test's name and how it failed (Failed, Timeout, ...).
                    why=$(grep -m1 -E '\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception|Failed  ' "$work/$n.ctest.log" |
                          sed -e 's/^.*Test *#[0-9]*: *//' -e 's/ \.\.\.*/ /' -e 's/  */ /g' | cut -c1-90)
                    if awk -v s="$secs" -v m="$max_seconds" 'BEGIN { exit !(s > m) }'; then
                        status=slow
                        why="$why (killed after more than $max_seconds s)"
                    fi
                else
                    status=survived
                    why="$ran tests passed"
                fi
                why="$why; build $((b1 - b0)) s"
            fi
        fi
    fi
    echo "$n $status $secs"
    [ "$status" = killed ] || total_fail=1
    results="$results$n|$status|$secs|$why
"
done
sync  # leave the scratch copy clean

echo
printf '| %-30s | %-58s | %7s | %-8s | %s\n' mutant "killing test (NAME.tests)" seconds result "first failing test / why"
printf '|%s|%s|%s|%s|%s\n' -------------------------------- ------------------------------------------------------------ --------- ---------- ------------------
printf '%s' "$results" | while IFS='|' read -r n st s w; do
    [ -n "$n" ] && printf '| %-30s | %-58s | %7s | %-8s | %s\n' "$n" "$(sed -n 1p "$here/$n.tests" | sed 's/\\//g')" "$s" "$st" "$w"
done
exit $total_fail
