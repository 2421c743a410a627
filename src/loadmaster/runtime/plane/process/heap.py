"""Keep the garbage collector's older passes short in a long-running server.

The control plane's state is tens of thousands of long-lived containers: every stored object's dict,
its replica model and its controller view, about 15 tracked objects per replica. A full collection
walks all of them, so its pause grows with the cluster (100 ms at 10,000 replicas; the control-plane
bench saw 13 full passes of up to 190 ms in one run) although almost none of them is ever garbage.

After each middle or full collection, everything that survived it is moved to the permanent
generation (``gc.freeze``): later passes walk only what was created since, so their pauses follow
the churn, not the cluster's size. A big cycle rewrites 10,000 replicas, and their new dicts, models
and views survive as the cache's state: frozen after the middle pass that first kept them, they are
never walked again, and a full pass walks only what is newer than the last middle one (freezing
after full passes only, 5,000 nodes and 10,000 Pending: a full pass every ~100 s walked the live
heap, 150-300 ms). Frozen objects are still freed by reference counting when they are dropped, which
is how the state's objects go (an object's dict, model and view do not point back at each other).

What reference counting cannot free is a reference cycle that became garbage after it was frozen (a
request's objects caught in flight by a freeze, say). So the process's memory is watched: when its
resident size has grown past GROWTH_LIMIT times its size after the last clean-up plus GROWTH_SLACK,
everything is unfrozen and collected once (one long pause, logged), then frozen again. The bound
holds the process to about twice its live heap; a steady server does not reach it. (The resident
size, not ``gc.get_freeze_count()``: that one walks the whole frozen list, ~50 ms at 400,000 objects.)
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import resource
import time

import structlog

log = structlog.get_logger(__name__)

# How often to look whether an older collection ran (one runs every second or so under load), and
# how often to read the process's size (module doc).
CHECK_EVERY_S = 0.1
SIZE_EVERY_CHECKS = 50
GROWTH_LIMIT = 2.0
GROWTH_SLACK = 256 * 2**20


def older_collections() -> int:
    """Middle and full collections run so far in this process."""
    stats = gc.get_stats()
    return int(stats[1]["collections"]) + int(stats[2]["collections"])


def freeze_if_collected(seen: int) -> int:
    """Freeze the survivors if a middle or full collection ran since ``seen``; returns the count to pass
    next."""
    now = older_collections()
    if now != seen:
        gc.freeze()
    return now


def resident_bytes() -> int:
    """The process's resident size (Linux: /proc; elsewhere its peak, which only grows)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize()
    except OSError:
        return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def clean_up_if_grown(baseline: int, size: int) -> int:
    """Collect the frozen heap once if the process grew from ``baseline`` bytes to ``size`` past the
    bound (module doc); returns the baseline to pass next (the size after a clean-up, else
    ``baseline``)."""
    if size <= baseline * GROWTH_LIMIT + GROWTH_SLACK:
        return baseline
    started = time.perf_counter()
    gc.unfreeze()
    collected = gc.collect()
    gc.freeze()
    after = resident_bytes()
    log.info(
        "frozen heap collected",
        resident_mb_before=size // 2**20,
        resident_mb_after=after // 2**20,
        collected=collected,
        pause_ms=round((time.perf_counter() - started) * 1000, 1),
    )
    return after


async def freeze_survivors(check_every_s: float = CHECK_EVERY_S) -> None:
    """Run for the life of the server process (cancel to stop). Wall time on purpose, not the plane's
    clock: the collector's passes and the resident size belong to this process, not to the cluster, and
    only ``loadmaster server`` runs this (``api/serve.py``), never a timeline or a replay."""
    seen = older_collections()
    baseline = resident_bytes()
    for check in itertools.count(1):
        await asyncio.sleep(check_every_s)
        seen = freeze_if_collected(seen)
        if check % SIZE_EVERY_CHECKS == 0:
            baseline = clean_up_if_grown(baseline, resident_bytes())
