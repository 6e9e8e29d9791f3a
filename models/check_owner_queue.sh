#!/bin/sh
# check_owner_queue.sh — verify models/owner_queue.pml with Spin: the OwnerQueue as units use
# it, as a future's waiter list, and the unit's lifetime with the hand-off to carriers must
# pass (Theorems 2 and 3, unit exclusion, every item dequeued / every waiter woken exactly
# once, nothing left behind, no access to the unit after the program saw its last result),
# and every mutant must be rejected (so the checks can fail). Exit 77 (CTest: skipped) when
# spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/spin_lib.sh"
spin_setup
SPIN_DEPTH=100000
SPIN_CFLAGS="-O2 -DVECTORSZ=4096"

model=$here/owner_queue.pml
spin_must_pass "owner queue, units (3 senders x 2 messages)" "$model" ""
spin_must_pass "owner queue, future waiter list (resolver + 3 waiters)" "$model" "-DFUTURE"
spin_must_pass "unit lifetime, hand-off to 2 carriers (2 senders x 2 messages)" "$model" "-DLIFETIME -DTHREADS=2"
spin_must_pass "unit lifetime, hand-off to 2 carriers (3 senders x 1 message)" "$model" "-DLIFETIME -DTHREADS=3 -DITEMS=1"
spin_must_fail "mutant: count before enqueue (Theorem 3)" "$model" "-DBUG_COUNT_FIRST"
spin_must_fail "mutant: deq_and_is_empty before the operation runs (unit exclusion)" "$model" "-DBUG_EARLY_DISOWN"
spin_must_fail "mutant: enq_and_was_empty tests c <= 1 (Theorem 2)" "$model" "-DBUG_OWNER_TEST"
spin_must_fail "mutant: waiter list without the producer's token (early wake-up)" "$model" "-DFUTURE -DBUG_NO_TOKEN"
spin_must_fail "mutant: result published before end_deq_and_is_empty (unit written after its last result)" "$model" "-DLIFETIME -DTHREADS=2 -DBUG_RESOLVE_BEFORE_END"
spin_end
