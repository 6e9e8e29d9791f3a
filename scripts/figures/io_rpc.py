"""io_rpc — requests that carry CPU work (`rpc`, `rpc-open`; docs/io-workloads.md, the RPC protocol).

`rpc` (closed loop): requests/s against the work per request (`work` rounds, log x; 600, 6000, 60000 are about
1, 10, 100 µs: counter work_us), a line per backend, a panel per connection count and P, client-bound points
marked; then the server's CPU per request against the work (its floor is the work itself).
`rpc-open`: p50, p99 and p99.9 latency against the offered load, a row per work, connection count and P.
Writes figures/io_rpc_rate, io_rpc_cpu, io_rpc_open_latency.{png,svg}.
"""

import coopbench as cr

io = cr.sibling_module(__file__, "_io")


def make(res, outdir):
    """make — the rpc items, or [] when the results hold no rpc rows."""
    df = res.workload("rpc")
    x = "param.work" if len(io.values_of(df, "param.work")) > 1 or len(io.values_of(df, "param.connections")) <= 1 \
        else "param.connections"
    xlabel = "work per request [rounds]" if x == "param.work" else "connections"
    other = "param.connections" if x == "param.work" else "param.work"
    items = io.closed_loop(res, outdir, df, "rpc", x=x, xlabel=xlabel, columns=[other, "param.size"],
                           rate_label="throughput [requests/s]", per="request", what="throughput")
    items += io.open_loop(res, outdir, res.workload("rpc-open"), "rpc-open",
                          columns=["param.work", "param.connections", "param.size"])
    return items
