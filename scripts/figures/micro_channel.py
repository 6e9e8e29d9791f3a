"""micro_channel — the `channel` workload: time per hand-off over each backend's channel, against C and T.

Workload `channel` (workloads/micro/channel.hpp): T pairs play ping-pong over two channels
of capacity C (0: unbuffered, a rendezvous); value: wall ns per hand-off. A panel per
capacity C, pairs T on the x axis (log), one line per backend (per P when several), median
with its bootstrap 95 % interval as a band. Each backend's channel is named in the legend,
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
    """Append each backend's channel to its legend label ("go P=2" -> "go P=2 — Go's chan")."""
    for leg in fig.legends:
        for t in leg.get_texts():
            backend = t.get_text().split(" ")[0]
            ch = channel_of(context, backend)
            if ch:
                t.set_text(f"{t.get_text()} — {ch}")


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
