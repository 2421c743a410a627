"""The Statement: an operation log over the snapshot's working state, with exact undo.

Every public operation (``allocate``, ``pipeline``, ``evict``) is recorded as a short list of
*primitive* transitions, each with an exact inverse (integer add/subtract, or a saved previous value):

* ``occupy(t, n)``: the task's request, devices, ports and volume charges are added to node ``n``;
* ``release(t, n)``: they move from "used" to "releasing" on ``n`` (an eviction in progress);
* ``set(t)``: the task's phase / node / devices records change (previous values kept).

``checkpoint()`` is the log length; ``rollback(cp)`` applies inverses in reverse order down to ``cp``,
so the arrays come back bit for bit (a property test checks this). ``commit()`` turns the log into
decisions and makes it permanent; ``discard()`` is ``rollback(0)``.

Listeners (queue usage accounting) are told when a task starts or stops counting as allocated
(bound or pipelined), including during undo, so they stay in step without their own log.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from loadmaster.core.decisions import Decision, decisions_from_ops
from loadmaster.core.devices import place_on_devices
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.core.snapshot import (
    BOUND,
    NO_NODE,
    PIPELINED,
    RELEASING,
    ClusterSnapshot,
    SnapshotError,
    TaskRecord,
)
from loadmaster.core.volumes import Charges, apply_charges

ACTIVE_PHASES = (BOUND, PIPELINED)
# (task index, +1 when it starts counting as allocated / -1 when it stops)
AllocationListener = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Operation:
    kind: str  # allocate | pipeline | evict | unevict
    task: int
    node: int
    action: str
    reason: str
    primitives: tuple[tuple[str, int, int, tuple[int, ...], TaskRecord | None], ...]


class Statement:
    def __init__(self, snapshot: ClusterSnapshot) -> None:
        self.snapshot = snapshot
        self.state = snapshot.state
        self.ops: list[Operation] = []
        self.listeners: list[AllocationListener] = []
        self._records = snapshot.state.records
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
            and t in self.snapshot.input_running
            and self._devices_restorable(t, current)
        ):
            self._run(Operation("unevict", t, n, action, reason, self._unevict_primitives(t, current)))
            return
        self._place(t, n, "pipeline", use_releasing=True, action=action, reason=reason)

    def _devices_restorable(self, t: int, current: TaskRecord) -> bool:
        """Whether every device the task held still has room for its share (nothing took it meanwhile)."""
        if not current.devices:
            return True
        devices, n = self.state.devices, current.node
        gpu = int(self.snapshot.task_request[self.snapshot.gpu_row, t])
        share = min(gpu, GPU_DEVICE)
        return all(devices.capacity[n, d] - devices.used[n, d] >= share for d in current.devices)

    def evict(self, t: int, action: str, reason: str) -> None:
        """Start releasing a Running task: its resources become 'releasing' on its node."""
        current = self.record(t)
        if current.phase != BOUND or t not in self.snapshot.input_running:
            raise SnapshotError(
                f"only a task Running in the input can be evicted: {self.snapshot.tasks[t].name}"
            )
        new = TaskRecord(RELEASING, current.node, NO_NODE, current.devices, (), current.pools)
        primitives = (("release", t, current.node, current.devices, None), ("set", t, 0, (), new))
        self._run(Operation("evict", t, current.node, action, reason, primitives))

    def rollback(self, checkpoint: int) -> None:
        while len(self.ops) > checkpoint:
            op = self.ops.pop()
            for primitive in reversed(op.primitives):
                self._apply(primitive, undo=True)

    def discard(self) -> None:
        self.rollback(0)

    def commit(self) -> list[Decision]:
        """Make every operation permanent and return them as decisions (net effect per task)."""
        decisions = decisions_from_ops(self.snapshot, self.ops)
        self.ops.clear()
        self._history.clear()
        return decisions

    # -- internals ----------------------------------------------------------------------------------

    def _place(self, t: int, n: int, kind: str, use_releasing: bool, action: str, reason: str) -> None:
        snapshot, current = self.snapshot, self.record(t)
        if current.phase in ACTIVE_PHASES:
            raise SnapshotError(f"task {snapshot.tasks[t].name} is already placed")
        gpu = int(snapshot.task_request[snapshot.gpu_row, t])
        devices: tuple[int, ...] = ()
        if gpu:
            found = place_on_devices(self.state.devices, n, gpu, use_releasing=use_releasing)
            if found is None:
                raise SnapshotError(f"task {snapshot.tasks[t].name} does not fit the GPU devices of node {n}")
            devices = found
        pools: Charges = ()
        task = snapshot.tasks[t]
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
        primitives = (("occupy", t, n, devices, new), ("set", t, 0, (), new))
        self._run(Operation(kind, t, n, action, reason, primitives))

    def _unevict_primitives(
        self, t: int, current: TaskRecord
    ) -> tuple[tuple[str, int, int, tuple[int, ...], TaskRecord | None], ...]:
        restored = TaskRecord(BOUND, current.node, NO_NODE, current.devices, (), current.pools)
        return (("unrelease", t, current.node, current.devices, None), ("set", t, 0, (), restored))

    def _run(self, op: Operation) -> None:
        for primitive in op.primitives:
            self._apply(primitive, undo=False)
        self.ops.append(op)

    def _apply(self, primitive: tuple[str, int, int, tuple[int, ...], TaskRecord | None], undo: bool) -> None:
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
        was_active = self.record(t).phase in ACTIVE_PHASES
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
        request = snapshot.task_request[:, t]
        state.node_used[:, n] += sign * request
        state.node_free[:, n] -= sign * request
        state.node_idle[:, n] -= sign * request
        state.node_used_nz[:, n] += sign * snapshot.task_request_nz[:, t]
        state.node_tasks[n] += sign
        gpu = int(snapshot.task_request[snapshot.gpu_row, t])
        if devices:
            state.devices.charge(n, devices, gpu, releasing=False, sign=sign)
        for port in snapshot.tasks[t].ports:
            snapshot.port_array(state.ports_active, port)[n] += sign
        apply_charges(state.pool_used, pools, sign)

    def _shift(self, t: int, n: int, devices: tuple[int, ...], sign: int) -> None:
        """sign=-1: used -> releasing (evict); sign=+1: releasing -> used (unevict)."""
        snapshot, state = self.snapshot, self.state
        request = snapshot.task_request[:, t]
        state.node_used[:, n] += sign * request
        state.node_free[:, n] -= sign * request  # node_idle is unchanged: the request stays on the node
        state.node_used_nz[:, n] += sign * snapshot.task_request_nz[:, t]
        state.node_releasing[:, n] -= sign * request
        state.node_tasks[n] += sign
        state.releasing_count -= sign
        gpu = int(snapshot.task_request[snapshot.gpu_row, t])
        if devices:
            state.devices.charge(n, devices, gpu, releasing=False, sign=sign)
            state.devices.charge(n, devices, gpu, releasing=True, sign=-sign)
        for port in snapshot.tasks[t].ports:
            snapshot.port_array(state.ports_active, port)[n] += sign
            snapshot.port_array(state.ports_releasing, port)[n] -= sign
