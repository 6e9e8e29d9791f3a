#!/bin/sh
# check_channel.sh — verify models/channel.pml (coop::Channel's park / hand-off / close) with
# Spin (check_spin.sh): the protocol must pass (every value exactly once or its send threw,
# no invalid end state = no lost wake-up, close wakes everyone, no early wake-up), and each
# mutant must fail, so the check can fail: -DBUG_WAKE_UNCONDITIONAL, -DBUG_FINALIZER_NO_WAKE,
# -DBUG_WAKE_BEFORE_COPY, -DBUG_CLOSE_FLAG_LATE, -DBUG_RECV_NO_REFILL (see the model's
# comment). Exit 77 (CTest:
# skipped) when spin or a C compiler is missing.
here=$(cd "$(dirname "$0")" && pwd)
sh "$here/check_spin.sh" "$here/channel.pml" BUG_WAKE_UNCONDITIONAL || exit $?
sh "$here/check_spin.sh" "$here/channel.pml" BUG_FINALIZER_NO_WAKE || exit $?
sh "$here/check_spin.sh" "$here/channel.pml" BUG_WAKE_BEFORE_COPY || exit $?
sh "$here/check_spin.sh" "$here/channel.pml" BUG_CLOSE_FLAG_LATE || exit $?
exec sh "$here/check_spin.sh" "$here/channel.pml" BUG_RECV_NO_REFILL
