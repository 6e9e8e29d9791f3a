#!/bin/sh
# check_owner_guard.sh — verify models/owner_guard.pml with Spin (check_spin.sh): the protocol
# must pass (mutual exclusion, no invalid end state = no lost waiter), and each mutant must
# fail, so the check can fail: -DBUG_NO_RECHECK (the owner does not re-check nw after clearing
# ow), -DBUG_TRY_NO_CHECK_QUEUE (a giving-up thief clears nw without Check_Queue) and
# -DBUG_OWAIT_EARLY (owner_waiting set before the owner's check of nw). Exit 77
# (CTest: skipped) when spin or a C compiler is missing.
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/check_spin.sh" "$here/owner_guard.pml" BUG_NO_RECHECK || exit $?
sh "$here/check_spin.sh" "$here/owner_guard.pml" BUG_TRY_NO_CHECK_QUEUE || exit $?
exec sh "$here/check_spin.sh" "$here/owner_guard.pml" BUG_OWAIT_EARLY
