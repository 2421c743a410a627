"""The per-queue gauges of ``/metrics``, set from the queues report a cycle leaves (``CyclePlan.queues``).

``loadmaster_queue_{allocated,deserved,fair_share,limit}{queue, resource}`` and
``loadmaster_queue_dominant_share{queue}``. Label values are queue names and the cluster's resource
names, never free text. A deserved or limit a queue does not set is not exported (absent, not 0:
an unset limit is no limit). Queues that are gone are dropped (the gauges are cleared first).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.runtime.plane.metrics import QUEUE_FIGURES, ControlPlaneMetrics


def set_queue_gauges(metrics: ControlPlaneMetrics, report: Mapping[str, Mapping[str, Any]]) -> None:
    for gauge in (*metrics.queue_amounts.values(), metrics.queue_dominant_share):
        gauge.clear()
    for queue, entry in report.items():
        for figure in QUEUE_FIGURES:
            for resource, amount in (entry.get(figure) or {}).items():
                metrics.queue_amounts[figure].labels(queue=queue, resource=resource).set(amount)
        metrics.queue_dominant_share.labels(queue=queue).set(entry["dominant_share"])
