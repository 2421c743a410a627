"""How the simulated world treats a replica beyond starting and stopping it (timeline spec, "The
simulated world"): its image's pulls and start delay, how long a stop takes, and the health timings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadmaster.core.resources import QuantityError, parse_duration_s

# A failing pull is retried this often (the timeline spec: "retried every 10 s").
PULL_RETRY_S = 10.0
# After a restart, a replica whose health check fails is reported degraded this much later.
DEGRADED_AFTER_S = 10.0
# What a stop waits for when the replica declares no grace period (Docker's and the seeds' 10 s).
DEFAULT_STOP_GRACE_S = 10.0


@dataclass(frozen=True, slots=True)
class ImageBehaviour:
    pull_fails: bool = False
    start_delay_s: float = 0.0


def stop_grace_s(replica: Mapping[str, Any]) -> float:
    """The grace a stop of ``replica`` waits at most: the stop order the leader wrote (status.stop), else
    its spec's ``stop_grace_period``, else DEFAULT_STOP_GRACE_S."""
    order = (replica.get("status") or {}).get("stop") or {}
    if isinstance(order.get("grace_period_s"), int | float):
        return float(order["grace_period_s"])
    declared = (replica.get("spec") or {}).get("stop_grace_period")
    try:
        return parse_duration_s(declared) if declared is not None else DEFAULT_STOP_GRACE_S
    except QuantityError:
        return DEFAULT_STOP_GRACE_S
