#!/usr/bin/env python3
# mk.py NAME FILE OLD NEW [FILE OLD NEW ...] — writes tests/mutants/NAME.patch: the unified
# diff (patch -p1 at the repository root) of exact replacements in today's files. Each OLD
# must occur exactly once in its FILE. The working tree is not changed. A mutant whose
# patch no longer applies (run.sh says so) is regenerated with the same replacements.
import difflib, pathlib, sys

root = pathlib.Path(__file__).resolve().parents[2]
args = sys.argv[1:]
if len(args) < 4 or (len(args) - 1) % 3:
    sys.exit("usage: mk.py NAME FILE OLD NEW [FILE OLD NEW ...]")
name, edits = args[0], args[1:]
new_text = {}
for f, old, new in zip(edits[0::3], edits[1::3], edits[2::3]):
    s = new_text.get(f) or (root / f).read_text()
    n = s.count(old)
    if n != 1:
        sys.exit(f"{name}: {old!r} occurs {n} times in {f}")
    new_text[f] = s.replace(old, new)
out = []
for f, s in new_text.items():
    a = (root / f).read_text().splitlines(keepends=True)
    b = s.splitlines(keepends=True)
    out.append(f"diff --git a/{f} b/{f}\n")
    out.extend(difflib.unified_diff(a, b, f"a/{f}", f"b/{f}", n=3))
(root / "tests" / "mutants" / f"{name}.patch").write_text("".join(out))
print(name, sum(1 for l in out if l[:1] in "+-" and l[:3] not in ("+++", "---")), "changed lines")
