#!/usr/bin/python3
"""pythreads.py — a complete external coopbench backend in Python (threading), running the
`create` workload: spawn N threads with an empty body, join them, check each ran once."""
import json
import sys
import threading
import time

if sys.argv[1:] == ["--list"]:
    print(json.dumps({"protocol": 1, "workloads": ["create"], "context": {"python": sys.version.split()[0]}}))
    sys.exit(0)

req = json.loads(sys.stdin.readline())
n = int(req["params"]["N"])
ran = [0] * n

def body(i):
    ran[i] = 1

start = time.perf_counter()  # the timed interval: before the first spawn ...
threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
for t in threads:
    t.start()
for t in threads:
    t.join()
secs = time.perf_counter() - start  # ... to after the last join
if req["inject_fault"] and n > 0:
    ran[n // 2] = 0
count = sum(ran)
check = "passed" if count == n else f"self-check failed: threads that ran = {count}, expected {n}"
print(json.dumps({"status": "ok", "seconds": secs, "value": secs * 1e9 / n, "check": check, "counters": {}}))
