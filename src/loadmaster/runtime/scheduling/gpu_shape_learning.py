"""The GPU shapes the control plane has seen, for the fragmentation score (``core/gpu_shapes.py``).

Every replica is counted once, the first time a cycle's cluster holds it (Pending, or already placed when
this server starts leading), with weights that halve every ``half_life_s`` of the clock passed to
``observe``: the distribution follows the workload as it changes, and a cycle gets it as an input
(``SchedulerConfig.gpu_shapes``), so the cycle itself stays pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from loadmaster.core.gpu_shapes import DEFAULT_HALF_LIFE_S, GpuShape, GpuShapes
from loadmaster.runtime.scheduling.model.model_entries import ReplicaState

# Names of gone replicas are dropped once the counted set outgrows twice the cluster's by this much: a
# set operation over the cluster's replicas, done rarely.
FORGET_SLACK = 1024


class GpuShapeLearning:
    def __init__(self, half_life_s: float = DEFAULT_HALF_LIFE_S) -> None:
        self.half_life_s = half_life_s
        self.shapes = GpuShapes()
        self._counted: set[str] = set()
        self._started = False

    def observe(
        self, attempted: Iterable[ReplicaState], every: Mapping[str, ReplicaState], now_s: float
    ) -> GpuShapes:
        """The distribution as of ``now_s``, with the replicas not counted yet: the cycle's ``attempted``
        ones, and on the first call ``every`` replica of the cluster (the work already placed)."""
        seen = list(every.values()) if not self._started else list(attempted)
        self._started = True
        new = [r for r in seen if r.name not in self._counted]
        self._counted.update(r.name for r in new)
        if len(self._counted) > 2 * len(every) + FORGET_SLACK:  # forget replicas that are gone
            self._counted &= every.keys()
        shapes = [shape for r in new if (shape := GpuShape.of(r.as_task())) is not None]
        if shapes:  # decaying alone scales every weight alike: the distribution would not change
            self.shapes = self.shapes.observe(shapes, now_s, self.half_life_s)
        return self.shapes
