#!/usr/bin/env python3
"""locked_count.py — static count of locked instructions (lock-prefixed and xchg with memory)
in the functions of a binary whose demangled name contains a pattern, including the inlined
code (not the callees). Used beside callgrind's dynamic instruction counts
(tests/native_ws/callgrind_ring.cpp; docs/scaling-model.md).

Usage: locked_count.py BINARY PATTERN     e.g. locked_count.py build/release/tests/native_ws/native_ws_callgrind one_
Exit: 0 ok, 2 bad arguments or objdump failed.
"""
import re
import subprocess
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: locked_count.py BINARY PATTERN", file=sys.stderr)
        return 2
    binary, pattern = sys.argv[1], sys.argv[2]
    try:
        out = subprocess.run(["objdump", "-d", "-C", "--no-show-raw-insn", binary],
                             check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"locked_count.py: objdump failed on {binary}: {e}", file=sys.stderr)
        return 2
    name = None
    counts = {}
    header = re.compile(r"^[0-9a-f]+ <(.*)>:$")
    for line in out.splitlines():
        m = header.match(line)
        if m:
            name = m.group(1) if pattern in m.group(1) else None
            if name:
                counts[name] = [0, 0]
            continue
        if name is None or not line.strip():
            continue
        ins = line.split("\t")[-1].strip() if "\t" in line else line.strip()
        counts[name][1] += 1
        if ins.startswith("lock") or (ins.startswith("xchg") and "(" in ins):
            counts[name][0] += 1
    for n, (locked, total) in counts.items():
        print(f"{locked:3d} locked / {total:4d} static instructions  {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
