"""Per-owner error isolation for the controller loop: one owner's error never stops the others.

A controller raising for one Deployment or Job (a stored spec it cannot read: written before today's
admission bounds, or by a bug) would otherwise end the pass, and with it the leader's term: the
leader resigns, the next one meets the same object, and nothing anywhere is reconciled again. So an
error of a controller for one owner is logged (once per distinct error), counted in
``loadmaster_controller_errors_total{kind}``, and that owner produces no changes this pass; the
pass goes on with the others. A store error is not the owner's fault and is raised: only the store
failing may end a pass (and, if it persists, the term).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

import structlog

from loadmaster.store.interface import StoreError

log = structlog.get_logger(__name__)

T = TypeVar("T")


class _Incrementable(Protocol):
    def inc(self) -> None: ...


class KindCounter(Protocol):
    """What is needed of a prometheus Counter with the label kind."""

    def labels(self, *, kind: str) -> _Incrementable: ...


class OwnerErrors:
    """Runs one owner's reconcile; remembers the owners whose controller failed last, and why."""

    def __init__(self, counter: KindCounter | None = None) -> None:
        self._counter = counter
        self.failing: dict[tuple[str, str], str] = {}  # (kind, owner) -> the error of its last pass

    def guarded(self, kind: str, owner: str, work: Callable[[], T], fallback: T) -> T:
        """``work()`` (one owner's reconcile, or a look at its spec), or ``fallback`` when it raises
        anything but a store error."""
        try:
            result = work()
        except StoreError:
            raise
        except Exception as error:  # whatever a controller raises stays with its owner
            text = f"{type(error).__name__}: {error}"
            if self.failing.get((kind, owner)) != text:
                log.error(
                    "controller failed for one owner; the others go on", kind=kind, owner=owner, error=text
                )
            self.failing[(kind, owner)] = text
            if self._counter is not None:
                self._counter.labels(kind=kind).inc()
            return fallback
        self.failing.pop((kind, owner), None)
        return result
