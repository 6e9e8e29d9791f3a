#!/usr/bin/env python3
"""check_plugin.py — checks the CoopQuantum plugin's placement (sample.cpp -> IR) and that
coop's runtime contains no quantum check (libcoop's objects; coop's functions in an
instrumented object). Exit 0 when every expectation holds, 1 with a list of failures."""
import argparse
import re
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--clang", required=True)
ap.add_argument("--plugin", required=True)
ap.add_argument("--sample", required=True)
ap.add_argument("--libcoop", required=True)
ap.add_argument("--instrumented", required=True)
ap.add_argument("--source-dir", required=True)
a = ap.parse_args()
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# 1. The placement rules on sample.cpp (IR after the whole -O2 pipeline).
def compile_ir(*options):
    with tempfile.NamedTemporaryFile(suffix=".ll") as ll:
        # -load as well, so that -mllvm knows the plugin's options.
        subprocess.run([a.clang, "-O2", "-std=c++20", "-fno-discard-value-names", "-Xclang", "-load", "-Xclang",
                        a.plugin, "-fpass-plugin=" + a.plugin, *options, "-S", "-emit-llvm", a.sample, "-o",
                        ll.name], check=True)
        text = open(ll.name).read()
    fns = {}
    for m in re.finditer(r"^define ([^@]*)@(\"?[\w.$]+\"?)\(.*?^}", text, re.S | re.M):
        fns[m.group(2)] = (m.group(1), m.group(0))
    return text, fns


ir, functions = compile_ir()
_, no_unroll = compile_ir("-mllvm", "-coop-quantum-unroll=1")


def body(name, fns=None):
    return (fns or functions).get(name, ("", ""))[1]


def checks(name, fns=None):
    return body(name, fns).count("call void @coop_quantum_expired()")


expect("leaf" in functions and checks("leaf") == 0, "leaf function without loops: no check")
short_loads = body("short_loop").count("load i32, i32*")
expect(checks("short_loop") >= 1 and "coop.chunk" not in body("short_loop") and short_loads >= 4,
       "short loop: unrolled (%d loads of a[i]), one check per unrolled body" % short_loads)
expect(checks("short_loop", no_unroll) >= 1 and "coop.chunk" in body("short_loop", no_unroll),
       "short loop that is not unrolled (-coop-quantum-unroll=1): chunked check")
expect(checks("long_loop") >= 1 and "coop.chunk" not in body("long_loop"), "long loop: a check per iteration")
expect(checks("caller") == 1, "non-leaf function: entry check")
expect(checks("callee_checked") == 1, "callee: entry check")
expect(checks("loop_calls_checked") == 1, "loop always calling a checked function: no latch check, entry only")
expect("annotated_uncooperative" in functions and checks("annotated_uncooperative") == 0,
       "annotate(\"coop_uncooperative\"): no check")
rt = [n for n in functions if n.startswith("_ZN4coop")]
expect(rt and all(checks(n) == 0 for n in rt), "coop:: functions: no check")
inl = [n for n in functions if "inline_checked" in n]
expect(inl and checks(inl[0]) >= 1 and "internal" in functions[inl[0]][0],
       "instrumented inline function: checked and internal")
expect("@coop_quantum_left = external thread_local(initialexec) global i32" in ir,
       "the counter is initial-exec TLS")

# 2. libcoop: no object but quantum.cpp's mentions the slow path (no check in the runtime).
nm = subprocess.run(["nm", "-A", a.libcoop], check=True, capture_output=True, text=True).stdout
users = sorted({line.split(":")[1] for line in nm.splitlines()
                if re.search(r"\s[Uu]\s+coop_quantum_expired$", line)})
expect(users == [], "libcoop's objects call no check (references: %s)" % users)
defs = [line for line in nm.splitlines() if re.search(r"\sT\s+coop_quantum_expired$", line)]
expect(len(defs) == 1 and "quantum" in defs[0], "coop_quantum_expired is defined once, in quantum.cpp")

# 3. An instrumented object: coop's own functions (but the activity body Closure<F>::run)
# contain no call of the slow path; the workload's functions do.
dis = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", a.instrumented], check=True,
                     capture_output=True, text=True).stdout
per_fn = {}
current = None
for line in dis.splitlines():
    m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
    if m:
        current = m.group(1)
        per_fn[current] = 0
    elif current and "coop_quantum_expired" in line:
        per_fn[current] += 1
coop_fns = [f for f in per_fn if re.match(r"_ZN?K?4coop|_ZZN?K?4coop", f) and "ClosureI" not in f]
expect(coop_fns != [], "the instrumented object has coop functions to inspect")
bad = [f for f in coop_fns if per_fn[f] > 0]
expect(bad == [], "coop's functions in instrumented code contain no check (%s)" % bad)
bodies = [f for f in per_fn if "ClosureI" in f and "Mandelbrot" in f]
expect(bodies != [] and all(per_fn[f] > 0 for f in bodies),
       "the instrumented activity bodies of mandelbrot contain checks (%d bodies)" % len(bodies))

if failures:
    print("%d expectation(s) failed" % len(failures))
    sys.exit(1)
