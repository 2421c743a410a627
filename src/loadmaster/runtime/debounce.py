"""When the next pass of a watch-driven loop may start: the debounce applies to bursts only.

JACO's 50 ms debounce "coalesces bursts of events during a rolling update". A burst is recognised by
what the pass that just ended wrote: ``written >= BURST_WRITES`` (a rollout or a bulk apply is landing
in many transactions), or a conflict (someone is writing the same objects). Then the next pass starts
no sooner than ``debounce_s`` after this one started, so the burst's remaining transactions are taken
together. A pass that wrote less is a trickle (a few applies a second): waiting would only add latency,
since the events that arrive while a pass runs are coalesced into the next pass anyway.

    next_start = started + debounce_s   if written >= BURST_WRITES or conflicts
                 -inf (at once)          otherwise
"""

from __future__ import annotations

# Below this many writes in one pass, a pass is not part of a burst. A rollout's controller writes in
# transactions of up to 128 replicas, and the smallest rollout worth coalescing writes a few dozen.
BURST_WRITES = 32


def quiet_until(started: float, written: int, conflicts: int, debounce_s: float) -> float:
    """The loop time before which the next pass waits (``-inf``: no wait)."""
    if written >= BURST_WRITES or conflicts:
        return started + debounce_s
    return -float("inf")
