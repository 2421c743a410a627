"""How often Python's cycle collector runs in a loadmaster process.

CPython collects its youngest generation every 700 net allocations of container objects. A control
plane allocates small dicts and tuples by the hundred thousand (every heartbeat, watch event and view)
while holding a large, long-lived cache: at the default the collector ran often enough to cost about a
fifth of a timeline's CPU time (1,000 nodes heartbeating for a virtual hour: 3.2 s -> 2.5 s of CPU with
it tuned). Almost everything the loop allocates dies young by reference counting, so collecting cycles
every 50,000 allocations loses nothing but the waste; the older generations keep their default ratios
relative to it, only a little wider (the cache's objects live for the whole process).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
MIDDLE_THRESHOLD = 20
OLD_THRESHOLD = 100


def apply_gc_policy() -> None:
    """Set the collector's thresholds for this process (the CLI's entry point calls it once)."""
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)
