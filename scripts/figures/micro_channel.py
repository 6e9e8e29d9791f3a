"""micro_channel — the `channel` workload: time per hand-off over each backend's channel, against C and T.

Workload `channel` (workloads/micro/channel.hpp): T pairs play ping-pong over two channels
of capacity C (0: unbuffered, a rendezvous); value: wall ns per hand-off. A panel per
capacity C, pairs T on the x axis (log), one line per backend (per P when several), median
with its interval over forks as a band (coopbench.stats; its coverage in the caption). Each backend's channel is named in the legend,
from context.json's `backend.<NAME>.channel` (its own channel, or the generic one built from
its mutex and condition variables); a backend of the run with no channel row is named under
the figure, so its absence is not a mystery. Writes figures/micro_channel.{png,svg}.
"""

import coopbench as cr

WORKLOAD = "channel"
NAME = "micro_channel"


def channel_of(context: dict, backend: str) -> str:
    """channel_of — what backend's channel is (context.json's backend.<NAME>.channel), "" when not recorded."""
    v = context.get(f"backend.{backend}.channel")
    if v is None and isinstance(context.get("backend"), dict):  # a nested context, should a writer nest it
        v = (context["backend"].get(backend) or {}).get("channel")
    return str(v) if v else ""


def _name_channels(fig, context: dict) -> None:
    """Name each backend's channel in the legend ("go P=2 — Go's chan (...)"): one entry a line, below the panels
    (a channel's description is a sentence; side by side they made the figure three times wider)."""
    import textwrap

    for leg in list(fig.legends):
        handles = leg.legend_handles if hasattr(leg, "legend_handles") else leg.legendHandles
        labels = []
        for t in leg.get_texts():
            backend = t.get_text().split(" ")[0]
            ch = channel_of(context, backend)
            labels.append(textwrap.shorten(f"{t.get_text()} — {ch}" if ch else t.get_text(), 110, placeholder=" …"))
        leg.remove()
        fig.legend(handles, labels, fontsize=8, frameon=False, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1)


def make(res, outdir):
    """make — the channel item, or [] when the results hold no `channel` rows."""
    df = res.workload(WORKLOAD)
    if df.empty or "param.T" not in df.columns:
        return []
    unit = next((u for u in df["unit"] if u), "ns/hand-off")
    caps = sorted(df["param.C"].dropna().unique()) if "param.C" in df.columns else []
    panels = [{"title": f"capacity C={cr.compact_number(c)}" + (" (unbuffered: a rendezvous)" if c == 0 else ""),
               "df": df[df["param.C"] == c], "ylabel": f"time per hand-off [{unit}]"} for c in caps] or \
             [{"df": df, "ylabel": f"time per hand-off [{unit}]"}]
    fig, _ = cr.line_figure(panels, "param.T", xlabel="ping-pong pairs (T)",
                            suptitle="channel — one hand-off over each backend's channel")
    _name_channels(fig, res.context)
    cr.add_caption(fig, res.context, df)
    missing = sorted(set(res.df["backend"].unique()) - set(df["backend"].unique()))
    text = ("T pairs play ping-pong, K values each way, over two channels of capacity C (0: unbuffered); wall time / "
            "(2·T·K). Each backend uses its best channel: its own when it has one, else the generic one built from "
            "its mutex and condition variables (named in the legend, from context.json's `backend.<NAME>.channel`).")
    if missing:
        text += (" Not in this figure: " + ", ".join(f"`{b}`" for b in missing)
                 + " — no `channel` row (the backend does not implement this workload, or it was not selected).")
    return [{"title": "channel — hand-off time against capacity C and pairs T", "text": text,
             "files": cr.save_figure(fig, outdir, NAME)}]
