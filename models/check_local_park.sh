#!/bin/sh
# check_local_park.sh — verify models/local_park.pml with Spin: park.hpp's park/wake protocol
# as the processor-local policies use it (work pushed onto the waker's own queue, then
# notify(); the parker's has_ready() scanning every local queue; thieves moving items;
# overflow chains into the global queue, whose empty() is head == tail with a tail that may
# lag; refills from it; the global queue's summary bit, never left clear over a queued item) must leave no announced item queued while every processor is asleep or busy for good, run no
# item twice, and leave the token free, at several sizes; each mutant must be rejected (so
# the check can fail). Exit 77 (CTest: skipped) when spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
spin=$(command -v spin) || { echo "spin not installed: skipped"; exit 77; }
cc=$(command -v cc || command -v gcc || command -v clang) || { echo "no C compiler: skipped"; exit 77; }
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

verify() {  # verify NAME DEFINES -> prints pan's summary, returns 0 when no error was found
    rm -f pan pan.* _spin_nvr.tmp ./*.trail
    "$spin" -a $2 "$here/local_park.pml" > spin.log 2>&1 || { cat spin.log; echo "$1: spin -a failed"; exit 1; }
    "$cc" -O2 -DVECTORSZ=4096 -DCOLLAPSE -o pan pan.c > cc.log 2>&1 || { cat cc.log; echo "$1: cc failed"; exit 1; }
    ./pan -m200000 > pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -n1)
    echo "$1: errors=$errors states=$states"
    [ -n "$errors" ] || { cat pan.log; echo "$1: no result from pan"; exit 1; }
    if grep -q "max search depth too small" pan.log; then echo "$1: search depth too small"; exit 1; fi
    return "$errors"
}

fail=0
# The 2-processor sizes check everything (rings of 2 that overflow as chains, the global
# queue's lagging tail and two-step take, refill); the 3-processor ones, for time, keep the
# take's empty() and dequeue in one step, do not refill and have rings of 4 (no overflow with
# <= 4 activities): the scope of the model before overflow and refill were added.
for sizes in "-DNPROC=2 -DITEMS=2 -DYIELDS=1" "-DNPROC=2 -DITEMS=3 -DYIELDS=1" "-DNPROC=3 -DITEMS=2 -DYIELDS=1 -DCAP=4 -DIDEAL_GLOBAL" "-DNPROC=3 -DITEMS=3 -DYIELDS=0 -DCAP=4 -DIDEAL_GLOBAL"; do
    sizes="$sizes -DSTRICT_YIELD"
    verify "protocol $sizes" "$sizes" || { cat pan.log; echo "FAIL: a wake-up was lost or an item ran twice ($sizes)"; fail=1; }
done
# BUG_NO_CHAIN needs a third processor: the thief's chained notify wakes it.
# BUG_CHAIN_LAG (an overflow chain's append returns with the tail lagging inside it) needs
# three activities besides the root's first: a global item, a ring that overflows.
# BUG_NO_REFILL_NOTIFY: a pick that refilled its ring does not notify.
# BUG_SUMMARY_NO_RECHECK: a take that found the global queue empty clears its summary bit and
# does not look again (the monitor `summary` finds the bit clear over a queued item).
for bug in "BUG_NO_RECHECK -DNPROC=2 -DITEMS=2" "BUG_NO_NOTIFY_LOCAL -DNPROC=2 -DITEMS=2" "BUG_NO_CHAIN -DNPROC=3 -DITEMS=2 -DCAP=4 -DIDEAL_GLOBAL" "BUG_NO_YIELD_NOTIFY -DNPROC=2 -DITEMS=2" "BUG_CHAIN_LAG -DNPROC=2 -DITEMS=3" "BUG_NO_REFILL_NOTIFY -DNPROC=2 -DITEMS=2" "BUG_SUMMARY_NO_RECHECK -DNPROC=2 -DITEMS=2"; do
    if verify "mutant $bug (must fail)" "-D$bug -DYIELDS=1 -DSTRICT_YIELD"; then
        echo "FAIL: the model did not catch mutant $bug"; fail=1
    else
        grep -m1 -E "assertion violated|invalid end state" pan.log
    fi
done
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
