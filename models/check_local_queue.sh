#!/bin/sh
# check_local_queue.sh — verify models/local_queue.pml with Spin: the ring (owner push /
# push_next / pop / runnext pick against thieves that steal_into rings of their own, steal
# from each other, and push items again) must take every push exactly once at several sizes,
# and each mutant must be rejected (so the check can fail). About 65 s and 0.9 GB at most.
# Exit 77 (CTest: skipped) when spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/spin_lib.sh"
spin_setup
SPIN_DEPTH=100000
SPIN_CFLAGS="-O2 -DVECTORSZ=4096 -DCOLLAPSE"

verify() {  # verify NAME DEFINES -> spin_verify on local_queue.pml
    spin_verify "$1" "$here/local_queue.pml" "$2"
}

fail=0
# Sizes (each exhaustive): re-push (a yield or a wake into runnext) with rings of CAP 2 and 4;
# two thieves stealing from each other (one with re-push, one where the victim thief's ring
# holds a copied item); the room limit reached (ITEMS=5 so that a full thief ring meets a
# victim with 3 items; the owner only pushes there, which keeps the space small).
for sizes in "-DCAP=2 -DTCAP=2 -DITEMS=3 -DTHIEVES=1 -DSTEALS=2 -DREPUSH=1" \
             "-DCAP=4 -DTCAP=2 -DITEMS=4 -DTHIEVES=1 -DSTEALS=2 -DREPUSH=1" \
             "-DCAP=2 -DTCAP=2 -DITEMS=2 -DTHIEVES=2 -DSTEALS=1 -DREPUSH=1" \
             "-DCAP=4 -DTCAP=2 -DITEMS=3 -DTHIEVES=2 -DSTEALS=1 -DREPUSH=0" \
             "-DOWNER_PUSHES_ONLY -DCAP=4 -DTCAP=2 -DITEMS=5 -DTHIEVES=1 -DSTEALS=2 -DREPUSH=1"; do
    verify "ring $sizes" "$sizes" || { cat pan.log; echo "FAIL: the ring lost or duplicated an item ($sizes)"; fail=1; }
done
small="-DCAP=4 -DTCAP=2 -DITEMS=3 -DTHIEVES=1 -DSTEALS=2 -DREPUSH=1"
for mutant in "BUG_POP_NO_CAS $small" "BUG_STEAL_NO_CAS $small" "BUG_TAIL_BEFORE_SLOT $small" \
              "BUG_RUNNEXT_PLAIN_TAKE $small" \
              "BUG_THIEF_TAIL_BEFORE_COPY -DCAP=4 -DTCAP=2 -DITEMS=3 -DTHIEVES=2 -DSTEALS=1 -DREPUSH=0" \
              "BUG_STEAL_NO_ROOM -DOWNER_PUSHES_ONLY -DCAP=4 -DTCAP=2 -DITEMS=5 -DTHIEVES=1 -DSTEALS=2 -DREPUSH=1"; do
    bug=${mutant%% *}; sizes=${mutant#* }
    spin_cc_opt=-O0  # a mutant's search stops at its first violation: compile pan fast (spin_lib.sh)
    if verify "mutant $bug (must fail)" "-D$bug $sizes"; then
        echo "FAIL: the model did not catch mutant $bug"; fail=1
    else
        grep -m1 -E "assertion violated" pan.log
    fi
done
spin_cc_opt=
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
