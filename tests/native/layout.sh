#!/bin/sh
# layout.sh SOURCE_DIR — coop is laid out as a library, and the backends as backends:
#   1. coop/include/coop/ holds coop's public headers, which include (with quotes) only each
#      other, by file name: the include root alone is all a program using coop needs;
#   2. nothing in coop/ includes a file of the harness, the backends, the workloads, the
#      tests or the other libraries of this repository: coop's folder holds coop only;
#   3. no backend (runtimes/) includes a workload (workloads/).
# Prints every offending line and exits 1; exits 0 when all hold.
set -eu
src=$1
cd "$src"
bad=0
for h in coop/include/coop/*.hpp; do
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$h"); do
    if [ ! -f "coop/include/coop/$inc" ]; then
      echo "FAIL: $h includes \"$inc\", which is not a header beside it in coop's include root"; bad=1
    fi
  done
done
if grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](harness|runtimes|workloads|tests|units|locks|plugin)/' coop; then
  echo "FAIL: a file of coop includes one of the harness, the backends, the workloads or the tests (above)"; bad=1
fi
if grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]workloads/' runtimes; then
  echo "FAIL: a backend includes a workload (above)"; bad=1
fi
[ $bad = 0 ] && echo "PASS: coop's folder holds coop only, its include root is whole; no backend includes a workload"
exit $bad
