#!/usr/bin/env python3
"""syntax_check.py — compile every translation unit of a configured build folder that the
build did not compile, with -fsyntax-only, so that its warnings (errors under -Werror) are
reported without generating code.

    scripts/syntax_check.py build/clang --built-by runtime_tests [-j N]

Why: scripts/test.sh's clang stage runs only the runtime's tests (label `runtime`), so it
builds only their targets at -O3; the rest of the project must still be warning-free under
clang. Clang's warnings come from its front end (parsing, semantic analysis and template
instantiation, all of which -fsyntax-only does), not from the optimiser, so -fsyntax-only
reports the same warnings as a full -O3 compile at a fraction of the cost (clang 14:
tests/harness/test_driver.cpp 15 s against 78 s of CPU; tests/apps/test_apps.cpp 8 against 70).

Reads the folder's compile_commands.json (CMAKE_EXPORT_COMPILE_COMMANDS); a unit that the
target named by --built-by compiles (its object is an output of one of the commands that
`ninja -t commands TARGET` lists: the target's whole closure, up to date or not) is skipped:
building the target compiled it with these flags and -Werror. Exit 0 when every
unit passed, 1 when one failed (its diagnostics are printed), 2 for bad input.
"""
import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys


def built_objects(build: str, target: str) -> set:
    """The object files that building TARGET compiles (absolute paths)."""
    r = subprocess.run(["ninja", "-C", build, "-t", "commands", target], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"syntax_check.py: ninja -t commands {target} failed: {r.stderr.strip()}")
    objects = set()
    for line in r.stdout.splitlines():
        try:
            args = shlex.split(line)
        except ValueError:
            continue
        if "-o" in args[:-1]:
            objects.add(os.path.normpath(os.path.join(build, args[args.index("-o") + 1])))
    return objects


def units(build: str, skip: set):
    """(directory, arguments, file) of every unit whose object is not in skip."""
    path = os.path.join(build, "compile_commands.json")
    try:
        with open(path) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"syntax_check.py: cannot read {path}: {e}")
    for e in entries:
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        if os.path.basename(args[0]) == "ccache":
            args = args[1:]
        if "-o" not in args:
            continue
        i = args.index("-o")
        if os.path.normpath(os.path.join(e["directory"], args[i + 1])) in skip:
            continue
        del args[i:i + 2]
        yield e["directory"], args + ["-fsyntax-only"], e["file"]


def check(unit):
    directory, args, file = unit
    r = subprocess.run(args, cwd=directory, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return file, r.returncode, r.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="a configured build folder (has compile_commands.json)")
    ap.add_argument("--built-by", metavar="TARGET", help="skip the units that building TARGET compiles")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1, help="parallel compiles (default: the processors)")
    a = ap.parse_args()
    if a.j < 1:
        print("syntax_check.py: -j must be at least 1", file=sys.stderr)
        return 2
    build = os.path.abspath(a.build)
    todo = list(units(build, built_objects(build, a.built_by) if a.built_by else set()))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        for file, rc, out in pool.map(check, todo):
            if rc != 0 or out.strip():
                print(out, end="")
            if rc != 0:
                failed += 1
                print(f"syntax_check.py: {file}: failed", file=sys.stderr)
    print(f"syntax_check.py: {len(todo) - failed} of {len(todo)} units passed -fsyntax-only",
          file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
