"""families — which peer family a backend belongs to, and each family's best variant per point.

A reader compares coop against what a user would pick instead. A peer with several variants
(tokio's multi-thread runtime, its std-mutex monitor programs and its current-thread runtime;
Boost.Fiber's three schedulers; coop's three algorithms) is represented, at each point, by its
best variant, named: a summary must never set coop's best against a peer's second best.

    family_of("native-ws")             -> "coop"
    family_of("tokio/current_thread")  -> "tokio"
    family_of("boostfiber/shared_work") -> "boostfiber"
    family_of("pthreads")              -> "os-threads"
    family_of("node")                  -> "node"          (an unknown backend is a family of its own)

best_variants(frame, by=[...], value="median") keeps, per group of `by` and per family, the row
with the lowest `value` (time: lower is better), and adds the column `family`.
"""

from __future__ import annotations

# Families whose variants are told apart by name. The order is the one summaries list them in.
FAMILY_ORDER = ("coop", "go", "tokio", "boostfiber", "os-threads", "asio", "epoll")
FAMILY_LABEL = {
    "coop": "coop",
    "go": "Go",
    "tokio": "tokio",
    "boostfiber": "Boost.Fiber",
    "os-threads": "OS threads",
    "asio": "Boost.Asio",
    "epoll": "epoll (ceiling)",  # the hand-written server of the I/O workloads (docs/io-workloads.md)
}

# coop's backends: its three scheduling algorithms and the builds of the same runtime
# (native-clang, native-implicit) are one family.
_COOP_PREFIX = "native"
_OS_THREADS = {"pthreads", "stdthread"}


def family_of(backend: str) -> str:
    """family_of — the peer family of a registered backend name (see the module comment)."""
    name = str(backend)
    head = name.split("/")[0]
    if head == _COOP_PREFIX or head.startswith(_COOP_PREFIX + "-"):
        return "coop"
    if head in _OS_THREADS:
        return "os-threads"
    if head == "tokio" or head.startswith("tokio-"):
        return "tokio"
    if head == "go" or head.startswith("go-"):
        return "go"
    if head == "boostfiber":
        return "boostfiber"
    return head


def family_label(family: str) -> str:
    """family_label — the family's name as a reader knows it ("Boost.Fiber", "OS threads")."""
    return FAMILY_LABEL.get(family, family)


def family_rank(family: str) -> tuple:
    """family_rank — a sort key: the known families in FAMILY_ORDER, then the others by name."""
    return (FAMILY_ORDER.index(family), "") if family in FAMILY_ORDER else (len(FAMILY_ORDER), family)


def best_variants(frame, by, value="median", backend="backend"):
    """best_variants — per group of the columns `by` and per family, the row whose `value` is lowest.

    `frame` is a pandas DataFrame with one row per (point, backend); rows whose `value` is NaN are
    never chosen (a failed or refused variant does not stand for its family while another ran).
    Returns a copy with a `family` column, sorted by `by` then family_rank. Ties keep the first row
    in `frame`'s order.
    """
    by = list(by)
    f = frame.copy()
    f["family"] = f[backend].map(family_of)
    ran = f[f[value].notna()]
    if ran.empty:
        return ran.reset_index(drop=True)
    idx = ran.groupby(by + ["family"], sort=False, dropna=False)[value].idxmin()
    best = f.loc[idx.values].copy()
    best["_rank"] = best["family"].map(family_rank)
    best = best.sort_values(by + ["_rank"], kind="stable").drop(columns="_rank")
    return best.reset_index(drop=True)


__all__ = ["FAMILY_ORDER", "FAMILY_LABEL", "family_of", "family_label", "family_rank", "best_variants"]
