"""The GPU shape distribution: what a task's shape is, how shapes are counted, how old ones fade."""

from __future__ import annotations

import pytest

from loadmaster.core.gpu_shapes import MAX_LEARNED_SHAPES, GpuShape, GpuShapes
from loadmaster.core.model import Task

GI = 2**30


def task(gpu: int = 0, models: tuple[str, ...] | None = None, name: str = "t") -> Task:
    request = {"cpu": 4000, "memory": 16 * GI}
    if gpu:
        request["gpu"] = gpu
    return Task(name, "job", request, gpu_models=models)


def weights(shapes: GpuShapes) -> dict[GpuShape, float]:
    return dict(shapes.weights)


def test_a_task_without_gpu_has_no_shape() -> None:
    assert GpuShape.of(task()) is None


def test_a_shape_holds_the_request_and_the_accepted_models_sorted_once() -> None:
    shape = GpuShape.of(task(500, ("V100M32", "T4", "V100M32")))
    assert shape == GpuShape(500, 4000, 16 * GI, ("T4", "V100M32"))


def test_the_same_request_with_other_models_is_another_shape() -> None:
    assert GpuShape.of(task(1000, ("T4",))) != GpuShape.of(task(1000))


def test_shapes_are_weighted_by_how_often_they_occur() -> None:
    whole, half = GpuShape(1000, 4000, 16 * GI), GpuShape(500, 4000, 16 * GI)
    shapes = GpuShapes.counted([whole, half, whole])
    assert weights(shapes) == {whole: 2.0, half: 1.0}


def test_shapes_come_heaviest_first_and_equal_weights_in_a_fixed_order() -> None:
    tasks = (task(250), task(2000), task(2000), task(1000, ("T4",)), task(1000))
    shapes = GpuShapes.counted(GpuShape(t.request["gpu"], 4000, 16 * GI, t.gpu_models) for t in tasks)
    assert [s.gpu for s, _ in shapes.weights] == [2000, 250, 1000, 1000]
    assert [s.gpu_models for s, _ in shapes.weights][2:] == [None, ("T4",)]


@pytest.mark.parametrize(
    ("elapsed_s", "old_weight"),
    [
        pytest.param(0.0, 1.0, id="no-time-passed"),
        pytest.param(3600.0, 0.5, id="one-half-life"),
        pytest.param(7200.0, 0.25, id="two-half-lives"),
        pytest.param(-600.0, 1.0, id="clock-stepped-back"),
    ],
)
def test_an_observation_fades_by_half_every_half_life(elapsed_s: float, old_weight: float) -> None:
    old, new = GpuShape(1000), GpuShape(500)
    learned = GpuShapes().observe([old], now_s=1000.0, half_life_s=3600.0)
    learned = learned.observe([new], now_s=1000.0 + elapsed_s, half_life_s=3600.0)
    assert weights(learned) == pytest.approx({old: old_weight, new: 1.0})
    assert learned.as_of_s == max(1000.0, 1000.0 + elapsed_s)


def test_decaying_in_steps_equals_decaying_at_once() -> None:
    start = GpuShapes().observe([GpuShape(1000)], now_s=0.0, half_life_s=100.0)
    stepped = start.observe([], 50.0, 100.0).observe([GpuShape(500)], 150.0, 100.0)
    at_once = start.observe([GpuShape(500)], 150.0, 100.0)
    assert weights(stepped) == pytest.approx(weights(at_once))


def test_the_learned_table_keeps_only_its_heaviest_shapes() -> None:
    many = [GpuShape(10 + i) for i in range(MAX_LEARNED_SHAPES + 5)]
    learned = GpuShapes().observe([*many, GpuShape(10)], now_s=0.0)
    assert len(learned.weights) == MAX_LEARNED_SHAPES
    assert learned.weights[0] == (GpuShape(10), 2.0)
