#!/bin/sh
# check_park_wakers.sh — verify models/park_notify.pml with two wakers (-DWAKERS=2): the
# protocol must pass, and wake_one() returning right after giving the token back
# (-DBUG_NO_RETRY: no look at parked_ again, park.hpp (b)) must fail, so the check can fail.
# Also prints that the one-waker model accepts that mutant (why one waker was not enough).
# Exit 77 (CTest: skipped) when spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/spin_lib.sh"
spin_setup
model=$here/park_notify.pml
for sizes in "-DNPARKERS=1 -DROUNDS=1" "-DNPARKERS=1 -DROUNDS=2" "-DNPARKERS=2 -DROUNDS=1"; do
    spin_must_pass "two wakers $sizes" "$model" "-DWAKERS=2 $sizes"
    [ "$spin_failed" -eq 0 ] || spin_end
    spin_must_fail "two wakers -DBUG_NO_RETRY $sizes" "$model" "-DWAKERS=2 -DBUG_NO_RETRY $sizes"
done
# For the record, not a check: one waker cannot see the missing retry.
spin_verify "one waker -DBUG_NO_RETRY -DNPARKERS=2 (passes with one waker: informational)" "$model" "-DBUG_NO_RETRY -DNPARKERS=2" || true
spin_end
