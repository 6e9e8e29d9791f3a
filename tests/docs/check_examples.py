#!/usr/bin/env python3
"""check_examples.py SOURCE_DIR — every code example in a README or a header comment is
compiled: each C++ block of a README.md or of a page docs/*.md (```c++ / ```cpp) and
each `// Example` block of a header comment (colon or not) must appear, line for line (whitespace and
comment markers aside), in a C++ file under docs/examples/ (any depth), which the build
compiles (tests/docs/CMakeLists.txt) and runs; each CMake block (```cmake) of those pages
must appear in a CMakeLists.txt or *.cmake file of the tree that a build or test reads.
Exit 1 with the blocks that are not, so an example cannot drift from code that compiles."""
import pathlib
import re
import sys

src = pathlib.Path(sys.argv[1])
skip = ("build", ".git", "results")
# docs/ pages whose every C++ and CMake block is checked: all of them.
DOC_PAGES = tuple(sorted(str(p.relative_to(src)) for p in (src / "docs").glob("*.md")))


def norm(lines):
    out = []
    for line in lines:
        line = line.strip()
        if line:
            out.append(re.sub(r"\s+", " ", line))
    return out


def pages():
    for md in src.rglob("README.md"):
        if any(part in skip for part in md.relative_to(src).parts[:1]):
            continue
        yield md
    for page in DOC_PAGES:
        if (src / page).exists():
            yield src / page


def fenced_blocks(lang_re):
    for md in pages():
        lines = md.read_text().splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"^\s*```(" + lang_re + r")\s*$", lines[i]):
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
                if re.match(r"^\s*//\s*Example\b", line):  # with or without a colon
                    block = []
                    for nxt in lines[i + 1:]:
                        m = re.match(r"^\s*//(\s{2,}.*)$", nxt)
                        if not m:
                            break
                        block.append(m.group(1))
                    yield f"{rel}:{i + 1}", block


examples = []
for ext in ("*.cpp", "*.hpp"):
    for f in sorted((src / "docs" / "examples").rglob(ext)):
        examples.append(norm(f.read_text().splitlines()))

cmake_files = []
for pattern in ("CMakeLists.txt", "*.cmake"):
    for f in sorted(src.rglob(pattern)):
        if f.relative_to(src).parts[0] not in skip:
            cmake_files.append(norm(f.read_text().splitlines()))


def compiled(block, files=None):
    b = norm(block)
    if not b:
        return True
    for ex in examples if files is None else files:
        for k in range(len(ex) - len(b) + 1):
            if ex[k:k + len(b)] == b:
                return True
    return False


missing = []
count = 0
for where, block in list(fenced_blocks(r"c\+\+|cpp")) + list(header_blocks()):
    count += 1
    if not compiled(block):
        missing.append(where + ":\n    " + "\n    ".join(block))
for where, block in fenced_blocks("cmake"):
    count += 1
    if not compiled(block, cmake_files):
        missing.append(where + " (CMake, in no CMakeLists.txt or *.cmake):\n    " + "\n    ".join(block))
if missing:
    print(f"{len(missing)} of {count} code examples are not in a compiled file under docs/examples/:")
    print("\n".join(missing))
    sys.exit(1)
print(f"all {count} code examples are compiled (docs/examples/)")
