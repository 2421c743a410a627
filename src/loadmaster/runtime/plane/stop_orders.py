"""How a replica is stopped (JACO's shutdown semantics): its ``stop_signal``, then up to its
``stop_grace_period`` before SIGKILL, on every stop (deleted, scaled down, replaced, restarted, evicted,
drained, moved, a time-slot's end).

Every write that makes a replica Terminating also writes ``status.stop: {signal, grace_period_s}``, so
the agent that stops it does not need to know why or who asked. A negative grace asked by a caller
means "the persisted value", the replica's own ``stop_grace_period`` (as JACO's ``Stop`` with a negative
timeout defers to the container's configured one), so each service keeps its own deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.core.resources import QuantityError, parse_duration_s

DEFAULT_STOP_SIGNAL = "SIGTERM"
# The seeds' grace when a service declares none (JACO before issue #114, and Docker's default).
DEFAULT_STOP_GRACE_S = 10.0
PERSISTED = -1.0  # the grace a stop asks for when it has no reason to differ from the replica's own


def stop_order(spec: Mapping[str, Any], grace_s: float = PERSISTED) -> dict[str, Any]:
    """``{signal, grace_period_s}`` for stopping a replica with ``spec``; ``grace_s`` < 0: its own grace."""
    if grace_s < 0:
        grace_s = persisted_grace_s(spec)
    return {"signal": str(spec.get("stop_signal") or DEFAULT_STOP_SIGNAL), "grace_period_s": grace_s}


def persisted_grace_s(spec: Mapping[str, Any]) -> float:
    declared = spec.get("stop_grace_period")
    if declared is None:
        return DEFAULT_STOP_GRACE_S
    try:
        return parse_duration_s(declared)
    except QuantityError:  # validated on apply; a stored value from before the check falls back
        return DEFAULT_STOP_GRACE_S
