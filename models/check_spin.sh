#!/bin/sh
# check_spin.sh MODEL.pml MUTANT_DEFINE — verify a Spin model: the protocol must pass (no
# assertion violated, no invalid end state) and the mutant built with -DMUTANT_DEFINE must
# fail (so the check can fail). Exit 77 (CTest: skipped) when spin or a C compiler is
# missing. Used for models/park_notify.pml (mutant OLD_PROTOCOL) and, through
# check_owner_guard.sh, models/owner_guard.pml (mutant BUG_NO_RECHECK).
set -u
[ $# -eq 2 ] || { echo "usage: check_spin.sh MODEL.pml MUTANT_DEFINE" >&2; exit 2; }
model=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mutant=$2
spin=$(command -v spin) || { echo "spin not installed: skipped"; exit 77; }
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "no C compiler: skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

verify() {  # verify NAME EXTRA_DEFINE -> prints pan's summary, returns number of errors
    rm -f pan pan.* _spin_nvr.tmp
    "$spin" -a $2 "$model" > spin.log 2>&1 || { cat spin.log; echo "$1: spin -a failed"; exit 1; }
    "$cc" -O2 -DVECTORSZ=4096 -o pan pan.c > cc.log 2>&1 || { cat cc.log; echo "$1: cc failed"; exit 1; }
    ./pan -m200000 > pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -n1)
    echo "$1: errors=$errors states=$states"
    [ -n "$errors" ] || { cat pan.log; echo "$1: no result from pan"; exit 1; }
    return "$errors"
}

verify "$(basename "$model")" ""; ok=$?
if [ "$ok" -ne 0 ]; then cat pan.log; echo "FAIL: the protocol violates an assertion or loses a wake-up"; exit 1; fi
verify "$(basename "$model") -D$mutant (must fail)" "-D$mutant"; bad=$?
if [ "$bad" -eq 0 ]; then echo "FAIL: the model did not catch the mutant $mutant"; exit 1; fi
grep -m1 -E "invalid end state|assertion violated" pan.log
echo "PASS"
