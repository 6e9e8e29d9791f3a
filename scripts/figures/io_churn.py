"""io_churn — connection churn (`churn`; docs/io-workloads.md): connect, one echo, close, again.

Connections/s against the connectors (log x), a line per backend, a panel per P (and message size when
several), client-bound points marked; then the server's CPU per connection (its accept, registration, spawn and
teardown: counter.server_cpu_us_per_request, one request per connection). Writes figures/io_churn_rate,
io_churn_cpu.{png,svg}.
"""

import coopbench as cr

io = cr.sibling_module(__file__, "_io")


def make(res, outdir):
    """make — the churn items, or [] when the results hold no churn rows."""
    return io.closed_loop(res, outdir, res.workload("churn"), "churn", x="param.connections",
                          xlabel="connectors", columns=["param.size", "param.client_threads"],
                          rate_label="connections/s", per="connection", what="connections per second")
