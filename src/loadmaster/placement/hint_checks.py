"""A hint is shown only once checked: the engine's own filters, run again on the hinted node with the
hinted change made, must let the task through.

The node is rebuilt alone: a one-node cluster of the node, the tasks holding resources, devices and
ports on it in the working state (Running, bound and Pipelined ones as Running, Releasing ones as
Releasing; the largest GPU shares first, so they fit its devices again), and the task, each changed as
the hint says. Every filter of the task's profile then runs on it: the same code that turned the node away
(``diagnosis.py``), so a hint cannot promise what a rule forbids ("needs GPU devices freed" for a
16-GPU task on 8-GPU nodes, "once its port 80 is free" when something else blocks too).

The change of each category, as the hints word it:

* capacity: ``shortfall`` of every resource it lacks is freed on the node (its largest users of it
  stop, as many as it takes; what the task asks beyond the node's allocatable is never freed), and
  its GPU devices are freed when they do not hold the task;
* ports: the tasks holding the task's ports on the node are gone;
* unschedulable: the node is uncordoned; status: the node is Ready;
* taint: the node has no NoSchedule or NoExecute taint;
* every other category: the task's own rule of that category is lifted (selector and affinity,
  hosts and avoided nodes, GPU models, GPU driver and capabilities, license tier, runtime, volumes,
  topology spread).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

from loadmaster.core.columns.snapshot import BOUND, PIPELINED, RELEASING, ClusterSnapshot, SnapshotError
from loadmaster.core.devices import fits_devices
from loadmaster.core.model import Cluster, Job, Node, Task, TaskStatus
from loadmaster.core.resources import GPU
from loadmaster.placement.context import TaskContext
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.extension_points import ALL, Rejection
from loadmaster.placement.plugins.filters.resource_fit import free_room
from loadmaster.placement.profile import profile_for

# (node, the tasks on it, the task) -> the same, changed as a hint of one category says
Change = Callable[[Node, list[Task], Task], tuple[Node, list[Task], Task]]
_HOLDING = {BOUND: TaskStatus.RUNNING, PIPELINED: TaskStatus.RUNNING, RELEASING: TaskStatus.RELEASING}
_HINTED_JOB = "(hint check)"


def capacity_shortfall(ctx: TaskContext, n: int) -> dict[str, int]:
    """Per resource the task lacks on node ``n`` (not GPUs: devices, see ``gpu_blocked``), how much."""
    snapshot = ctx.snapshot
    free = free_room(ctx)[:, n]  # overcommit room included when the task opted in
    return {
        snapshot.resources[r]: int(ctx.request[r] - free[r]) for r in ctx.fit_rows if free[r] < ctx.request[r]
    }


def gpu_blocked(ctx: TaskContext, n: int) -> bool:
    """Whether the node's free GPU devices do not hold the task (the capacity filter's device check)."""
    cols = np.array([n], dtype=np.int64)
    return bool(ctx.gpu) and not bool(fits_devices(ctx.snapshot.state.devices, ctx.gpu, True, cols)[0])


def _capacity_change(ctx: TaskContext, n: int) -> Change:
    shortfall = capacity_shortfall(ctx, n)
    free_gpus = gpu_blocked(ctx, n)

    def change(node: Node, holders: list[Task], task: Task) -> tuple[Node, list[Task], Task]:
        left = dict(shortfall)
        kept = []
        # The largest users of what is lacking go first, until enough is freed (or nothing is left).
        for holder in sorted(holders, key=lambda h: [-h.request.get(name, 0) for name in shortfall]):
            if any(holder.request.get(name, 0) > 0 and less > 0 for name, less in left.items()):
                left = {name: less - holder.request.get(name, 0) for name, less in left.items()}
            elif not (free_gpus and holder.request.get(GPU)):
                kept.append(holder)
        return node, kept, task

    return change


def _ports_change(ctx: TaskContext, n: int) -> Change:
    def change(node: Node, holders: list[Task], task: Task) -> tuple[Node, list[Task], Task]:
        return node, [h for h in holders if not set(h.ports) & set(task.ports)], task

    return change


def _node_change(**fields: object) -> Change:
    def change(node: Node, holders: list[Task], task: Task) -> tuple[Node, list[Task], Task]:
        return dataclasses.replace(node, **fields), holders, task  # type: ignore[arg-type]

    return change


def _untainted(node: Node, holders: list[Task], task: Task) -> tuple[Node, list[Task], Task]:
    soft = tuple(taint for taint in node.taints if taint.effect == "PreferNoSchedule")
    return dataclasses.replace(node, taints=soft), holders, task


def _task_change(**fields: object) -> Change:
    def change(node: Node, holders: list[Task], task: Task) -> tuple[Node, list[Task], Task]:
        return node, holders, dataclasses.replace(task, **fields)  # type: ignore[arg-type]

    return change


_LIFTED: dict[Rejection, Change] = {
    Rejection.UNSCHEDULABLE: _node_change(unschedulable=False),
    Rejection.STATUS: _node_change(state="Ready"),
    Rejection.TAINT: _untainted,
    Rejection.SELECTOR: _task_change(node_selector={}, required_node_affinity=()),
    Rejection.HOSTS: _task_change(hosts=None, avoid_nodes=()),
    Rejection.GPU_MODEL: _task_change(gpu_models=None),
    Rejection.GPU: _task_change(gpu_match=None),
    Rejection.LICENSE: _task_change(license_tier=None),
    Rejection.RUNTIME: _task_change(runtime=None),
    Rejection.VOLUMES: _task_change(volumes=()),
    Rejection.TOPOLOGY: _task_change(topology_spread_constraints=()),
}


def change_for(ctx: TaskContext, n: int, category: Rejection) -> Change | None:
    """The change a hint of ``category`` on node ``n`` suggests (None: no change could be suggested)."""
    if category == Rejection.CAPACITY:
        return _capacity_change(ctx, n)
    if category == Rejection.PORTS:
        return _ports_change(ctx, n)
    return _LIFTED.get(category)


def _holders(ctx: TaskContext, n: int) -> list[Task]:
    snapshot, state = ctx.snapshot, ctx.snapshot.state
    on_node = np.flatnonzero((state.task_node == n) & (state.task_phase != 0)).tolist()
    name = snapshot.node_names[n]
    holders = [
        dataclasses.replace(snapshot.tasks[t], status=_HOLDING[int(state.task_phase[t])], node=name)
        for t in on_node
        if t != ctx.t and int(state.task_phase[t]) in _HOLDING
    ]
    # Devices are handed out in input order; the largest GPU shares first packs them as tightly as any
    # order the cycle took (first fit decreasing), so the node's holders fit its devices again.
    return sorted(holders, key=lambda task: -task.request.get(GPU, 0))


def fits_once_changed(ctx: TaskContext, n: int, category: Rejection) -> bool:
    """Whether the task passes every filter on node ``n`` once a hint of ``category`` is acted on."""
    change = change_for(ctx, n, category)
    if change is None:
        return False
    snapshot = ctx.snapshot
    task = dataclasses.replace(ctx.task, status=TaskStatus.PENDING, node=None)
    node, holders, task = change(snapshot.nodes[n], _holders(ctx, n), task)
    # One job per holder, named after it: no gang to keep, no two jobs of one name.
    jobs = [Job(holder.name, (dataclasses.replace(holder, job=holder.name),)) for holder in holders]
    own = snapshot.jobs[int(snapshot.task_job[ctx.t])]  # its profile picks the filters
    hinted = dataclasses.replace(task, job=_HINTED_JOB)
    jobs.append(dataclasses.replace(own, name=_HINTED_JOB, tasks=(hinted,), min_available=1))
    try:
        alone = ClusterSnapshot(Cluster((node,), tuple(jobs), config=snapshot.config))
    except SnapshotError:
        return False  # its holders cannot be laid out on it again: nothing checked, nothing promised
    engine = PlacementEngine(alone, profile_for(snapshot.config))
    changed = engine.context(alone.n_tasks - 1)
    return all(bool(f.mask(changed, ALL)[0]) for f in engine.filters_for(changed))
