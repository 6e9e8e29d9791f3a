#!/usr/bin/env python3
"""check_plugin.py — checks the CoopQuantum plugin's placement (sample.cpp -> IR) and that
coop's runtime contains no quantum check (libcoop's objects; coop's functions in an
instrumented object). Exit 0 when every expectation holds, 1 with a list of failures."""
import argparse
import os
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
ap.add_argument("--binary", action="append", default=[],
                help="a linked program: no check in coop's or the ABI's functions")
ap.add_argument("--opt", help="opt-14, for --irreducible")
ap.add_argument("--o0-source", help="a coop program compiled at -O0 and -O2: nothing coop's code calls is checked")
ap.add_argument("--irreducible", help="IR whose every cycle must pass a quantum decrement")
ap.add_argument("--debug-source", help="a program with split shared functions (vtable_mix.cpp): compiled with -g, "
                "the IR passes opt -verify (the split keeps debug info whole)")
ap.add_argument("--warnings-source", help="warnings.cpp: each warn_* function draws one warning, quiet_* none")
a = ap.parse_args()
# The repository root and coop's include root (coop/include: "coop/coop.hpp").
includes = ["-I", a.source_dir, "-I", os.path.join(a.source_dir, "coop", "include")]
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
expect(checks("short_loop") >= 1 and short_loads >= 4,
       "short loop: unrolled (%d loads of a[i]), one check per unrolled body" % short_loads)
pragma_loads = body("pragma_no_unroll").count("load i32, i32* %")
expect("coop.chunk" in body("pragma_no_unroll") and pragma_loads == 1,
       "#pragma clang loop unroll(disable): not unrolled (%d loads), chunked check" % pragma_loads)
expect(checks("short_loop", no_unroll) >= 1 and "coop.chunk" in body("short_loop", no_unroll),
       "short loop that is not unrolled (-coop-quantum-unroll=1): chunked check")
expect(checks("long_loop") >= 1 and "coop.chunk" not in body("long_loop"), "long loop: a check per iteration")
expect(checks("caller") == 1, "non-leaf function: entry check")
expect(checks("callee_checked") == 1, "callee: entry check")
expect(checks("loop_calls_checked") == 1, "loop always calling a checked function: no latch check, entry only")
expect(body("loop_calls_checked").count("store i32 %coop.q.left") == 2,
       "loop always calling a checked function: its own instructions charged at the latch (decrement, no branch)")
expect("annotated_uncooperative" in functions and checks("annotated_uncooperative") == 0,
       "annotate(\"coop_uncooperative\"): no check")
expect("on_signal" in functions and checks("on_signal") == 0 and "on_sigaction" in functions and
       checks("on_sigaction") == 0, "signal handlers (signal(), sigaction()): no check")
expect(all(n in functions and checks(n) == 0 for n in ("on_helper_signal", "on_helper_sigaction")),
       "signal handlers installed through helpers of the file (signal(), sigaction()): no check")
expect(checks("not_a_handler") >= 1, "a callback stored beside a helper's installation (not handed to it): checked")
expect("on_marked" in functions and checks("on_marked") == 0, "annotate(\"coop_signal_handler\"): no check")
tls_throw = body("tls_call_may_throw")
pads = re.findall(r"^([\w.]+):[^\n]*\n\s*%[\w.]+ = landingpad [^\n]*\n\s*cleanup\n((?:.*\n)*?)\s*resume", tls_throw, re.M)
expect("invoke void @_ZN7Counter3addEl" in tls_throw and "call void @coop_os_lock_taken(i32 0)" in tls_throw and
       any("call void @coop_os_lock_released(i32 0)" in p[1] for p in pads),
       "a bracketed call that may throw becomes an invoke; its landing pad releases the bracket and resumes")
rt = [n for n in functions if n.startswith("_ZN4coop")]
expect(rt and all(checks(n) == 0 for n in rt), "coop:: functions: no check")
inl = [n for n in functions if "inline_checked" in n]
expect(inl and checks(inl[0]) >= 1 and "internal" in functions[inl[0]][0],
       "instrumented inline function: checked and internal")
expect("llvm.memset" in body("zero_fill") and checks("zero_fill") == 1 and "coop.bulk" in body("zero_fill"),
       "a loop turned into llvm.memset: a check after it charging its bytes")
expect("@coop_quantum_left = external thread_local(initialexec) global i32" in ir,
       "the counter is initial-exec TLS")


def charges_per_block(name):
    """(block label, first instruction, units charged there) for every quantum decrement."""
    out, label, first = [], "entry", None
    for line in body(name).splitlines()[1:]:
        m = re.match(r"^([\w.$]+):", line)
        if m:
            label, first = m.group(1), None
            continue
        if first is None and line.strip():
            first = line.strip()
        c = re.search(r"%coop\.q\.left[\w.]* = sub i32 %coop\.q[\w.]*, (\d+)", line)
        if c:
            out.append((label, first, int(c.group(1))))
    return out


cold = charges_per_block("cold_paths")
entry_k = [k for label, _, k in cold if label == "entry"]
in_pads = [k for label, first, k in cold if label != "entry" and "landingpad" in (first or "")]
elsewhere = [k for label, first, k in cold if label != "entry" and "landingpad" not in (first or "")]
expect(len(entry_k) == 1 and in_pads and elsewhere and 4 * entry_k[0] < sum(in_pads) + sum(elsewhere),
       "cold paths (a throw, a catch handler) charged where they start, not at the entry "
       "(entry %s, landing pads %s, throw path %s)" % (entry_k, in_pads, elsewhere))

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
# A Closure<F>'s own member functions (run, run_and_finish<K>) hold the activity body F
# inlined: they are the workload's code. Other coop functions that only name a Closure type
# (new_closure<F> returns one) are coop's and must stay unchecked.
def closure_member(f):
    return re.match(r"_ZN4coop8internal7ClosureI", f) is not None
coop_fns = [f for f in per_fn if re.match(r"_ZN?K?4coop|_ZZN?K?4coop", f) and not closure_member(f)]
expect(coop_fns != [], "the instrumented object has coop functions to inspect")
bad = [f for f in coop_fns if per_fn[f] > 0]
expect(bad == [], "coop's functions in instrumented code contain no check (%s)" % bad)
bodies = [f for f in per_fn if closure_member(f) and "Mandelbrot" in f]
expect(bodies != [] and all(per_fn[f] > 0 for f in bodies),
       "the instrumented activity bodies of mandelbrot contain checks (%d bodies)" % len(bodies))

# 3b. What coop's code calls: at -O0 coop's inline functions call std:: templates (lock_guard,
# atomic, vector) that stay calls; none of what they reach (direct calls, transitively,
# within the object) may contain a check.
def reached_checks(obj):
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", obj], check=True, capture_output=True,
                         text=True).stdout
    fns, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = m.group(1)
            fns[cur] = [0, set()]
            continue
        if cur is None:
            continue
        if "coop_quantum_expired" in line:
            fns[cur][0] += 1
        m = re.search(r"R_X86_64_PLT32\s+(\S+?)(-0x4)?$", line)
        if m:
            fns[cur][1].add(m.group(1))
        m = re.search(r"\s(call|jmp)\s+[0-9a-f]+ <([^+>]+)>", line)
        if m:
            fns[cur][1].add(m.group(2))
    roots = [f for f in fns if re.match(r"_ZN?K?4coop|_ZZN?K?4coop", f) and "E3runEPNS0_8ActivityE" not in f]
    bad, seen, work = set(), set(), [(r, r) for r in roots]
    while work:
        f, root = work.pop()
        if f in seen or f not in fns:
            continue
        seen.add(f)
        if fns[f][0] > 0 and f != root:
            bad.add("%s (from %s)" % (f, root))
        work.extend((g, root) for g in fns[f][1])
    return len(roots), sorted(bad)


if a.o0_source:
    for level in ("-O0", "-O2"):
        with tempfile.NamedTemporaryFile(suffix=".o") as obj:
            subprocess.run([a.clang, level, "-std=c++20", "-fPIC", "-fpass-plugin=" + a.plugin] + includes +
                           ["-c", a.o0_source, "-o", obj.name], check=True)
            n_roots, bad = reached_checks(obj.name)
        expect(n_roots > 0 and bad == [],
               "%s %s: nothing coop's %d functions call is checked (%s)" % (a.o0_source, level, n_roots, bad[:6]))

# 4. Linked programs: no function of coop (but the activity body Closure<F>::run), of the
# C++ ABI machinery (thread-local wrappers and initialisers, guard variables, static
# initialisers and destructors) or of the ABI library touches the quantum (a check's call
# or a decrement of coop_quantum_left).
NEVER = re.compile(r"^(_ZN?K?4coop|_ZZN?K?4coop|coop_|_ZTW|_ZTH|_ZGV|_ZGR|_ZTh|_ZTv|_ZTc|__tls_init|_GLOBAL__|"
                   r"__cxx_global_var_init|__cxx_global_array_dtor|__dtor_|__cxa_|_ZN10__cxxabiv1|_ZNK10__cxxabiv1|"
                   r"__clang_call_terminate)")
ALLOWED = re.compile(r"^_ZN4coop8internal7ClosureI.*E3runEPNS0_8ActivityE")
ALLOWED_C = {"coop_quantum_expired", "coop_os_lock_taken", "coop_os_lock_released"}  # the runtime's side


def quantum_users(path):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True, capture_output=True,
                         text=True).stdout
    users, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = m.group(1)
        elif cur and ("<coop_quantum_expired" in line or "coop_quantum_left" in line):
            users.setdefault(cur, set()).add("call" if "coop_quantum_expired" in line else "counter")
    return users


for binary in a.binary:
    users = quantum_users(binary)
    # In a linked executable the counter is %fs-relative with a constant offset (no symbol
    # name): count the check calls, which name the slow path.
    callers = {f for f, kinds in users.items() if "call" in kinds}
    bad = sorted(f for f in callers if NEVER.match(f) and not ALLOWED.match(f) and f not in ALLOWED_C)
    expect(callers != set(), "%s: instrumented code is linked in (%d functions call the slow path)"
           % (binary, len(callers)))
    expect(bad == [], "%s: no check in coop's or the ABI's functions (%s)" % (binary, bad))

# 5. Irreducible control flow: after the pass, every cycle passes through a decrement
# (blocks with a decrement removed, the rest of each function's CFG is acyclic).
# Debug info through the split (split_shared): each copy keeps its own subprogram.
if a.debug_source and a.opt:
    with tempfile.NamedTemporaryFile(suffix=".ll") as ll:
        subprocess.run([a.clang, "-g", "-O2", "-std=c++20", "-fpass-plugin=" + a.plugin, "-Xclang", "-load", "-Xclang",
                        a.plugin, "-DVTABLE_SIDE=checked", "-DVTABLE_SIDE_IS_CHECKED"] + includes +
                       ["-S", "-emit-llvm", a.debug_source, "-o", ll.name], check=True)
        v = subprocess.run([a.opt, "-verify", ll.name, "-o", "/dev/null"], capture_output=True, text=True)
        expect(v.returncode == 0 and ".coop.checked" in open(ll.name).read(),
               "-g: the split shared functions' IR verifies (%s)" % v.stderr.strip()[:200])

if a.irreducible and a.opt:
    out = subprocess.run([a.opt, "-load", a.plugin, "-load-pass-plugin", a.plugin, "-passes=coop-quantum",
                          "-coop-quantum-unroll=1", "-coop-quantum-short-loop=0", "-S", a.irreducible, "-o", "-"],
                         check=True, capture_output=True, text=True).stdout
    for m in re.finditer(r"^define [^@]*@([\w.]+)\(.*?^}", out, re.S | re.M):
        name, text = m.group(1), m.group(0)
        blocks, order, cur = {}, [], None
        for line in text.splitlines()[1:]:
            lm = re.match(r"^([\w.]+):", line)
            if lm:
                cur = lm.group(1)
                blocks[cur] = ""
                order.append(cur)
            elif cur is None and line.strip() and not line.startswith("}"):
                cur = "%entry"
                blocks[cur] = ""
                order.append(cur)
            if cur is not None:
                blocks[cur] += line + "\n"
        succ = {b: set(re.findall(r"label %([\w.]+)", blocks[b].split("br ")[-1])) if "br " in blocks[b] else set()
                for b in blocks}
        charged = {b for b in blocks if "store i32 %coop.q.left" in blocks[b]}
        # Is there a cycle among the uncharged blocks? (DFS colouring)
        state, cyc = {}, []

        def dfs(b):
            state[b] = 1
            for s2 in succ.get(b, ()):
                if s2 in charged or s2 not in blocks:
                    continue
                if state.get(s2) == 1:
                    cyc.append((b, s2))
                elif s2 not in state:
                    dfs(s2)
            state[b] = 2

        for b in order:
            if b not in charged and b not in state:
                dfs(b)
        expect(charged != set() and cyc == [],
               "%s: every cycle passes a quantum decrement (uncharged cycle edges: %s)" % (name, cyc))

# The compile-time warnings (warnings.cpp): what the plugin sees but cannot make right.
if a.warnings_source:
    src = open(a.warnings_source).read()
    names = re.findall(r"\b((?:warn|quiet)_\w+)\(", src)
    names = sorted(set(n for n in names if re.search(r"\b%s\([^;]*\)\s*\{" % n, src)))
    for level in ("-O2", "-O0"):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([a.clang, level, "-g", "-std=c++20", "-fpass-plugin=" + a.plugin, *includes, "-c",
                                a.warnings_source, "-o", os.path.join(d, "w.o")], capture_output=True, text=True)
        lines = [l for l in r.stderr.splitlines() if "warning: coop-quantum:" in l]
        expect(r.returncode == 0, "warnings.cpp %s compiles" % level)
        for n in names:
            got = [l for l in lines if re.search(r" in '%s\(" % n, l)]
            want = 1 if n.startswith("warn_") else 0
            expect(len(got) == want, "warnings.cpp %s: %s draws %d warning(s), got %d%s" %
                   (level, n, want, len(got), ": " + got[0][:160] if got and not want else ""))
        expect(len(lines) == sum(n.startswith("warn_") for n in names),
               "warnings.cpp %s: no other warning (%d lines)" % (level, len(lines)))

if failures:
    print("%d expectation(s) failed" % len(failures))
    sys.exit(1)
