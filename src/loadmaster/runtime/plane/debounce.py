"""When the next pass of a watch-driven loop may start: a long quiet time after a burst, a short one
after a trickle, none when idle.

JACO's 50 ms debounce "coalesces bursts of events during a rolling update". A burst is recognised by
what the pass that just ended wrote: ``written >= BURST_WRITES`` (a rollout or a bulk apply landing
in many transactions), or a conflict (someone is writing the same objects): the next pass then
starts no sooner than ``debounce_s`` after this one started, so the burst's remaining transactions
are taken together.

A pass that wrote less is a trickle (applies arriving one by one). For the scheduler, running the
next cycle at once would cost a whole cycle over the cluster per apply, and waiting the full debounce
would add up to 50 ms to each apply. Its trickle gap, a fifth of the debounce (10 ms by default),
keeps both small: measured at 300 applies/s on 1,000 nodes (bench/control_plane.py), the server's CPU
went from 91% (no gap) to 63-69% (10 ms) and apply -> Scheduled p99 from 31-62 ms to 28-38 ms; 5 ms
saved nothing (a cycle takes about that long), 20 ms saved more CPU but added 10 ms to the median.
The controller loop's pass costs only what changed, so it has no trickle gap (``trickle_fraction``
0): a gap there saved no CPU and added 5-10 ms to the median at 340 applies/s.

A pass that wrote nothing does not delay the next: the first change after a quiet spell is handled
at once.

    next_start = started + debounce_s                     if written >= BURST_WRITES or conflicts
                 started + debounce_s * trickle_fraction   if written > 0
                 -inf (at once)                            otherwise
"""

from __future__ import annotations

# Below this many writes in one pass, a pass is not part of a burst. A rollout's controller writes in
# transactions of up to 128 replicas, and the smallest rollout worth coalescing writes a few dozen.
BURST_WRITES = 32
SCHEDULER_TRICKLE_FRACTION = 0.2  # of the debounce: the scheduler's quiet time after a trickle


def quiet_until(
    started: float, written: int, conflicts: int, debounce_s: float, trickle_fraction: float = 0.0
) -> float:
    """The loop time before which the next pass waits (``-inf``: no wait)."""
    if written >= BURST_WRITES or conflicts:
        return started + debounce_s
    if written and trickle_fraction:
        return started + debounce_s * trickle_fraction
    return -float("inf")
