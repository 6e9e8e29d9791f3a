#!/usr/bin/env python3
"""check_examples.py SOURCE_DIR — every code example in a README or a header comment is
compiled: each C++ block of a README.md (```c++ / ```cpp) and each `// Example:` block of a
header comment must appear, line for line (whitespace and comment markers aside), in a
file under docs/examples/, which the build compiles (tests/docs/CMakeLists.txt) and runs.
Exit 1 with the blocks that are not, so an example cannot drift from code that compiles."""
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1])
skip = ("build", ".git", "results")


def norm(lines):
    out = []
    for line in lines:
        line = line.strip()
        if line:
            out.append(re.sub(r"\s+", " ", line))
    return out


def readme_blocks():
    for md in src.rglob("README.md"):
        if any(part in skip for part in md.relative_to(src).parts[:1]):
            continue
        lines = md.read_text().splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"^\s*```(c\+\+|cpp)\s*$", lines[i]):
                j = i + 1
                while j < len(lines) and not lines[j].strip().startswith("```"):
                    j += 1
                yield f"{md.relative_to(src)}:{i + 1}", lines[i + 1:j]
                i = j
            i += 1


def header_blocks():
    for ext in ("*.hpp", "*.h", "*.cpp"):
        for f in src.rglob(ext):
            rel = f.relative_to(src)
            if rel.parts[0] in skip or rel.parts[0] == "docs":
                continue
            lines = f.read_text(errors="replace").splitlines()
            for i, line in enumerate(lines):
                if re.match(r"^\s*//\s*Example\b.*:\s*$", line):
                    block = []
                    for nxt in lines[i + 1:]:
                        m = re.match(r"^\s*//(\s{2,}.*)$", nxt)
                        if not m:
                            break
                        block.append(m.group(1))
                    yield f"{rel}:{i + 1}", block


examples = []
for f in sorted((src / "docs" / "examples").glob("*.cpp")):
    examples.append(norm(f.read_text().splitlines()))


def compiled(block):
    b = norm(block)
    if not b:
        return True
    for ex in examples:
        for k in range(len(ex) - len(b) + 1):
            if ex[k:k + len(b)] == b:
                return True
    return False


missing = []
count = 0
for where, block in list(readme_blocks()) + list(header_blocks()):
    count += 1
    if not compiled(block):
        missing.append(where + ":\n    " + "\n    ".join(block))
if missing:
    print(f"{len(missing)} of {count} code examples are not in a compiled file under docs/examples/:")
    print("\n".join(missing))
    sys.exit(1)
print(f"all {count} code examples are compiled (docs/examples/)")
