#!/bin/sh
# backends_doc.sh COOPBENCH SOURCE_DIR — docs/backends.md names every backend the binary
# registers, with every option it declares, so the page cannot fall behind the registry:
#   - each backend NAME has a row of the page's summary table: a line starting "| `NAME` |";
#   - each option KEY (--backend-opt) has a row of an options table, a line starting
#     "| `KEY` |" whose second column (the default) shows `DEFAULT`;
#   - each fixed option of a variant appears as `KEY=VALUE`.
# The registry is read from `coopbench list --json` (parsed by /usr/bin/python3), else from
# the text of `coopbench list`. Only the build's own backends count: COOPBENCH_BACKENDS
# (a user's external manifests) is unset. Exit 1 naming everything missing; 0 otherwise.
set -u
bin=$1
src=$2
page=$src/docs/backends.md
[ -r "$page" ] || { echo "FAIL: $page not found"; exit 1; }
unset COOPBENCH_BACKENDS

# records — one line per fact: "backend NAME", "option NAME KEY DEFAULT", "fixed NAME KEY=VALUE".
records() {
  if [ -x /usr/bin/python3 ]; then
    "$bin" list --json | /usr/bin/python3 -c '
import json, sys
for b in json.load(sys.stdin).get("backends", []):
    print("backend", b["name"])
    for o in b.get("options") or []:
        print("option", b["name"], o["name"], o.get("default", ""))
    for k, v in sorted((b.get("fixed_options") or {}).items()):
        print("fixed", b["name"], k + "=" + v)
'
  else
    "$bin" list | awk '
      /^Backends / { on = 1; next }
      on && /^$/ { exit }
      on && /^  [^ ]/ { name = $1; print "backend", name; next }
      on && /^      --backend-opt / { split($2, kv, "="); d = kv[2]; if (d == "...") d = "";
                                      print "option", name, kv[1], d; next }
      on && /^      fixed option / { print "fixed", name, $3 }'
  fi
}

facts=$(records) || { echo "FAIL: $bin list failed"; exit 1; }
[ -n "$facts" ] || { echo "FAIL: $bin list gave no backends"; exit 1; }

missing=0
backends=0
# row PREFIX — the page's lines that start with PREFIX (a table row), as they are.
row() { awk -v p="$1" 'index($0, p) == 1' "$page"; }
# A here-document keeps the loop in this shell (a pipe would run it in a subshell).
while read -r kind name what default; do
  case $kind in
    backend)
      backends=$((backends + 1))
      if [ -z "$(row "| \`$name\` |")" ]; then
        echo "MISSING: backend $name: no table row starting \"| \`$name\` |\" in docs/backends.md"
        missing=$((missing + 1))
      fi ;;
    option)
      rows=$(row "| \`$what\` |")
      if [ -z "$rows" ]; then
        echo "MISSING: option $what of backend $name: no table row starting \"| \`$what\` |\" in docs/backends.md"
        missing=$((missing + 1))
      elif [ -n "$default" ] &&
           ! printf '%s\n' "$rows" | awk -F'|' -v d="\`$default\`" 'index($3, d) { f = 1 } END { exit !f }'; then
        echo "MISSING: option $what of backend $name: its row's default column does not show \`$default\`"
        missing=$((missing + 1))
      fi ;;
    fixed)
      if ! grep -qF "\`$what\`" "$page"; then
        echo "MISSING: fixed option $what of backend $name: \`$what\` not in docs/backends.md"
        missing=$((missing + 1))
      fi ;;
  esac
done <<EOF
$facts
EOF

if [ "$missing" -ne 0 ]; then
  echo "FAIL: docs/backends.md lacks $missing item(s) of the $backends registered backends (see above)"
  exit 1
fi
echo "PASS: docs/backends.md lists all $backends registered backends, their options and fixed options"
