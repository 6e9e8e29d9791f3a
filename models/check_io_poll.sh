#!/bin/sh
# check_io_poll.sh — verify models/io_poll.pml (coop's I/O wait: the slot state machine with
# its commit in the task-switch finalizer, close's unblock, the poll token's Polling park and
# the eventfd poke) with Spin: the protocol must pass without and with a concurrent close
# (-DCLOSE): no invalid end state, i.e. no lost wake-up; each mutant must fail (see the
# model's comment). models/io_poll_birth.pml too: the poller's birth nudges a processor parked
# on its futex before it (its two mutants must fail).
# Exit 77 (CTest: skipped) when spin or a C compiler is missing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
model=$here/io_poll.pml
birth=$here/io_poll_birth.pml  # the poller's birth: a processor parked before it is nudged
. "$here/spin_lib.sh"
spin_setup
spin_must_pass "io_poll.pml" "$model" ""
spin_must_pass "io_poll.pml -DCLOSE" "$model" "-DCLOSE"
spin_must_pass "io_poll_birth.pml" "$birth" ""
[ "$spin_failed" -eq 0 ] || spin_end
spin_must_fail "io_poll.pml -DNO_REQUEUE" "$model" "-DNO_REQUEUE"
spin_must_fail "io_poll.pml -DNO_RECHECK" "$model" "-DNO_RECHECK"
spin_must_fail "io_poll.pml -DNO_POKE" "$model" "-DNO_POKE"
spin_must_fail "io_poll.pml -DCLOSE -DNO_CLOSE_RECHECK" "$model" "-DCLOSE -DNO_CLOSE_RECHECK"
spin_must_fail "io_poll_birth.pml -DNO_NUDGE" "$birth" "-DNO_NUDGE"
spin_must_fail "io_poll_birth.pml -DNO_BIRTH_RECHECK" "$birth" "-DNO_BIRTH_RECHECK"
spin_end
