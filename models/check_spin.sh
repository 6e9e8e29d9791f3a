#!/bin/sh
# check_spin.sh MODEL.pml MUTANT_DEFINE — verify a Spin model: the protocol must pass (no
# assertion violated, no invalid end state) and the mutant built with -DMUTANT_DEFINE must
# fail (so the check can fail). Exit 77 (CTest: skipped) when spin or a C compiler is
# missing. Used for models/park_notify.pml (mutant OLD_PROTOCOL) and, through
# check_owner_guard.sh and check_channel.sh, owner_guard.pml and channel.pml.
set -u
[ $# -eq 2 ] || { echo "usage: check_spin.sh MODEL.pml MUTANT_DEFINE" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
model=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
. "$here/spin_lib.sh"
spin_setup
name=$(basename "$model")
spin_must_pass "$name" "$model" ""
[ "$spin_failed" -eq 0 ] || spin_end
spin_must_fail "$name -D$2" "$model" "-D$2"
spin_end
