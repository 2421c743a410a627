"""A running task keeps the GPU devices its replica's status records (the ids its process was given),
so a task placed next to it never gets the same device; a record that no longer fits gives way to the
placement rule."""

from __future__ import annotations

from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU, GPU_DEVICE
from loadmaster.cycle import run_cycle

NODE = Node("n1", {GPU: 2 * GPU_DEVICE}, {GPU: 2 * GPU_DEVICE})


def _running(name: str, devices: tuple[int, ...], gpus: int = 1) -> Job:
    task = Task(name, name, {GPU: gpus * GPU_DEVICE}, TaskStatus.RUNNING, "n1", devices=devices)
    return Job(name, (task,))


def _pending(name: str) -> Job:
    return Job(name, (Task(name, name, {GPU: GPU_DEVICE}),))


def test_a_running_task_keeps_its_recorded_device_and_a_new_task_gets_the_other() -> None:
    # By the placement rule alone the running task would sit on device 0 and the new one on device 1.
    plan = run_cycle(Cluster((NODE,), (_running("old", (1,)), _pending("new"))))
    assert plan.tasks["old"].devices == (1,)
    assert plan.tasks["new"].devices == (0,)


def test_two_running_tasks_recording_the_same_device_do_not_share_it() -> None:
    plan = run_cycle(Cluster((NODE,), (_running("a", (1,)), _running("b", (1,)))))
    assert plan.tasks["a"].devices == (1,)
    assert plan.tasks["b"].devices == (0,)  # the record does not fit: the rule picks a free device


def test_a_record_of_another_shape_or_of_a_device_the_node_lacks_gives_way_to_the_rule() -> None:
    plan = run_cycle(Cluster((NODE,), (_running("two", (1,), gpus=2),)))
    assert plan.tasks["two"].devices == (0, 1)
    plan = run_cycle(Cluster((NODE,), (_running("far", (7,)),)))
    assert plan.tasks["far"].devices == (0,)
