"""The GPU fragmentation gauges of ``/metrics`` (``placement/gpu_fragmentation_report.py``), set from the
state a cycle leaves at most every ``period_s`` of the clock (the decide step makes the report where it
runs, ``decision_step.py``, when ``is_due`` says): a report costs a pass over every GPU node, which a
cycle placing a few replicas should not pay each time; a scrape every 15 s or more sees it fresh.
"""

from __future__ import annotations

from loadmaster.placement.gpu_fragmentation_report import GpuFragmentationReport
from loadmaster.runtime.plane.metrics import ControlPlaneMetrics

DEFAULT_PERIOD_S = 15.0  # Prometheus' usual scrape interval


class GpuTelemetry:
    def __init__(self, metrics: ControlPlaneMetrics, period_s: float = DEFAULT_PERIOD_S) -> None:
        self._metrics = metrics
        self.period_s = period_s
        self._last_s: float | None = None

    def is_due(self, now_s: float) -> bool:
        """Whether a cycle at ``now_s`` should make a report (the decide step makes it where it runs)."""
        return self._last_s is None or not 0.0 <= now_s - self._last_s < self.period_s

    def publish(self, report: GpuFragmentationReport, now_s: float) -> None:
        """Set the gauges from ``report``, made by a cycle at ``now_s``."""
        self._last_s = now_s
        metrics = self._metrics
        metrics.gpu_fragmented.clear()  # nodes that left must not linger
        metrics.gpu_largest_schedulable.clear()
        for name, node in report.nodes.items():
            metrics.gpu_fragmented.labels(node=name).set(node.fragmented_gpus)
            metrics.gpu_largest_schedulable.labels(node=name).set(node.largest_gpus)
        metrics.cluster_gpu_fragmented.set(report.fragmented_gpus)
        metrics.cluster_gpu_largest_schedulable.set(report.largest_gpus)
