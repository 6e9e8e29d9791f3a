#!/bin/sh
# check_owner_guard.sh — verify models/owner_guard.pml with Spin (check_spin.sh): the protocol
# must pass (mutual exclusion, no invalid end state = no lost waiter), and the variant without
# the owner's re-check (-DBUG_NO_RECHECK) must fail, so the check can fail. Exit 77 (CTest:
# skipped) when spin or a C compiler is missing.
here=$(cd "$(dirname "$0")" && pwd)
exec sh "$here/check_spin.sh" "$here/owner_guard.pml" BUG_NO_RECHECK
