"""io_hogs — I/O latency while compute-bound activities hog the processors (`echo-hogs`; docs/io-workloads.md,
"CPU hogs"): does the runtime still poll its sockets when every processor is busy?

p50, p99 and p99.9 latency (log y) of echo requests offered at a fixed rate against the hogs' slice between two
yields (`slice_us`, log x), a line per backend, a row of panels per hog count, connection count and P. Drawn
only when the results hold `echo-hogs` rows (the workload is newer than the others); a folder without its
percentile counters gets a note instead. Writes figures/io_echo_hogs_latency.{png,svg}.
"""

import coopbench as cr

io = cr.sibling_module(__file__, "_io")

WORKLOAD = "echo-hogs"


def make(res, outdir):
    """make — the echo-hogs item, or [] when the results hold no echo-hogs rows."""
    df = res.workload(WORKLOAD)
    if df.empty:
        return []
    title = f"{WORKLOAD} — latency under CPU hogs against their slice"
    x = "param.slice_us"
    missing = [c for c, _ in io.PERCENTILES if not io.has(df, c)] + ([x] if not io.values_of(df, x) else [])
    if missing:
        return [io.skipped(title, missing, WORKLOAD)]
    cells = io.percentile_cells(df, io.swept(df, ["param.hogs", "param.connections", "param.rate", "param.size"]))
    fig, _ = io.grid_figure(cells, x, xlabel="slice between yields [µs]", suptitle=title, ncols=3,
                            panel_height=2.6)
    return [io.figure_item(
        res, outdir, df, fig, "io_echo_hogs_latency", title,
        "The server runs `hogs` compute-bound activities (two per processor by default) that yield to their "
        "runtime every `slice_us` of work, while the load generator offers a fixed rate of echo requests (latency "
        "from each request's intended send time). A runtime that polls its sockets only between activities, or "
        "only every so many ticks, makes a request wait for slices to end: its latency rises with the slice. "
        "p50, p99 and p99.9 (µs, log), a line per backend; lower is better. The OS-thread backends and the epoll "
        "server have the kernel preempt the hogs (a preemptive baseline, not a ceiling).", [WORKLOAD])]
