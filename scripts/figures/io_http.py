"""io_http — the minimal HTTP/1.1 responder (`http-hello`, `http-hello-open`; docs/io-workloads.md).

`http-hello` (closed loop, keep-alive GETs): requests/s against connections (log x), a line per backend, a
panel per P, client-bound points marked; then the server's CPU per request against connections.
`http-hello-open`: p50, p99 and p99.9 latency (log y) against the offered load, a row per connection count and
P. Writes figures/io_http_hello_rate, io_http_hello_cpu, io_http_hello_open_latency.{png,svg}.
"""

import coopbench as cr

io = cr.sibling_module(__file__, "_io")


def make(res, outdir):
    """make — the http-hello items, or [] when the results hold no http-hello rows."""
    items = io.closed_loop(res, outdir, res.workload("http-hello"), "http-hello", x="param.connections",
                           xlabel="connections", columns=["param.client_threads"],
                           rate_label="throughput [requests/s]", per="request", what="throughput")
    items += io.open_loop(res, outdir, res.workload("http-hello-open"), "http-hello-open",
                          columns=["param.connections", "param.client_threads"])
    return items
