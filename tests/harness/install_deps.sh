#!/usr/bin/env bash
# install_deps.sh SOURCE_DIR — scripts/run.sh's `install-deps.sh --for-run` installs nothing a
# sweep does not need: with every package present but the tests' (Slurm, munge, Spin, Pth, as on
# a cluster node where Slurm came from source) it exits 0 without apt-get or sudo and names what
# it skipped; plain install-deps.sh (scripts/test.sh) still installs them. dpkg-query, apt-get
# and sudo are fakes on PATH that record their calls, so nothing is installed.
set -euo pipefail
src=$1
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
cat > "$fake/dpkg-query" <<'SH'
#!/bin/sh
for a in "$@"; do case "$a" in spin|libpth-dev|slurm-wlm|munge) exit 1 ;; esac; done
echo "install ok installed"
SH
cat > "$fake/apt-get" <<SH
#!/bin/sh
echo "apt-get \$*" >> "$fake/calls"
SH
cat > "$fake/sudo" <<SH
#!/bin/sh
[ "\$1" = -n ] && shift
[ "\$1" = true ] && exit 0
echo "sudo \$*" >> "$fake/calls"
exec "\$@"
SH
chmod +x "$fake"/*
err=$(PATH="$fake:$PATH" bash "$src/scripts/install-deps.sh" --for-run 2>&1) || { echo "FAIL: --for-run exited $?: $err"; exit 1; }
if [ -e "$fake/calls" ]; then echo "FAIL: --for-run ran: $(cat "$fake/calls")"; exit 1; fi
case "$err" in
  *"not installing spin libpth-dev slurm-wlm munge"*) ;;
  *) echo "FAIL: --for-run did not say what it skipped: '$err'"; exit 1 ;;
esac
grep -q -- "install-deps.sh --for-run" "$src/scripts/run.sh" || { echo "FAIL: scripts/run.sh does not use --for-run"; exit 1; }
PATH="$fake:$PATH" bash "$src/scripts/install-deps.sh" >/dev/null 2>&1 || true
grep -q "install .*spin libpth-dev slurm-wlm munge" "$fake/calls" ||
  { echo "FAIL: plain install-deps.sh did not install the tests' packages: $(cat "$fake/calls" 2>/dev/null)"; exit 1; }
echo "ok"
