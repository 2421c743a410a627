"""The Statement: an operation log over the snapshot's working state, with exact undo.

Every public operation (``allocate``, ``pipeline``, ``evict``) is recorded as a short list of
*primitive* transitions, each with an exact inverse (integer add/subtract, or a saved previous value):

* ``occupy(t, n)``: the task's request, devices, ports and volume charges are added to node ``n``;
* ``release(t, n)``: they move from "used" to "releasing" on ``n`` (an eviction in progress);
* ``set(t)``: the task's phase / node / devices records change (previous values kept).

``checkpoint()`` is the log length; ``rollback(cp)`` applies inverses in reverse order down to ``cp``,
so the arrays come back bit for bit (a property test checks this). ``commit()`` turns the log into
decisions and makes it permanent; ``discard()`` is ``rollback(0)``.

``allocate_many(tasks, nodes)`` binds a run of identical pending tasks as ONE operation: the node
arrays change by ``request * copies`` per node in one vector pass, and its undo restores the saved
task arrays. It has exactly the effect of ``allocate(t, n)`` for each pair in order (same arrays, same
devices, same decisions at commit); a property test checks this.

Every node whose working state an operation (or its undo) changes is appended to the snapshot's
``NodeChanges`` log, so caches of per-node values (the engine's per-class totals) refresh only those nodes.

Listeners (queue usage accounting) are told when tasks start or stop counting as allocated (bound or
pipelined), including during undo, so they stay in step without their own log. ``listener(t, delta)``:
``|delta|`` tasks identical to ``t`` (same job, same request) start (+) or stop (-) counting; single
operations pass +-1, a batched one passes each job's count once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.snapshot import (
    BOUND,
    NO_NODE,
    PENDING,
    PIPELINED,
    RELEASING,
    ClusterSnapshot,
    IntArray,
    SnapshotError,
    TaskRecord,
)
from loadmaster.core.columns.volumes import Charges, apply_charges
from loadmaster.core.devices import place_on_devices
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.core.working.decisions import BindRun, Decision, decisions_from_ops
from loadmaster.core.working.eviction_run import EvictionRun, like_runs, plain_evictions
from loadmaster.core.working.node_changes import NodeChanges

ACTIVE_PHASES = (BOUND, PIPELINED)
# (task index, +k when k tasks like it (same job, same request) start counting as allocated / -k when
# they stop)
AllocationListener = Callable[[int, int], None]


OperationKind = Literal["allocate", "pipeline", "evict", "unevict"]
PlacementKind = Literal["allocate", "pipeline"]
PrimitiveKind = Literal["occupy", "release", "unrelease", "set"]


class Primitive(NamedTuple):
    """One exactly invertible transition of an operation (see the module doc). A NamedTuple: immutable
    and named, and about as cheap to build as the plain tuple it replaces on the hot path."""

    kind: PrimitiveKind
    task: int
    node: int = NO_NODE  # the node charged or released (not used by "set")
    devices: tuple[int, ...] = ()  # the GPU devices charged or released (not used by "set")
    # "set": the record written (the previous one is kept for undo); "occupy": the new record, whose
    # volume pool charges are applied
    record: TaskRecord | None = None


# Primitives are made on the hot path (two per placement or eviction tried): tuple.__new__ skips the
# NamedTuple constructor's Python-level argument handling, which costs twice as much (measured 0.43 vs
# 0.20 us per placement's pair) and made the 1,000-task gang case 4-6 % slower.
_new_tuple = tuple.__new__


def _primitive(
    kind: PrimitiveKind, task: int, node: int, devices: tuple[int, ...], record: TaskRecord | None
) -> Primitive:
    return _new_tuple(Primitive, (kind, task, node, devices, record))


def _set(task: int, record: TaskRecord) -> Primitive:
    return _new_tuple(Primitive, ("set", task, NO_NODE, (), record))


@dataclass(frozen=True, slots=True)
class Operation:
    kind: OperationKind
    task: int
    node: int
    action: str
    reason: str
    primitives: tuple[Primitive, ...]


@dataclass(frozen=True, slots=True)
class BatchAllocation:
    """``allocate(tasks[i], nodes[i])`` for a run of identical pending tasks, as one log entry.

    Node arrays change by ``request * counts[i]`` on ``used_nodes[i]``; GPU devices by one share at each
    ``(device_nodes[i], device_ids[i])``. Undo subtracts the same amounts and writes back the task arrays
    saved before (``previous_*``), so it is exact."""

    tasks: IntArray  # [k]
    nodes: IntArray  # [k]
    action: str
    reason: str
    used_nodes: IntArray  # distinct nodes of ``nodes``
    counts: IntArray  # tasks placed on each of them
    device_nodes: IntArray
    device_ids: IntArray
    previous_node: npt.NDArray[np.int32]
    previous_release_node: npt.NDArray[np.int32]
    previous_records: dict[int, TaskRecord]

    def binds(self) -> BindRun:
        """What ``allocate`` for each task would have logged, for decisions: a bind each."""
        return BindRun(self.action, self.reason, self.tasks.tolist(), self.nodes.tolist())


class Statement:
    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.snapshot = snapshot
        self.state = snapshot.state
        self.ops: list[Operation | BatchAllocation | EvictionRun] = []
        self.listeners: list[AllocationListener] = []
        self._records = snapshot.state.records
        self.changes = NodeChanges.of(snapshot)
        # previous records of each task, pushed by "set" and popped by its undo
        self._history: dict[int, list[TaskRecord]] = {}

    # -- queries ------------------------------------------------------------------------------------

    def record(self, t: int) -> TaskRecord:
        return self.snapshot.record_of(t)

    def checkpoint(self) -> int:
        return len(self.ops)

    # -- operations ---------------------------------------------------------------------------------

    def allocate(self, t: int, n: int, action: str = "allocate", reason: str = "") -> None:
        """Bind a Pending task to node ``n`` using idle resources only."""
        self._place(t, n, "allocate", use_releasing=False, action=action, reason=reason)

    def pipeline(self, t: int, n: int, action: str = "allocate", reason: str = "") -> None:
        """Place a task on ``n`` counting Releasing resources as free (it starts once they are gone).

        A task evicted earlier in this statement and pipelined back onto its own node is simply
        un-evicted (it keeps running there), as in KAI, provided its GPU devices are still free;
        otherwise it is placed on other devices of that node.
        """
        current = self.record(t)
        if (
            current.phase == RELEASING
            and current.node == n
            and self.snapshot.input_running_mask[t]
            and self._devices_restorable(t, current)
        ):
            self._run(Operation("unevict", t, n, action, reason, self._unevict_primitives(t, current)))
            return
        self._place(t, n, "pipeline", use_releasing=True, action=action, reason=reason)

    def allocate_many(
        self,
        tasks: Sequence[int],
        nodes: Sequence[int] | IntArray,
        action: str = "allocate",
        reason: str = "",
    ) -> None:
        """Bind ``tasks[i]`` to ``nodes[i]`` for every i, as one operation: the same effect as calling
        ``allocate`` for each pair in order. The tasks must be pending and identical in request; tasks
        with host ports, volumes or a fraction of a GPU (whose placement depends on order in ways
        kept in one place) go through ``allocate`` one by one."""
        task_array = np.asarray(tasks, dtype=np.int64)
        node_array = np.asarray(nodes, dtype=np.int64)
        if task_array.shape != node_array.shape or task_array.ndim != 1:
            raise ValueError(f"allocate_many: {len(tasks)} tasks but {len(nodes)} nodes")
        if task_array.size == 0:
            return
        snapshot, state = self.snapshot, self.state
        placed = task_array[state.task_phase[task_array] != PENDING]
        if placed.size:
            raise SnapshotError(f"task {snapshot.tasks[int(placed[0])].name} is already placed")
        first = int(task_array[0])
        for requests in (snapshot.task_request, snapshot.task_request_nz):
            if not (requests[:, task_array] == requests[:, first, None]).all():
                raise ValueError("allocate_many: the tasks must have identical requests")
        gpu = int(snapshot.task_request[snapshot.gpu_row, first])
        if 0 < gpu < GPU_DEVICE or snapshot.task_has_extras[task_array].any():  # host ports or volumes
            for t, n in zip(task_array.tolist(), node_array.tolist(), strict=True):
                self.allocate(t, n, action, reason)
            return
        used_nodes, inverse, counts = np.unique(node_array, return_inverse=True, return_counts=True)
        devices, device_nodes, device_ids = self._whole_devices(
            node_array, used_nodes, inverse, gpu // GPU_DEVICE
        )
        records = state.records
        op = BatchAllocation(
            task_array, node_array, action, reason, used_nodes, counts, device_nodes, device_ids,
            state.task_node[task_array], state.task_release_node[task_array],
            {t: records[t] for t in task_array.tolist() if t in records},
        )  # fmt: skip
        self._charge_batch(op, sign=1)
        state.task_phase[task_array] = BOUND
        state.task_node[task_array] = node_array
        state.task_release_node[task_array] = NO_NODE
        for t in op.previous_records:
            del records[t]
        if gpu:
            for t, n, taken in zip(task_array.tolist(), node_array.tolist(), devices, strict=True):
                records[t] = TaskRecord(BOUND, n, NO_NODE, taken, (), ())
        self._tell_listeners(task_array, sign=1)
        self.ops.append(op)

    def _whole_devices(
        self, nodes: IntArray, used_nodes: IntArray, inverse: IntArray, whole: int
    ) -> tuple[tuple[tuple[int, ...], ...], IntArray, IntArray]:
        """Devices for tasks of ``whole`` devices each, as ``place_on_devices`` gives them one by one:
        the i-th task placed on a node takes its fully free devices i*whole .. (i+1)*whole - 1 (in
        index order). ``used_nodes[inverse] == nodes``."""
        if whole == 0:
            empty = np.zeros(0, dtype=np.int64)
            return ((),) * nodes.size, empty, empty
        devices = self.state.devices
        # a bind: what Releasing tasks hold is not free
        fully_free = (devices.used[used_nodes] + devices.releasing[used_nodes] == 0) & (
            devices.capacity[used_nodes] > 0
        )
        free_first = np.argsort(~fully_free, axis=1, kind="stable")  # [U, D] free devices first, by index
        by_node = np.argsort(inverse, kind="stable")
        grouped = inverse[by_node]
        rank = np.empty_like(by_node)  # how many tasks before this one go to the same node
        rank[by_node] = np.arange(by_node.size) - np.searchsorted(grouped, grouped)
        slots = rank[:, None] * whole + np.arange(whole)  # [k, whole]
        left = fully_free.sum(axis=1)[inverse] - rank * whole
        short = np.flatnonzero(left < whole)
        if short.size:
            i = int(short[0])
            raise SnapshotError(
                f"a task needs {whole} whole GPU devices; "
                f"node {int(nodes[i])} has {max(int(left[i]), 0)} free"
            )
        ids = free_first[inverse[:, None], slots]
        taken = tuple(map(tuple, ids.tolist()))
        return taken, np.repeat(nodes, whole), ids.ravel()

    def _charge_batch(self, op: BatchAllocation, sign: int) -> None:
        snapshot, state = self.snapshot, self.state
        first, nodes = int(op.tasks[0]), op.used_nodes
        self.changes.add(nodes)
        delta = sign * snapshot.task_request[:, first, None] * op.counts
        state.node_used[:, nodes] += delta
        state.node_free[:, nodes] -= delta
        state.node_idle[:, nodes] -= delta
        state.node_used_nz[:, nodes] += sign * snapshot.task_request_nz[:, first, None] * op.counts
        state.node_tasks[nodes] += sign * op.counts
        if op.device_ids.size:  # whole devices: each appears once per node, so fancy-index += is exact
            state.devices.used[op.device_nodes, op.device_ids] += sign * GPU_DEVICE

    def _undo_batch(self, op: BatchAllocation) -> None:
        state, records = self.state, self._records
        self._charge_batch(op, sign=-1)
        state.task_phase[op.tasks] = PENDING
        state.task_node[op.tasks] = op.previous_node
        state.task_release_node[op.tasks] = op.previous_release_node
        for t in op.tasks.tolist():
            records.pop(t, None)
        records.update(op.previous_records)
        self._tell_listeners(op.tasks, sign=-1)

    def _tell_listeners(self, tasks: IntArray, sign: int) -> None:
        """One call per run of consecutive tasks of the same job and request: ``listener(first task,
        +-count)``."""
        if self.listeners:
            self._tell(like_runs(self.snapshot, tasks), sign)

    def _tell(self, runs: list[tuple[int, int]], sign: int) -> None:
        for first, size in runs:
            for listener in self.listeners:
                listener(first, sign * size)

    def _devices_restorable(self, t: int, current: TaskRecord) -> bool:
        """Whether every device the task held still has room for its share (nothing took it meanwhile)."""
        if not current.devices:
            return True
        devices, n = self.state.devices, current.node
        gpu = int(self.snapshot.task_request[self.snapshot.gpu_row, t])
        share = min(gpu, GPU_DEVICE) if gpu else GPU_DEVICE  # no count: gpus: all, whole devices
        return all(devices.capacity[n, d] - devices.used[n, d] >= share for d in current.devices)

    def evict(self, t: int, action: str, reason: str) -> None:
        """Start releasing a Running task: its resources become 'releasing' on its node."""
        current = self.record(t)
        if current.phase != BOUND or not self.snapshot.input_running_mask[t]:
            raise SnapshotError(
                f"only a task Running in the input can be evicted: {self.snapshot.tasks[t].name}"
            )
        new = TaskRecord(RELEASING, current.node, NO_NODE, current.devices, (), current.pools)
        primitives = (_primitive("release", t, current.node, current.devices, None), _set(t, new))
        self._run(Operation("evict", t, current.node, action, reason, primitives))

    def evict_many(self, tasks: Sequence[int], action: str, reason: str) -> None:
        """``evict`` each of ``tasks`` (distinct, ascending) in turn; as one log entry (``EvictionRun``)
        when none holds devices, volume charges or host ports, which is then one vector pass."""
        task_array = np.asarray(tasks, dtype=np.int64)
        if task_array.size < 2 or not plain_evictions(self.snapshot, task_array):
            for t in tasks:
                self.evict(t, action, reason)
            return
        run = EvictionRun.of(self.snapshot, task_array, action, reason)
        self.changes.add(run.changed_nodes())
        run.apply(self.state, undo=False)
        self._tell(run.like_runs, sign=-1)
        self.ops.append(run)

    def rollback(self, checkpoint: int) -> None:
        while len(self.ops) > checkpoint:
            op = self.ops.pop()
            if isinstance(op, BatchAllocation):
                self._undo_batch(op)
                continue
            if isinstance(op, EvictionRun):
                self.changes.add(op.changed_nodes())
                op.apply(self.state, undo=True)
                self._tell(op.like_runs, sign=1)
                continue
            for primitive in reversed(op.primitives):
                self._apply(primitive, undo=True)

    def discard(self) -> None:
        self.rollback(0)

    def commit(self, reason: str | None = None) -> list[Decision]:
        """Make every operation permanent and return them as decisions (net effect per task);
        ``reason`` (when given) explains every one of them instead of the operations' own."""
        ops: list[Operation | BindRun] = []
        for op in self.ops:
            if isinstance(op, BatchAllocation):
                ops.append(op.binds())
            elif isinstance(op, EvictionRun):  # what ``evict`` of each task would have logged
                ops.extend(
                    Operation("evict", t, n, op.action, op.reason, ())
                    for t, n in zip(op.tasks.tolist(), op.nodes.tolist(), strict=True)
                )
            else:
                ops.append(op)
        decisions = decisions_from_ops(self.snapshot, ops, reason)
        self.ops.clear()
        self._history.clear()
        return decisions

    # -- internals ----------------------------------------------------------------------------------

    def _place(
        self,
        t: int,
        n: int,
        kind: Literal["allocate", "pipeline"],
        use_releasing: bool,
        action: str,
        reason: str,
    ) -> None:
        snapshot, current = self.snapshot, self.record(t)
        if current.phase in ACTIVE_PHASES:
            raise SnapshotError(f"task {snapshot.tasks[t].name} is already placed")
        task = snapshot.tasks[t]
        gpu = int(snapshot.task_request[snapshot.gpu_row, t])
        if not gpu and task.gpu_all:  # every device of the node
            gpu = int(snapshot.node_alloc[snapshot.gpu_row, n])
        devices: tuple[int, ...] = ()
        if gpu:
            found = place_on_devices(self.state.devices, n, gpu, use_releasing=use_releasing)
            if found is None:
                raise SnapshotError(f"task {snapshot.tasks[t].name} does not fit the GPU devices of node {n}")
            devices = found
        pools: Charges = ()
        if task.volumes:
            charges = snapshot.pools.assign(self.state.pool_used, n, task.volumes)
            if charges is None:
                raise SnapshotError(f"task {task.name} finds no volume pool with room on node {n}")
            pools = charges
        moving = current.phase == RELEASING
        new = TaskRecord(
            BOUND if kind == "allocate" else PIPELINED,
            n,
            current.node if moving else NO_NODE,
            devices,
            current.devices if moving else (),
            pools,
        )
        primitives = (_primitive("occupy", t, n, devices, new), _set(t, new))
        self._run(Operation(kind, t, n, action, reason, primitives))

    def _unevict_primitives(self, t: int, current: TaskRecord) -> tuple[Primitive, ...]:
        restored = TaskRecord(BOUND, current.node, NO_NODE, current.devices, (), current.pools)
        return (
            _primitive("unrelease", t, current.node, current.devices, None),
            _set(t, restored),
        )

    def _run(self, op: Operation) -> None:
        for primitive in op.primitives:
            self._apply(primitive, undo=False)
        self.ops.append(op)

    def _apply(self, primitive: Primitive, undo: bool) -> None:
        kind, t, n, devices, record = primitive
        if kind == "set":
            self._set(t, record, undo)
            return
        # occupy/unrelease add to "used"; release takes from it; an undo flips the direction
        adds = kind in ("occupy", "unrelease")
        sign = (1 if adds else -1) * (-1 if undo else 1)
        if kind == "occupy":
            assert record is not None
            self._occupy(t, n, devices, record.pools, sign)
        else:  # release / unrelease: move between used and releasing; sign=+1 means back to used
            self._shift(t, n, devices, sign)

    def _set(self, t: int, record: TaskRecord | None, undo: bool) -> None:
        assert record is not None
        if undo:
            previous = self._history[t].pop()
            self._write_record(t, previous)
        else:
            self._history.setdefault(t, []).append(self.record(t))
            self._write_record(t, record)

    def _write_record(self, t: int, record: TaskRecord) -> None:
        previous = self.record(t)
        # per-node counts of tasks (by job, by phase) change on the node the task leaves and the one it joins
        for n in {previous.node, previous.release_node, record.node, record.release_node} - {NO_NODE}:
            self.changes.add(n)
        was_active = previous.phase in ACTIVE_PHASES
        self.state.task_phase[t] = record.phase
        self.state.task_node[t] = record.node
        self.state.task_release_node[t] = record.release_node
        # Store a record only when the arrays cannot express it (canonical form: undo then leaves the
        # dict exactly as it was).
        if record.devices or record.release_devices or record.pools:
            self._records[t] = record
        else:
            self._records.pop(t, None)
        is_active = record.phase in ACTIVE_PHASES
        if was_active != is_active:
            for listener in self.listeners:
                listener(t, 1 if is_active else -1)

    def _occupy(self, t: int, n: int, devices: tuple[int, ...], pools: Charges, sign: int) -> None:
        snapshot, state = self.snapshot, self.state
        self.changes.add(n)
        request, request_nz, gpu = snapshot.held_request(t, devices)
        state.node_used[:, n] += sign * request
        state.node_free[:, n] -= sign * request
        state.node_idle[:, n] -= sign * request
        state.node_used_nz[:, n] += sign * request_nz
        state.node_tasks[n] += sign
        if devices:
            state.devices.charge(n, devices, gpu, releasing=False, sign=sign)
        for port in snapshot.tasks[t].ports:
            snapshot.port_array(state.ports_active, port)[n] += sign
        apply_charges(state.pool_used, pools, sign)

    def _shift(self, t: int, n: int, devices: tuple[int, ...], sign: int) -> None:
        """sign=-1: used -> releasing (evict); sign=+1: releasing -> used (unevict)."""
        snapshot, state = self.snapshot, self.state
        self.changes.add(n)
        request, request_nz, gpu = snapshot.held_request(t, devices)
        state.node_used[:, n] += sign * request
        state.node_free[:, n] -= sign * request  # node_idle is unchanged: the request stays on the node
        state.node_used_nz[:, n] += sign * request_nz
        state.node_releasing[:, n] -= sign * request
        state.node_tasks[n] += sign
        state.releasing_count -= sign
        if devices:
            state.devices.charge(n, devices, gpu, releasing=False, sign=sign)
            state.devices.charge(n, devices, gpu, releasing=True, sign=-sign)
        for port in snapshot.tasks[t].ports:
            snapshot.port_array(state.ports_active, port)[n] += sign
            snapshot.port_array(state.ports_releasing, port)[n] -= sign
