"""How often Python's cycle collector runs in a loadmaster process.

CPython collects its youngest generation every 700 net allocations of container objects. A control
plane allocates small dicts and tuples by the hundred thousand (every heartbeat, watch event and view)
while holding a large, long-lived cache: at the default the collector ran often enough to cost about a
fifth of a timeline's CPU time (1,000 nodes heartbeating for a virtual hour: 3.2 s -> 2.5 s of CPU with
it tuned). Almost everything the loop allocates dies young by reference counting, so collecting cycles
every 50,000 allocations loses nothing but the waste; the older generations keep their default ratios
relative to it, only a little wider (the cache's objects live for the whole process).

A server trades that back for short pauses (``apply_server_gc_policy``, from ``running_server``): a
pass holds the GIL, so the event loop answers nothing meanwhile, and a pass's length follows how many
objects it walks. A cycle's 10,000 replica writes come back through the cache as some 100,000 new
long-lived containers: at 50,000 the young passes walked up to 50,000 of them (45-87 ms each) and the
middle ones up to 20 times as many (210-320 ms), which alone set the busy bench's p99
(``bench/busy_cycle.py``, 5,000 nodes, 10,000 Pending). At 2,000 and 5, with what survives a middle
pass frozen (``heap.py``), the same bench measured young passes of at most 10 ms and middle ones of at
most 16 ms, for about the same collector time in all (1.06 s in 30 s against 0.9-1.0 s).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 50_000
MIDDLE_THRESHOLD = 20
OLD_THRESHOLD = 100


def apply_gc_policy() -> None:
    """Set the collector's thresholds for this process (the CLI's entry point calls it once)."""
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, OLD_THRESHOLD)


SERVER_YOUNG_THRESHOLD = 2_000
SERVER_MIDDLE_THRESHOLD = 5


def apply_server_gc_policy() -> None:
    """Shorter passes for a process that serves requests (module doc); the old generation's ratio stays."""
    gc.set_threshold(SERVER_YOUNG_THRESHOLD, SERVER_MIDDLE_THRESHOLD, OLD_THRESHOLD)
