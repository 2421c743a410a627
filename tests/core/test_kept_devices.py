"""A placed task's stored GPU devices (``status.devices``, what its process was given) are the ones the
snapshot counts: input order would derive others, and a new task could then be given a device in use."""

from __future__ import annotations

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.cycle import run_cycle

GPU = "gpu"
ALLOC = {"cpu": 8000, GPU: 4 * GPU_DEVICE}


def running(name: str, gpus: float, devices: tuple[int, ...] = ()) -> Job:
    request = {"cpu": 100, GPU: int(gpus * GPU_DEVICE)}
    return Job(name, (Task(name, name, request, TaskStatus.RUNNING, "n1", devices=devices),))


def devices_of(snapshot: ClusterSnapshot, name: str) -> tuple[int, ...]:
    return snapshot.state.records[snapshot.task_index[name]].devices


def test_stored_devices_are_kept_whatever_the_input_order() -> None:
    # Derived in input order, "a" would take device 0 and "b" device 1: stored, they hold 2 and 0.
    jobs = (running("a", 1, (2,)), running("b", 1, (0,)))
    snapshot = ClusterSnapshot(Cluster((Node("n1", ALLOC, ALLOC),), jobs))
    assert (devices_of(snapshot, "a"), devices_of(snapshot, "b")) == ((2,), (0,))


def test_a_task_without_stored_devices_does_not_take_one_a_later_task_stored() -> None:
    jobs = (running("derived", 1), running("stored", 1, (0,)))
    snapshot = ClusterSnapshot(Cluster((Node("n1", ALLOC, ALLOC),), jobs))
    assert (devices_of(snapshot, "stored"), devices_of(snapshot, "derived")) == ((0,), (1,))


def test_a_shared_gpu_keeps_its_device_and_a_new_task_gets_a_free_one() -> None:
    pending = Job("new", (Task("new", "new", {"cpu": 100, GPU: 2 * GPU_DEVICE}),))
    jobs = (running("half", 0.5, (1,)), running("whole", 1, (3,)), pending)
    plan = run_cycle(Cluster((Node("n1", ALLOC, ALLOC),), jobs))
    assert (plan.tasks["new"].node, plan.tasks["new"].devices) == ("n1", (0, 2))


def test_stored_devices_that_no_longer_fit_are_placed_by_the_rule() -> None:
    # Device 7 does not exist on a 4-GPU node (it shrank): the task gets devices by the rule.
    snapshot = ClusterSnapshot(Cluster((Node("n1", ALLOC, ALLOC),), (running("moved", 1, (7,)),)))
    assert devices_of(snapshot, "moved") == (0,)
