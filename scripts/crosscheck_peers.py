#!/usr/bin/python3
"""crosscheck_peers — each peer backend beside a short program written from that peer's own documentation.

For Go, tokio and Boost.Fiber, scripts/crosscheck/<peer>/ holds a program written as the peer's documentation
writes such code (A Tour of Go; tokio's tutorial; Boost.Fiber's examples), independent of runtimes/: it measures
create (N=10000 threads spawned, all joined), switch (T=2 threads yielding K=20000 times each) and one hand-off
(a ping-pong over an unbuffered channel, K=20000 round trips; tokio: capacity 1, as its backend) and prints the
medians of 7 runs. This script builds the three programs (under --build-dir), then, for --rounds rounds, runs each
program and the matching backend's workloads (`coopbench run -w create -p N=10000`, `-w switch -p T=2 -p K=20000`,
`-w channel -p T=1 -p K=20000 -p C=0`, W=1, I=7) one after the other, and prints per point the ratio
backend / program of each round and their median: within 10 % (0.91-1.10) says the backend runs the peer as its
documentation does. The machine may be loaded: the rounds interleave both sides so load falls on both alike.

    /usr/bin/python3 scripts/crosscheck_peers.py [--coopbench build/release/harness/coopbench] [--rounds 3]
        [--build-dir build/release/crosscheck] [--peers go,tokio,boostfiber]
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "scripts" / "crosscheck"
METRICS = {  # metric -> (workload, parameters) of the backend's run
    "create": ("create", ["N=10000"]),
    "switch": ("switch", ["T=2", "K=20000"]),
    "handoff": ("channel", ["T=1", "K=20000", "C=0"]),
}


def build(peers, out: Path) -> dict:
    """build — the programs of `peers`, built under `out`; {peer: path}."""
    out.mkdir(parents=True, exist_ok=True)
    bins = {}
    if "go" in peers:
        bins["go"] = out / "crosscheck-go"
        subprocess.run(["go", "build", "-trimpath", "-o", str(bins["go"]), "."], cwd=HERE / "go", check=True,
                       env=dict(os.environ, GOCACHE=str(out / "gocache"), GOPATH=str(out / "gopath"), GOPROXY="off",
                                CGO_ENABLED="0", GOFLAGS="-mod=mod"))
    if "tokio" in peers:
        target = out / "cargo-target"
        subprocess.run(["/usr/bin/cargo", "build", "--release", "--offline", "--quiet"], cwd=HERE / "tokio", check=True,
                       env=dict(os.environ, CARGO_HOME=str(out / "cargo-home"), CARGO_TARGET_DIR=str(target),
                                RUSTC="/usr/bin/rustc"))
        bins["tokio"] = target / "release" / "crosscheck-tokio"
    if "boostfiber" in peers:
        bins["boostfiber"] = out / "crosscheck-boostfiber"
        subprocess.run(["g++", "-O3", "-DNDEBUG", "-std=c++20", str(HERE / "boostfiber" / "crosscheck.cpp"), "-o",
                        str(bins["boostfiber"]), "-lboost_fiber", "-lboost_context", "-pthread"], check=True)
    return bins


def pairs(bins: dict) -> list:
    """pairs — (label, the program's command, backend, P) for every point compared."""
    out = []
    if "go" in bins:
        out += [(f"go P={p}", [str(bins["go"]), str(p)], "go", p) for p in (1, 2)]
    if "tokio" in bins:
        out += [(f"tokio P={p}", [str(bins["tokio"]), str(p)], "tokio", p) for p in (1, 2)]
        out += [("tokio/current_thread P=1", [str(bins["tokio"]), "1", "current_thread"], "tokio/current_thread", 1)]
    if "boostfiber" in bins:
        out += [("boostfiber/round_robin P=1", [str(bins["boostfiber"]), "1", "round_robin"], "boostfiber/round_robin", 1)]
        out += [(f"boostfiber/shared_work P={p}", [str(bins["boostfiber"]), str(p), "shared_work"],
                 "boostfiber/shared_work", p) for p in (1, 2)]
    return out


def program(cmd) -> dict:
    """program — the program's medians: {metric: ns}."""
    p = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=900)
    return {k: float(v) for k, v in (line.split() for line in p.stdout.splitlines() if line.strip())}


def backend(coopbench: str, name: str, p: int) -> dict:
    """backend — the backend's medians of the timed runs: {metric: ns}."""
    got = {}
    for metric, (workload, params) in METRICS.items():
        with tempfile.TemporaryDirectory(prefix="coopbench-crosscheck.") as d:
            cmd = [coopbench, "run", "-b", name, "-w", workload, "-P", str(p), "-r", "1", "-W", "1", "-I", "7",
                   "-o", d + "/run", "-q"] + [a for v in params for a in ("-p", v)]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)  # exit 3: failed points, read below
            if not os.path.exists(d + "/run/results.csv"):
                # refused before running (exit 2): e.g. tokio's program has no `channel` workload
                print(f"crosscheck_peers: {name} {metric}: no run: {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.returncode}",
                      file=sys.stderr)
                got[metric] = float("nan")
                continue
            with open(d + "/run/results.csv") as f:
                vals = [float(r["value"]) for r in csv.DictReader(f) if r["phase"] == "measure" and r["status"] == "ok"]
            got[metric] = statistics.median(vals) if vals else float("nan")
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coopbench", default=str(ROOT / "build" / "release" / "harness" / "coopbench"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build-dir", default=str(ROOT / "build" / "release" / "crosscheck"))
    ap.add_argument("--peers", default="go,tokio,boostfiber")
    a = ap.parse_args(argv)
    peers = [x for x in a.peers.split(",") if x]
    bad = [x for x in peers if x not in ("go", "tokio", "boostfiber")]
    if bad or a.rounds < 1:
        print(f"crosscheck_peers: unknown peer {bad[0]} (go, tokio, boostfiber)" if bad else
              "crosscheck_peers: --rounds must be >= 1", file=sys.stderr)
        return 2
    bins = build(peers, Path(a.build_dir))
    ratios = {}  # (label, metric) -> [backend / program per round]
    for r in range(a.rounds):
        for label, cmd, name, p in pairs(bins):
            own, ours = program(cmd), backend(a.coopbench, name, p)
            for m in METRICS:
                ratios.setdefault((label, m), []).append(ours[m] / own[m])
                print(f"round {r + 1} {label:28s} {m:8s} backend {ours[m]:10.1f} ns  program {own[m]:10.1f} ns",
                      flush=True)
    print("\npoint                        metric   backend/program per round        median  within 10 %")
    for (label, m), xs in ratios.items():
        if any(x != x for x in xs):  # NaN: the backend did not run this metric
            print(f"{label:28s} {m:8s} {'(the backend does not run it)':32s} {'-':>6s}  -")
            continue
        med = statistics.median(xs)
        print(f"{label:28s} {m:8s} {' '.join(f'{x:5.2f}' for x in xs):32s} {med:6.2f}  "
              f"{'yes' if 0.91 <= med <= 1.10 else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
