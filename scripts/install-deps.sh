#!/usr/bin/env bash
# install-deps.sh — install what coopbench needs from Debian 12's packages, if missing.
# Uses apt-get directly as root, through sudo otherwise; says clearly when neither works.
#
#   scripts/install-deps.sh            everything: the build, every backend, the figures, and
#                                      what only the tests and cluster scripts use (scripts/test.sh)
#   scripts/install-deps.sh --for-run  what a sweep needs (the build, every backend, the figures):
#                                      scripts/run.sh; the tests' packages are named, not installed
# Nothing missing: exit 0 without apt-get, root or sudo (a user without root whose machine has
# the libraries builds and runs; on a cluster node Slurm and munge often come from source).
set -euo pipefail

for_run=no
case "${1:-}" in
  --for-run) for_run=yes ;;
  "") ;;
  *) echo "coopbench: install-deps.sh takes no argument or --for-run, got '$1'" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config git clang ccache
  libboost-context-dev libboost-fiber-dev
  libboost-dev  # Boost.Asio's headers: runtimes/asio (the asio backend of the I/O workloads)
  libbenchmark-dev libgtest-dev libgmock-dev  # gtest: the build configures the tests too
  libcli11-dev nlohmann-json3-dev libhwloc-dev
  python3 python3-pandas python3-matplotlib python3-scipy
  clang-14 llvm-14-dev  # plugin/: native-implicit and native-clang
  golang-go
  cargo librust-tokio-dev librust-serde-json-dev librust-serde-derive-dev  # runtimes/tokio: Debian's rustc 1.63 + crates, built offline
)
# Only the tests and the cluster scripts use these; no sweep does.
test_packages=(
  libbenchmark-tools  # Google's compare.py, which reads our benchmark.json (tests/harness/e2e.sh)
  spin  # the Spin models (tests/spin)
  chromium  # tests/scripts/test_report_browser.py: report.html opened in a real headless browser
  libpth-dev  # docs/examples/pth: the worked example of docs/adding-a-backend.md (tests/docs)
  slurm-wlm munge  # scripts/slurm/ and its test (tests/slurm/): a real one-node Slurm
  wrk  # tests/io/test_wrk.py: a second HTTP client (wrk 4.1) loads the http-hello servers
)

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
if [ $for_run = yes ]; then
  skipped=()
  for p in "${test_packages[@]}"; do installed "$p" || skipped+=("$p"); done
  if [ ${#skipped[@]} -gt 0 ]; then
    echo "coopbench: not installing ${skipped[*]}: only the tests and scripts/slurm use them (scripts/install-deps.sh installs them)" >&2
  fi
else
  packages+=("${test_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "coopbench: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "coopbench: cannot install ${missing[*]}: not root and no password-less sudo." >&2
  echo "coopbench: install them yourself: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
