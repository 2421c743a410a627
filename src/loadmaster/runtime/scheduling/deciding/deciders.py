"""Where a cycle's decide step runs: the server setting ``decide_in`` (docs/server-config.md).

* ``thread``: in the server's process, called from a worker thread (``asyncio.to_thread``). The
  timeline harness, replays and unit tests use it: same input, same plan, no process to start.
* ``process``: in a long-lived worker process (``decision_process.py``), so a long cycle cannot take
  the event loop's GIL; ``loadmaster server`` and ``loadmaster up`` use it.

Both run the one ``decide`` (``decision_step.py``); both are called from a worker thread, never on
the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from loadmaster.core.columns.snapshot import SnapshotCache
from loadmaster.runtime.scheduling.deciding.decision_process import WorkerProcessDecider
from loadmaster.runtime.scheduling.deciding.decision_step import DecidedCycle, DecideRequest, decide

DECIDE_IN_CHOICES = ("thread", "process")


class Decider(Protocol):
    def decide(self, request: DecideRequest) -> DecidedCycle:
        """Blocking: run the cycle and return what the runtime reads of it."""
        ...

    def close(self) -> None:
        """Release what it holds (a worker process); blocking."""
        ...


class InProcessDecider:
    """``decide`` in the calling thread, with the previous cycle's snapshot cache (one cycle at a time)."""

    def __init__(self) -> None:
        self._cache = SnapshotCache()

    def decide(self, request: DecideRequest) -> DecidedCycle:
        return decide(request, self._cache)

    def close(self) -> None:
        """Nothing to release."""


def decider_for(decide_in: str, on_restart: Callable[[], None] = lambda: None) -> Decider:
    """The decider of the setting (one of DECIDE_IN_CHOICES, checked by ``ServerConfig.check``);
    ``on_restart`` counts a worker process's deaths."""
    if decide_in == "process":
        return WorkerProcessDecider(on_restart)
    return InProcessDecider()
