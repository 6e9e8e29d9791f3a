#!/bin/sh
# check_owner_queue.sh — verify models/owner_queue.pml with Spin: the OwnerQueue as units use
# it, as a future's waiter list, and the unit's lifetime with the hand-off to carriers must
# pass (Theorems 2 and 3, unit exclusion, every item dequeued / every waiter woken exactly
# once, nothing left behind, no access to the unit after the program saw its last result),
# and every mutant must be rejected (so the checks can fail). Exit 77 (CTest: skipped) when
# spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
spin=$(command -v spin) || { echo "spin not installed: skipped"; exit 77; }
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "no C compiler: skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

verify() {  # verify NAME DEFINES -> prints pan's summary, returns number of errors (capped)
    rm -f pan pan.* _spin_nvr.tmp *.trail
    "$spin" -a $2 "$here/owner_queue.pml" > spin.log 2>&1 || { cat spin.log; echo "$1: spin -a failed"; exit 1; }
    "$cc" -O2 -DVECTORSZ=4096 -o pan pan.c > cc.log 2>&1 || { cat cc.log; echo "$1: cc failed"; exit 1; }
    ./pan -m100000 > pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -n1)
    echo "$1: errors=$errors states=$states"
    [ -n "$errors" ] || { cat pan.log; echo "$1: no result from pan"; exit 1; }
    [ "$errors" -gt 100 ] && errors=100
    return "$errors"
}

must_pass() {
    verify "$1" "$2"; r=$?
    if [ "$r" -ne 0 ]; then cat pan.log; echo "FAIL: $1 violates a property"; exit 1; fi
}
must_fail() {
    verify "$1" "$2"; r=$?
    if [ "$r" -eq 0 ]; then echo "FAIL: the model did not reject $1"; exit 1; fi
    grep -m1 -E "assertion violated|invalid end state" pan.log
}

must_pass "owner queue, units (3 senders x 2 messages)" ""
must_pass "owner queue, future waiter list (resolver + 3 waiters)" "-DFUTURE"
must_pass "unit lifetime, hand-off to 2 carriers (2 senders x 2 messages)" "-DLIFETIME -DTHREADS=2"
must_pass "unit lifetime, hand-off to 2 carriers (3 senders x 1 message)" "-DLIFETIME -DTHREADS=3 -DITEMS=1"
must_fail "mutant: count before enqueue (Theorem 3)" "-DBUG_COUNT_FIRST"
must_fail "mutant: deq_and_is_empty before the operation runs (unit exclusion)" "-DBUG_EARLY_DISOWN"
must_fail "mutant: enq_and_was_empty tests c <= 1 (Theorem 2)" "-DBUG_OWNER_TEST"
must_fail "mutant: waiter list without the producer's token (early wake-up)" "-DFUTURE -DBUG_NO_TOKEN"
must_fail "mutant: result published before end_deq_and_is_empty (unit written after its last result)" "-DLIFETIME -DTHREADS=2 -DBUG_RESOLVE_BEFORE_END"
echo "PASS"
