"""Keep the garbage collector's full passes short in a long-running server.

The control plane's state is tens of thousands of long-lived containers: every stored object's dict,
its replica model and its controller view, about 15 tracked objects per replica. CPython's full
collection walks all of them, so its pause grows with the cluster (100 ms at 10,000 replicas; the
control-plane bench saw 13 full passes of up to 190 ms, 1.2-1.5 s in all, in one run) although
almost none of them is ever garbage.

After each full collection, everything that survived it is moved to the permanent generation
(``gc.freeze``): the next full pass walks only what was created since, so its pause follows the
churn, not the cluster's size (the same bench: full passes of at most 50-60 ms, 0.15-0.19 s in all).
Frozen objects are still freed by reference counting when they are dropped, which is how the
state's objects go (an object's dict, model and view do not point back at each other); only a
reference cycle among frozen objects would stay until the process ends.
"""

from __future__ import annotations

import asyncio
import gc

# How often to look whether a full collection ran: a full pass happens every few seconds at most.
CHECK_EVERY_S = 0.5


def full_collections() -> int:
    return int(gc.get_stats()[2]["collections"])


def freeze_if_collected(seen: int) -> int:
    """Freeze the survivors if a full collection ran since ``seen``; returns the count to pass next."""
    now = full_collections()
    if now != seen:
        gc.freeze()
    return now


async def freeze_survivors(check_every_s: float = CHECK_EVERY_S) -> None:
    """Run for the life of the server process (cancel to stop)."""
    seen = full_collections()
    while True:
        await asyncio.sleep(check_every_s)
        seen = freeze_if_collected(seen)
