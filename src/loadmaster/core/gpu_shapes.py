"""The workload's GPU shapes: what GPU tasks typically ask for, as a weighted distribution.

The fragmentation score (``placement/plugins/scorers/gpu_fragmentation.py``) measures a node's free GPU
capacity against these shapes. The distribution is an *input* of a cycle (``SchedulerConfig.gpu_shapes``),
so a cycle stays a pure function of its input: the control plane learns it from the GPU tasks it has seen,
each counted once, with weights that decay with the time passed since (``observe``); a cycle without one
(a scenario file, a benchmark) uses the GPU tasks of its own cluster
(``placement/gpu_fragmentation.own_gpu_shapes``).

A shape is (gpu, cpu, memory, accepted GPU models): the same request with another model list is another
shape, since a task that accepts only T4s needs T4 capacity, not just any GPU.

Decay: a weight observed at time t counts ``2 ** (-(now - t) / half_life_s)`` at ``now``. Only the total
is kept per shape, so ``observe`` scales the whole table by ``2 ** (-(now - as_of_s) / half_life_s)`` and
adds 1 per new task; the result is the same as decaying every observation on its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from loadmaster.core.resources import CPU, GPU, MEMORY

# A day: GPU workloads follow a daily rhythm (training launched by day, batch inference by night),
# so yesterday's mix still says a lot about today's and last week's little.
DEFAULT_HALF_LIFE_S = 86_400.0
# The learned table keeps its heaviest shapes only, so it stays small however varied the requests.
MAX_LEARNED_SHAPES = 256
# Weights below this (a shape unseen for ~40 half-lives) are dropped from the learned table.
MIN_WEIGHT = 1e-12


class GpuRequest(Protocol):
    """What a shape is read from: a task's request (``core.model.Task`` is one). Declared here, so
    the model, whose scheduler config carries the shapes, is not imported back."""

    @property
    def request(self) -> Mapping[str, int]: ...

    @property
    def gpu_models(self) -> tuple[str, ...] | None: ...


@dataclass(frozen=True, slots=True)
class GpuShape:
    gpu: int  # milli-GPU: below 1000 a share of one device, otherwise whole devices
    cpu: int = 0  # millicores
    memory: int = 0  # bytes
    gpu_models: tuple[str, ...] | None = None  # accepted models, sorted; None = any model

    @classmethod
    def of(cls, task: GpuRequest) -> GpuShape | None:
        """The shape of a task's request, or None for a task that requests no GPU."""
        request = task.request
        return cls.of_request(
            request.get(GPU, 0), request.get(CPU, 0), request.get(MEMORY, 0), task.gpu_models
        )

    @classmethod
    def of_request(
        cls, gpu: int, cpu: int, memory: int, gpu_models: tuple[str, ...] | None
    ) -> GpuShape | None:
        """The shape of a request (as a task writes it), or None when it asks for no GPU."""
        if gpu <= 0:
            return None
        models = tuple(sorted(set(gpu_models))) if gpu_models is not None else None
        return cls(gpu, cpu, memory, models)


@dataclass(frozen=True, slots=True)
class GpuShapes:
    """Shapes with their (decayed) weights, heaviest first (ties by shape, so the order is stable).
    ``as_of_s``: the time the weights are decayed to."""

    weights: tuple[tuple[GpuShape, float], ...] = ()
    as_of_s: float = 0.0

    @classmethod
    def counted(cls, shapes: Iterable[GpuShape], as_of_s: float = 0.0) -> GpuShapes:
        """Each shape weighted by how often it occurs."""
        return cls.weighted(Counter(shapes), as_of_s)

    @classmethod
    def weighted(cls, weights: Mapping[GpuShape, float], as_of_s: float = 0.0) -> GpuShapes:
        """The shapes with the weights given (counted elsewhere: per group of equal requests)."""
        return cls(_ordered(weights), as_of_s)

    def observe(
        self, shapes: Iterable[GpuShape], now_s: float, half_life_s: float = DEFAULT_HALF_LIFE_S
    ) -> GpuShapes:
        """This table decayed to ``now_s``, plus one for each of ``shapes`` (seen at ``now_s``). A
        ``now_s`` earlier than ``as_of_s`` (a clock stepping back) decays nothing."""
        factor = 2.0 ** (-max(0.0, now_s - self.as_of_s) / half_life_s)
        table: dict[GpuShape, float] = {shape: w * factor for shape, w in self.weights}
        for shape in shapes:
            table[shape] = table.get(shape, 0.0) + 1.0
        kept = {shape: w for shape, w in table.items() if w >= MIN_WEIGHT}
        return GpuShapes(_ordered(kept)[:MAX_LEARNED_SHAPES], max(now_s, self.as_of_s))


def _ordered(table: Mapping[GpuShape, float]) -> tuple[tuple[GpuShape, float], ...]:
    return tuple(sorted(((s, float(w)) for s, w in table.items()), key=_heaviest_first))


def _heaviest_first(item: tuple[GpuShape, float]) -> tuple[float, tuple[object, ...]]:
    shape, weight = item
    # None (any model) sorts before every list; the shape's fields break ties between equal weights.
    models = (0, ()) if shape.gpu_models is None else (1, shape.gpu_models)
    return -weight, (shape.gpu, shape.cpu, shape.memory, models)
