"""Objects the scheduler cannot convert into its model, skipped so that every other object is scheduled.

A stored object can hold what the engine cannot take: written before today's admission bounds, or by
a bug. Converting it raises; were the error to reach the cycle, no replica of any object would be
placed again. So each conversion (a node, a queue, a worker template, a job's replicas) that raises
is skipped, logged once and counted in ``loadmaster_skipped_objects_total{kind, reason}``, and the
cycle goes on with everything else; a job's Pending replicas also get a Phase condition saying why
(``InvalidSpec``). The label values are fixed: ``kind`` is one of SKIPPED_KINDS, ``reason`` one of
``out_of_range`` (a number above core.limits: QuantityError, OverflowError) or ``unreadable``.
"""

from __future__ import annotations

from typing import Protocol

import structlog

from loadmaster.core.resources import QuantityError

log = structlog.get_logger(__name__)

NODE_KIND, QUEUE_KIND, TEMPLATE_KIND, JOB_KIND = "node", "queue", "worker_template", "job"
SKIPPED_KINDS = (NODE_KIND, QUEUE_KIND, TEMPLATE_KIND, JOB_KIND)
OUT_OF_RANGE, UNREADABLE = "out_of_range", "unreadable"
# The Phase condition reason of a Pending replica whose job cannot be converted.
INVALID_SPEC_REASON = "InvalidSpec"


class LabelledCounter(Protocol):
    """What is needed of a prometheus Counter with labels kind and reason."""

    def labels(self, *, kind: str, reason: str) -> _Incrementable: ...


class _Incrementable(Protocol):
    def inc(self) -> None: ...


def skip_reason(error: Exception) -> str:
    return OUT_OF_RANGE if isinstance(error, QuantityError | OverflowError) else UNREADABLE


class SkippedObjects:
    """The objects skipped now, by (kind, name), with why; counts each skip once, not once per cycle."""

    def __init__(self, counter: LabelledCounter | None = None) -> None:
        self._counter = counter
        self.current: dict[tuple[str, str], str] = {}

    def record(self, kind: str, name: str, error: Exception) -> str:
        """Note that ``name`` was skipped because of ``error``; returns the message that says why."""
        message = f"{kind} {name} cannot be scheduled and is skipped: {type(error).__name__}: {error}"
        if self.current.get((kind, name)) != message:
            self.current[(kind, name)] = message
            reason = skip_reason(error)
            if self._counter is not None:
                self._counter.labels(kind=kind, reason=reason).inc()
            log.warning(
                "object skipped by the scheduler", kind=kind, name=name, reason=reason, error=str(error)
            )
        return message

    def clear(self, kind: str, name: str) -> None:
        """``name`` converts again (fixed or deleted)."""
        self.current.pop((kind, name), None)
