#!/usr/bin/env bash
# install-deps.sh — install what coopbench needs from Debian 12's packages, if missing.
# Uses apt-get directly as root, through sudo otherwise; says clearly when neither works.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang ccache
  libboost-context-dev libboost-fiber-dev
  libboost-dev  # Boost.Asio's headers: runtimes/asio (the asio backend of the I/O workloads)
  libbenchmark-dev libgtest-dev libgmock-dev
  libbenchmark-tools  # Google's compare.py, which reads our benchmark.json (tests/harness/e2e.sh)
  libcli11-dev nlohmann-json3-dev libhwloc-dev
  python3 python3-pandas python3-matplotlib python3-scipy
  spin
  clang-14 llvm-14-dev
  golang-go
  cargo librust-tokio-dev librust-serde-json-dev librust-serde-derive-dev  # runtimes/tokio: Debian's rustc 1.63 + crates, built offline
  libpth-dev  # docs/examples/pth: the worked example of docs/adding-a-backend.md (tests/docs)
  slurm-wlm munge  # scripts/slurm/ and its test (tests/slurm/): a real one-node Slurm
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
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
