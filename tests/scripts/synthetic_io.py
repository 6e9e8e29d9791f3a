"""synthetic_io — a synthetic results folder of the I/O workloads (docs/io-workloads.md) for the figure tests.

make_io_results(folder, backends=BACKENDS, processors=(1, 2), repetitions=2, warmup=1, iterations=2,
drop=(), workloads=None, extra=True) writes results.csv and context.json with the rows of echo (size 64/512 ×
connections 1/10/100/1000), echo-open (100 connections, load 25/50/90), http-hello, http-hello-open, rpc (work
600/6000/60000), rpc-open, churn (connectors 4/64) and, with extra=True, the idle-connections and CPU-hogs
workloads (IDLE, HOGS: `echo-idle` with counter rss_per_idle_kib, `echo-hogs` with parameters hogs and
slice_us, as their docs in docs/io-workloads.md and docs/results-format.md give them), each with the load generator's counters
(docs/results-format.md, "The I/O workloads' counters"). `drop` names counters left out of every row (a folder
of an older harness); BOUND_AT: the connection count from which echo's points are client-bound; pthreads is
refused at 1000 connections; go fails echo at 10 connections, P=2, in every fork (a self-check failure).
Values are deterministic (a base per backend and a jitter per fork and iteration).
"""

import csv
import json
from pathlib import Path

import synthetic

BACKENDS = ("native-ws", "epoll", "go", "tokio", "tokio/current_thread", "pthreads")
BASE = {"native-ws": 1.0, "epoll": 1.1, "go": 0.8, "tokio": 0.9, "tokio/current_thread": 0.6, "pthreads": 0.5,
        "native": 0.95, "native-parasail": 0.97, "stdthread": 0.48, "asio": 0.85}
BOUND_AT = 100
IDLE = "echo-idle"
HOGS = "echo-hogs"
PARAMS = ("connections", "size", "load", "rate", "work", "duration_ms", "idle", "hogs", "slice_us")
FAIL_REASON = "self-check failed: echoed byte 3 of connection 2, request 7 = 0x12, expected 0x13"
REFUSE_REASON = "system limit: 1001 threads do not fit (kernel.pid_max)"


def _grid(extra):
    g = {
        "echo": ("requests/s", [{"size": s, "connections": c} for s in (64, 512) for c in (1, 10, 100, 1000)]),
        "echo-open": ("us (p99)", [{"size": 512, "connections": 100, "load": ld, "rate": 0} for ld in (25, 50, 90)]),
        "http-hello": ("requests/s", [{"connections": c} for c in (1, 100, 1000)]),
        "http-hello-open": ("us (p99)", [{"connections": 100, "load": ld, "rate": 0} for ld in (25, 50, 90)]),
        "rpc": ("requests/s", [{"size": 128, "connections": 100, "work": w} for w in (600, 6000, 60000)]),
        "rpc-open": ("us (p99)", [{"size": 128, "connections": 100, "work": 6000, "load": ld, "rate": 0}
                                  for ld in (50, 90)]),
        "churn": ("connections/s", [{"size": 64, "connections": c} for c in (4, 64)]),
    }
    if extra:
        g[IDLE] = ("us (p99)", [{"idle": n, "connections": 100, "load": 50, "rate": 0} for n in (1000, 10000)])
        g[HOGS] = ("us (p99)", [{"hogs": 0, "slice_us": s, "connections": 10, "rate": 1000}
                                for s in (100, 1000, 10000)])
    return g


def _counters(b, w, params, p, rate, jitter, drop):
    c = {"requests": int(rate * 0.1), "rate_rps": rate, "percentile_error": 1 / 128, "client_threads": 1,
         "cpus_shared": 0, "bytes_checked": int(rate * 64)}
    lat = 1e6 * params.get("connections", 1) / rate if rate > 0 else 100.0
    load = params.get("load", 0)
    knee = 1 + (load / 100) ** 6 * 40  # the hockey stick: flat, then up near the maximum
    c.update({"p50_us": lat * knee * 0.6, "p99_us": lat * knee * 1.5 * jitter, "p999_us": lat * knee * 3.0 * jitter,
              "max_us": lat * knee * 5, "mean_us": lat * knee * 0.8})
    bound = w == "echo" and params["connections"] >= BOUND_AT
    c["client_cpu_util"] = 0.95 if bound else 0.5
    c["client_bound"] = 1 if bound else 0
    c["server_cpu_util"] = min(p, 0.8 * p)
    c["server_cpu_us_per_request"] = 1e6 * c["server_cpu_util"] / rate / BASE[b]
    if w.endswith("-open") or w in (IDLE, HOGS):
        c["offered_rps"] = rate * load / 100
        c["calibrated_rps"] = rate
        c["unfinished"] = 0
    if w.startswith("rpc"):
        c["work_us"] = params["work"] / 600
    if w == IDLE:
        c["rss_per_idle_kib"] = {"go": 6.0, "tokio": 2.5, "tokio/current_thread": 2.4, "epoll": 1.2,
                                 "pthreads": 70.0}.get(b, 9.0) * jitter
        c["active_p99_us"] = c["p99_us"]
    if w == HOGS:
        for k, f in (("p50_us", 0.5), ("p99_us", 1.0), ("p999_us", 2.0)):
            c[k] = params["slice_us"] * (2.0 if b.startswith("native") else 1.2) * jitter * f
        c["hogs"] = 2 * p  # hogs=0, the default: two per processor
        c["hog_slices"] = 1000
    return {k: v for k, v in c.items() if k not in drop}


def make_io_results(folder, backends=BACKENDS, processors=(1, 2), repetitions=2, warmup=1, iterations=2, drop=(),
                    workloads=None, extra=True):
    """make_io_results — write results.csv and context.json into folder (created); returns the folder Path."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    columns = synthetic.schema.concrete_columns(PARAMS)
    grid = _grid(extra)
    with open(d / "results.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=columns)
        wr.writeheader()
        for b in backends:
            for w, (unit, pts) in grid.items():
                if workloads is not None and w not in workloads:
                    continue
                for params in pts:
                    for p in processors:
                        conns = params.get("connections", 1)
                        rate = 2e4 * BASE[b] * p * min(conns, BOUND_AT) ** 0.5 / (1 + params.get("work", 0) / 6000)
                        for r in range(repetitions):
                            status, reason = "ok", ""
                            if b == "pthreads" and conns >= 1000:
                                status, reason = "refused", REFUSE_REASON
                            if b == "go" and w == "echo" and conns == 10 and p == processors[-1]:
                                status, reason = "failed", FAIL_REASON
                            for it in range(warmup + iterations if status == "ok" else 1):
                                jitter = 1 + 0.02 * ((r + it) % 3 - 1)
                                cnt = _counters(b, w, params, p, rate * jitter, jitter, drop)
                                if w.endswith("-open") or w in (IDLE, HOGS):
                                    value = cnt.get("p99_us", 1.0)
                                else:
                                    value = rate * jitter
                                row = {c: "" for c in columns}
                                row.update({
                                    "point": synthetic.point_id(b, w, params, p), "backend": b,
                                    "family": b.split("/")[0], "workload": w, "processors": p, "repetition": r,
                                    "iteration": it, "phase": "warmup" if it < warmup and status == "ok" else "measure",
                                    "unit": unit, "status": status, "reason": reason, "load_before": 0.2,
                                    "load_after": 0.3, "runnable_before": 0, "runnable_after": 0, "other_cpus": 0.0,
                                    "steal_cpus": 0.0, "noisy": "false"})
                                for k, v in params.items():
                                    row["param." + k] = v
                                if status == "ok":
                                    row.update({"value": repr(value), "seconds": "0.1", "peak_rss_kib": 4096,
                                                "cpu_seconds": "0.2", "counters": json.dumps(cnt)})
                                wr.writerow(row)
    context = {"host": "testhost", "cpu_model": "Synthetic CPU", "cores_available": 4, "compiler": "GNU 12.2.0",
               "build_type": "Release", "git_commit": "0123456789ab", "plan": "(defaults)"}
    (d / "context.json").write_text(json.dumps(context, indent=2))
    return d
