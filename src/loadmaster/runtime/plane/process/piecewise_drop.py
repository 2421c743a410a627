"""Dropping a large structure's last references in pieces, from a worker thread.

A scheduling cycle ends holding its writes (10,000 replica updates, each with its encoded object) and
the replica states it read, which its own writes superseded (10,000 decoded objects of ~40 Python
objects each). Freeing them when the cycle returns is one cascade of deallocations in C, 15-50 ms
during which the event loop waits (bench/busy_cycle.py). Handed to a worker thread whole, the cascade
would still hold the GIL from start to end (the interpreter hands the GIL over only between
bytecodes). So the lists are emptied ``PIECE`` items at a time, in Python: between two pieces the loop
can take the GIL.
"""

from __future__ import annotations

from typing import Any

PIECE = 64  # items freed in one go: ~2,500 objects for replica states, a fraction of a millisecond


def drop_in_pieces(*lists: list[Any]) -> None:
    """Empty each list from its end, PIECE items at a time (the caller holds no other reference)."""
    for items in lists:
        while items:
            del items[-PIECE:]
