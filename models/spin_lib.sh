# spin_lib.sh — the Spin boilerplate of models/check_*.sh, sourced by them (`. "$here/spin_lib.sh"`).
#
#   spin_setup                  spin and a C compiler must be installed (else exit 77: CTest's
#                               "skipped"); makes a scratch folder the current one, removed at exit.
#   spin_verify NAME MODEL DEFINES
#                               spin -a DEFINES MODEL, cc, pan; prints "NAME: errors=E states=S"
#                               and returns E (at most 100, so it fits an exit status); exits 1
#                               when spin or cc fail, pan gives no result, or its search depth
#                               was too small (a search cut short proves nothing).
#   spin_must_pass NAME MODEL DEFINES
#                               the model must hold; else pan's output, "FAIL: ...", spin_failed=1.
#   spin_must_fail NAME MODEL DEFINES
#                               a mutant: Spin must find a violation (so the check can fail);
#                               prints the first one; else "FAIL: ...", spin_failed=1. pan.c is
#                               compiled at -O0 here: the search stops at the first violation,
#                               within a second, while -O2 takes 6x the compile (local_park.pml
#                               under TSO: 8.6 s of CPU against 1.4).
#   spin_end                    prints PASS and exits 0 when nothing failed, else exits 1.
#
# Settings (set before the call): SPIN_DEPTH, pan's -m (default 200000); SPIN_CFLAGS, the flags
# pan.c is compiled with (default "-O2 -DVECTORSZ=4096"; -DCOLLAPSE for the larger models).
spin_failed=0

spin_setup() {
    spin=$(command -v spin) || { echo "spin not installed: skipped"; exit 77; }
    cc=$(command -v cc || command -v gcc || command -v clang) || { echo "no C compiler: skipped"; exit 77; }
    spin_work=$(mktemp -d) || exit 1
    trap 'rm -rf "$spin_work"' EXIT
    cd "$spin_work" || exit 1
}

spin_verify() {
    rm -f pan pan.* _spin_nvr.tmp ./*.trail
    # $3 unquoted on purpose: a list of -D flags.
    "$spin" -a $3 "$2" > spin.log 2>&1 || { cat spin.log; echo "$1: spin -a failed"; exit 1; }
    # $spin_cc_opt last, so that its -O wins (spin_must_fail's -O0).
    "$cc" ${SPIN_CFLAGS:--O2 -DVECTORSZ=4096} ${spin_cc_opt:-} -o pan pan.c > cc.log 2>&1 || { cat cc.log; echo "$1: cc failed"; exit 1; }
    ./pan -m"${SPIN_DEPTH:-200000}" > pan.log 2>&1
    errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.log | head -n1)
    states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.log | head -n1)
    echo "$1: errors=$errors states=$states"
    [ -n "$errors" ] || { cat pan.log; echo "$1: no result from pan"; exit 1; }
    if grep -q "max search depth too small" pan.log; then echo "$1: search depth too small"; exit 1; fi
    [ "$errors" -gt 100 ] && errors=100
    return "$errors"
}

spin_must_pass() {
    if ! spin_verify "$1" "$2" "$3"; then
        cat pan.log; echo "FAIL: $1 violates a property"; spin_failed=1
    fi
}

spin_must_fail() {
    spin_cc_opt=-O0
    if spin_verify "$1 (must fail)" "$2" "$3"; then
        echo "FAIL: the model did not reject $1"; spin_failed=1
    else
        grep -m1 -E "assertion violated|invalid end state" pan.log
    fi
    spin_cc_opt=
}

spin_end() {
    [ "$spin_failed" -eq 0 ] && echo "PASS"
    exit "$spin_failed"
}
