#!/bin/sh
# check_park_tso.sh — verify models/park_notify.pml under x86-TSO (-DTSO: the Waker's
# publication goes through a store buffer that a fence or a locked instruction drains): the
# protocol must pass with the waker of notify() (park.hpp wake_one) and with the yield's
# waker (Scheduler<A>::yielded, -DYIELD); each must fail without its fence
# (BUG_WAKER_NO_FENCE, BUG_YIELD_NO_FENCE), so the check can fail. Also prints that the
# sequentially consistent model accepts the fence-less yield (why it could not see it).
# And the timers (-DTIMER), under SC and TSO alike (their publication is a locked CAS, so TSO
# adds no reordering): the idle loop's re-check against the deadline its timeout came from
# must pass, the re-check "has a deadline passed?" (BUG_TIMER_PAST_ONLY) must fail.
# Exit 77 (CTest: skipped) when spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/spin_lib.sh"
spin_setup
model=$here/park_notify.pml
for sizes in "-DNPARKERS=1 -DROUNDS=3" "-DNPARKERS=2 -DROUNDS=3"; do
    for waker in "" "-DYIELD"; do
        spin_must_pass "TSO protocol $sizes $waker" "$model" "-DTSO $sizes $waker"
    done
    spin_must_fail "TSO -DBUG_WAKER_NO_FENCE $sizes" "$model" "-DTSO -DBUG_WAKER_NO_FENCE $sizes"
    spin_must_fail "TSO -DYIELD -DBUG_YIELD_NO_FENCE $sizes" "$model" "-DTSO -DYIELD -DBUG_YIELD_NO_FENCE $sizes"
done
for mem in "" "-DTSO"; do
    for sizes in "-DNPARKERS=1" "-DNPARKERS=2"; do
        spin_must_pass "TIMER $mem $sizes" "$model" "-DTIMER $mem $sizes"
        spin_must_fail "TIMER -DBUG_TIMER_PAST_ONLY $mem $sizes" "$model" "-DTIMER -DBUG_TIMER_PAST_ONLY $mem $sizes"
    done
done
# For the record, not a check: sequential consistency cannot see the missing fence.
spin_verify "SC -DYIELD -DBUG_YIELD_NO_FENCE (passes under SC: informational)" "$model" "-DYIELD -DBUG_YIELD_NO_FENCE" || true
spin_end
