"""io_echo — the TCP echo workloads (docs/io-workloads.md): what a server engineer asks of an echo server.

`echo` (closed loop): requests/s against connections (log x), a line per backend, a panel per message size
(columns) and P (rows), client-bound points (the load generator's core saturated: counter.client_bound)
marked; then the server's CPU per request (counter.server_cpu_us_per_request, from the server process's CPU
clock) against connections, the same panels. `echo-open` (open loop): the hockey stick, p50, p99 and p99.9
latency (log y) against the offered load (% of each server's closed-loop maximum), a row per connection count
and P. A figure whose counters are absent is replaced by a note that says so (not a crash).
Writes figures/io_echo_rate, io_echo_cpu, io_echo_open_latency.{png,svg}.
"""

import coopbench as cr

io = cr.sibling_module(__file__, "_io")


def make(res, outdir):
    """make — the echo items, or [] when the results hold no echo rows."""
    items = io.closed_loop(res, outdir, res.workload("echo"), "echo", x="param.connections",
                           xlabel="connections", columns=["param.size", "param.client_threads"],
                           rate_label="throughput [requests/s]", per="request", what="throughput")
    items += io.open_loop(res, outdir, res.workload("echo-open"), "echo-open",
                          columns=["param.connections", "param.size", "param.client_threads"])
    return items
