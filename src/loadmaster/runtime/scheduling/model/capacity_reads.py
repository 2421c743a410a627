"""The scheduler's reads of node capacity from the store, counted as
``loadmaster_store_capacity_fetches_total{success}`` (LRS L4's ``_etcd_capacity_fetches_total``).

LRS fetches a worker's capacity from etcd for each decision. Our scheduler reads a node's capacity when
its stored object arrives through the watch (the object cache) and turns it into the engine's Node
(``scheduling_model.py``): that conversion is the fetch. ``success="true"``: the node's capacity was read
and the node takes part in cycles; ``"false"``: the object could not be read and the node is skipped
(``skipped_objects.py`` says why). A heartbeat that changes nothing but the heartbeat time reads no
capacity and is not counted, so the rate follows node changes, not the heartbeat cadence.
"""

from __future__ import annotations

from typing import Protocol


class _Incrementable(Protocol):
    def inc(self) -> None: ...


class SuccessCounter(Protocol):
    """What is needed of a prometheus Counter with the label success."""

    def labels(self, *, success: str) -> _Incrementable: ...


class CapacityReads:
    """Counts each read as it ends; with no counter (unit tests, tools), counts nothing."""

    def __init__(self, counter: SuccessCounter | None = None) -> None:
        self._counter = counter

    def record(self, success: bool) -> None:
        if self._counter is not None:
            self._counter.labels(success="true" if success else "false").inc()
