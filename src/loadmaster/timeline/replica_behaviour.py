"""How the simulated world treats a replica beyond starting and stopping it (timeline spec, "The
simulated world"): its image's pulls and start delay, how long a stop takes, and the health timings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loadmaster.runtime.plane.stop_orders import persisted_grace_s

# A failing pull is retried this often (the timeline spec: "retried every 10 s").
PULL_RETRY_S = 10.0
# After a restart, a replica whose health check fails is reported degraded this much later.
DEGRADED_AFTER_S = 10.0


@dataclass(frozen=True, slots=True)
class ImageBehaviour:
    pull_fails: bool = False
    start_delay_s: float = 0.0


def stop_grace_s(replica: Mapping[str, Any]) -> float:
    """The grace a stop of ``replica`` waits at most: the stop order the leader wrote with Terminating,
    else the replica's own grace (runtime/plane/stop_orders.py)."""
    order = (replica.get("status") or {}).get("stop") or {}
    grace = order.get("grace_period_s")
    return float(grace) if isinstance(grace, int | float) else persisted_grace_s(replica.get("spec") or {})
