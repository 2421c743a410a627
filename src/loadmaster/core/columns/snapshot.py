"""The columnar snapshot: one frozen cluster as integer-indexed numpy arrays.

Layout is (resources, nodes): ``node_alloc[r, n]``, ``task_request[r, t]``. A filter is a boolean mask
over nodes, a scorer a vector over nodes, selection an argmax. Nodes are stored **sorted by name**
(code-point order), so "ties go to the node whose name sorts first" is simply numpy's first argmax.

The snapshot has two parts:

* static: what the input says (allocatable, labels, taints, requests, ...); never changes;
* ``state`` (``WorkingState``): what a cycle changes (usage, releasing, devices, ports, volume pools,
  each task's status and node). Only the ``Statement`` mutates it, so every change can be undone.

The static part is assembled from node columns and task columns, which a ``SnapshotCache`` carries from
one cycle's snapshot to the next (the control plane's clusters differ by a few jobs between cycles).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.carried_layout import DeviceLayoutCache, PlacedGpuTasks, lay_out_devices
from loadmaster.core.columns.node_columns import NodeColumns, node_columns
from loadmaster.core.columns.task_columns import NO_NODE, TaskColumns, task_columns
from loadmaster.core.columns.task_record import BOUND, PENDING, PIPELINED, RELEASING, UNPLACED, TaskRecord
from loadmaster.core.columns.volumes import Charges
from loadmaster.core.devices import DeviceState, kept_devices, place_on_devices
from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.core.overcommit import overcommit_room
from loadmaster.core.resources import GPU, GPU_DEVICE
from loadmaster.core.voluntary_moves import REPLACEMENT_SUFFIX

__all__ = [
    "BOUND",
    "NO_NODE",
    "PENDING",
    "PIPELINED",
    "RELEASING",
    "UNPLACED",
    "ClusterSnapshot",
    "SnapshotCache",
    "SnapshotError",
    "TaskRecord",
    "WorkingState",
]

IntArray = npt.NDArray[np.int64]


class SnapshotCache:
    """What the last snapshot can lend the next (one cycle at a time): its node columns, its task
    columns, its allocatable matrix (with the node columns and resource order it was built for) and its
    GPU device layout (``carried_layout.py``)."""

    __slots__ = ("device_layouts", "node_alloc", "nodes", "tasks")

    def __init__(self) -> None:
        self.nodes: NodeColumns | None = None
        self.tasks: TaskColumns | None = None
        self.node_alloc: tuple[NodeColumns, tuple[str, ...], IntArray] | None = None
        self.device_layouts = DeviceLayoutCache()


class SnapshotError(ValueError):
    """The input is inconsistent in a way only visible once placed (e.g. devices over-committed).
    ``task``: the task that could not be placed as the input says, when there is one."""

    def __init__(self, message: str, task: str | None = None) -> None:
        super().__init__(message)
        self.task = task


@dataclass(slots=True)
class WorkingState:
    """Everything a cycle may change. Mutated only through ``Statement`` (exact undo)."""

    node_used: IntArray  # [R, N] requests of Running, bound and Pipelined tasks, as written
    node_used_nz: IntArray  # [R, N] the same with the non-zero defaults (spread/binpack scores)
    node_releasing: IntArray  # [R, N] requests of Releasing tasks (free only for Pipelined)
    node_free: IntArray  # [R, N] alloc - used: room for a Pipelined placement (kept in step, not derived)
    node_idle: IntArray  # [R, N] alloc - used - releasing: room to bind right now
    releasing_count: int  # tasks Releasing anywhere; 0 lets scorers skip the idle-vs-releasing pass
    node_tasks: IntArray  # [N] tasks Running, bound or Pipelined on the node
    devices: DeviceState
    ports_active: dict[int, IntArray]  # port -> [N] holders Running/bound/Pipelined
    ports_releasing: dict[int, IntArray]  # port -> [N] holders Releasing
    pool_used: IntArray  # [P] bytes charged to each volume pool
    task_phase: npt.NDArray[np.int8]  # [T] PENDING | BOUND | PIPELINED | RELEASING
    task_node: npt.NDArray[np.int32]  # [T] node it is placed on (or releasing from), NO_NODE if none
    task_release_node: npt.NDArray[np.int32]  # [T] node a moved task is still releasing from
    records: dict[int, TaskRecord]  # only records the arrays cannot express (see record_of)


class ClusterSnapshot:
    def __init__(self, cluster: Cluster, cache: SnapshotCache | None = None) -> None:
        """``cache``: what the previous snapshot built, reused where this cluster is the same: its node
        columns while every node is the same object (``node_columns.py``), its task columns for the
        prefix of the very same jobs (``task_columns.py``); it then holds this snapshot's for the next."""
        self.cluster = cluster
        self.config = cluster.config
        nodes = node_columns(cluster.nodes, cache.nodes if cache else None)
        self.nodes: tuple[Node, ...] = nodes.nodes
        self.node_names, self.node_index = nodes.names, nodes.index
        self.jobs: tuple[Job, ...] = cluster.jobs
        columns = task_columns(
            self.jobs, self.node_names, self.node_index, nodes.resources, cache.tasks if cache else None
        )
        self._columns = columns
        self.tasks: tuple[Task, ...] = columns.tasks
        # Made when first asked for (``task_index``, ``input_running_mask``): a cycle that evicts nothing and
        # looks no task up by name (most control-plane cycles) pays no Python step per task for them.
        self._task_index: dict[str, int] | None = None
        self._replaced_names: frozenset[str] | None = None
        self._input_running_tasks = np.zeros(0, dtype=np.int64)  # set by _initial_state
        self._input_running_mask: npt.NDArray[np.bool_] | None = None
        self.task_job = columns.task_job
        self.job_tasks: tuple[range, ...] = columns.job_tasks
        self.queue_names, self.job_queue_code = columns.queue_names, columns.job_queue_code
        self.job_preemptible, self.job_stale_for_s = columns.job_preemptible, columns.job_stale_for_s
        self.job_priority, self.job_min_available = columns.job_priority, columns.job_min_available
        self.job_profiles = tuple(name for name, _ in columns.profiles)  # the profiles jobs name
        self.input_sums = columns.sums
        self.resources = columns.resources
        self.res_index = {name: r for r, name in enumerate(self.resources)}
        self.n_nodes, self.n_tasks = len(self.nodes), len(self.tasks)

        self.node_alloc = self._node_matrix(nodes, cache)
        self.node_ready, self.node_unschedulable = nodes.ready, nodes.unschedulable
        self.labels, self.taints, self.pools = nodes.labels, nodes.taints, nodes.pools
        self.task_request, self.task_request_nz = columns.request, columns.request_nz
        self.task_has_extras = columns.extras  # [T] host ports or volume claims: placed task by task
        self.gpu_row = self.res_index[GPU]
        if cache is not None:
            cache.nodes, cache.tasks = nodes, columns
            cache.node_alloc = (nodes, self.resources, self.node_alloc)
        self.memo: dict[tuple[object, ...], object] = {}  # static per-snapshot results, by plugin key
        self._overcommit_room: IntArray | None = None  # made when an opted-in task first asks
        layouts = cache.device_layouts if cache is not None else DeviceLayoutCache()
        self.state = self._initial_state(nodes, layouts)

    # -- construction -------------------------------------------------------------------------------

    def _node_matrix(self, nodes: NodeColumns, cache: SnapshotCache | None) -> IntArray:
        """[R, N] allocatable (read-only: the working state starts from copies of it)."""
        if cache is not None and cache.node_alloc is not None:
            built_for, resources, alloc = cache.node_alloc
            if built_for is nodes and resources == self.resources:
                return alloc
        # One list per resource row: Python-level dict lookups, not one numpy item write per value.
        allocs = [node.allocatable for node in self.nodes]
        rows = [[alloc.get(name, 0) for alloc in allocs] for name in self.resources]
        matrix = np.array(rows, dtype=np.int64).reshape(len(self.resources), len(self.nodes))
        matrix.flags.writeable = False
        return matrix

    def _initial_state(self, nodes: NodeColumns, layouts: DeviceLayoutCache) -> WorkingState:
        """The input's placements: usage from the carried sums (``input_sums.py``), each task's phase
        and node from its columns; devices, volume pools and ports (which depend on order) task by task,
        in input order, for the tasks that have them. Without ports or volumes among them, the devices
        are laid out per node, carried from the previous snapshot for the nodes whose tasks are the same
        (``carried_layout.py``: the same result, paid for the nodes that changed)."""
        columns, sums = self._columns, self._columns.sums
        device_counts = self.node_alloc[self.gpu_row] // GPU_DEVICE
        placed = columns.node != NO_NODE
        phase = np.where(placed, np.where(columns.releasing, RELEASING, BOUND), PENDING).astype(np.int8)
        state = WorkingState(
            node_used=sums.node_used.copy(),
            node_used_nz=sums.node_used_nz.copy(),
            node_releasing=sums.node_releasing.copy(),
            node_free=self.node_alloc - sums.node_used,
            node_idle=self.node_alloc - sums.node_used - sums.node_releasing,
            releasing_count=sums.releasing_count,
            node_tasks=sums.node_tasks.copy(),
            devices=DeviceState.empty(device_counts),
            ports_active={},
            ports_releasing={},
            pool_used=np.zeros(self.pools.size, dtype=np.int64),
            task_phase=phase,
            task_node=columns.node.copy(),
            task_release_node=np.full(self.n_tasks, NO_NODE, dtype=np.int32),
            records={},
        )
        index = np.flatnonzero(placed)
        self._input_running_tasks = index[~columns.releasing[index]]
        extras = columns.extras[index] | (self.task_request[self.gpu_row, index] > 0)
        placed_extras = index[extras]
        with_extras = placed_extras.tolist()
        if not columns.extras[placed_extras].any():
            placed_gpu = PlacedGpuTasks(
                placed_extras,
                columns.node[placed_extras],
                columns.releasing[placed_extras],
                self.task_request[self.gpu_row, placed_extras],
            )
            records = lay_out_devices(self.tasks, placed_gpu, nodes, device_counts, state.devices, layouts)
            if records is not None:
                state.records = records
                return state
        state.devices, state.records = DeviceState.empty(device_counts), {}  # task by task after all
        # Tasks whose devices were stored (the control plane's binds) keep them: placed first, so that a
        # derived placement cannot take them (the layouts follow the same order).
        pinned = [t for t in with_extras if self.tasks[t].devices]
        order = pinned + [t for t in with_extras if not self.tasks[t].devices] if pinned else with_extras
        for t in order:  # in input order otherwise: devices and pools depend on it
            self._place_input_extras(state, t, int(columns.node[t]), bool(columns.releasing[t]))
        return state

    def _place_input_extras(self, state: WorkingState, t: int, n: int, releasing: bool) -> None:
        """GPU devices, volume pools and ports of one input task (their placement depends on order)."""
        task = self.tasks[t]
        gpu = int(self.task_request[self.gpu_row, t])
        counted = gpu > 0  # in the input sums already
        if not gpu and task.gpu_all:  # no count known: it holds every device of its node
            gpu = int(self.node_alloc[self.gpu_row, n])
        devices: tuple[int, ...] = ()
        if gpu:
            found = kept_devices(state.devices, n, gpu, task.devices) or place_on_devices(
                state.devices, n, gpu, use_releasing=False
            )
            if found is None:
                raise SnapshotError(
                    f"node {task.node} is over-committed: task {task.name} needs gpu {gpu / GPU_DEVICE:g} "
                    "and no device has room for it",
                    task.name,
                )
            devices = found
            state.devices.charge(n, devices, gpu, releasing=releasing)
            if not counted:
                self._count_input_devices(state, n, gpu, releasing)
        pools: Charges = ()
        if task.volumes:
            charged = self.pools.charge_claims(state.pool_used, n, task.volumes)
            if charged is None:
                raise SnapshotError(
                    f"node {task.node} is over-committed: no volume pool has room for {task.name}", task.name
                )
            pools = charged
        for port in task.ports:
            self.port_array(state.ports_releasing if releasing else state.ports_active, port)[n] += 1
        if devices or pools:
            state.records[t] = TaskRecord(RELEASING if releasing else BOUND, n, NO_NODE, devices, (), pools)

    def _count_input_devices(self, state: WorkingState, n: int, gpu: int, releasing: bool) -> None:
        """Add the GPUs of an input ``gpus: all`` task without a count to its node's sums (which the
        task columns could not: the amount depends on the node)."""
        r = self.gpu_row
        if releasing:
            state.node_releasing[r, n] += gpu
        else:
            state.node_used[r, n] += gpu
            state.node_used_nz[r, n] += gpu
            state.node_free[r, n] -= gpu
        state.node_idle[r, n] -= gpu

    def record_of(self, t: int) -> TaskRecord:
        """Where task t is. Only records that say more than the arrays (devices, volume charges, the node
        a moving task leaves) are stored; the rest are derived from ``task_phase`` and ``task_node``."""
        stored = self.state.records.get(t)
        if stored is not None:
            return stored
        phase = int(self.state.task_phase[t])
        if phase == PENDING:
            return UNPLACED
        return TaskRecord(
            phase, int(self.state.task_node[t]), int(self.state.task_release_node[t]), (), (), ()
        )

    # -- queries used by filters, scorers and actions ----------------------------------------------

    def port_array(self, ports: dict[int, IntArray], port: int) -> IntArray:
        """The per-node holder counts of ``port`` (created on first use)."""
        array = ports.get(port)
        if array is None:
            array = ports[port] = np.zeros(self.n_nodes, dtype=np.int64)
        return array

    def held_request(self, t: int, devices: tuple[int, ...]) -> tuple[IntArray, IntArray, int]:
        """Task t's request and non-zero request as its node holds them, and its GPU amount. A
        ``gpus: all`` task that names no count holds every device it was given: its gpu row is then
        ``len(devices)`` whole devices (copies; otherwise the columns' own views)."""
        request, request_nz = self.task_request[:, t], self.task_request_nz[:, t]
        gpu = int(request[self.gpu_row])
        if devices and not gpu:
            gpu = len(devices) * GPU_DEVICE
            request, request_nz = request.copy(), request_nz.copy()
            request[self.gpu_row] = request_nz[self.gpu_row] = gpu
        return request, request_nz, gpu

    @property
    def overcommit_room(self) -> IntArray:
        """[R, N] what overcommit adds to an opted-in task's free room (``core/overcommit.py``)."""
        if self._overcommit_room is None:
            self._overcommit_room = overcommit_room(self.nodes, self.resources, self.node_alloc)
        return self._overcommit_room

    @property
    def replaced_names(self) -> frozenset[str]:
        """The names X of the tasks whose replacement ``X.next`` is in the snapshot (kept in the columns:
        no pass over every task's name)."""
        if self._replaced_names is None:
            suffix = len(REPLACEMENT_SUFFIX)
            names = (self.tasks[t].name[:-suffix] for t in self._columns.replacements.tolist())
            self._replaced_names = frozenset(names)
        return self._replaced_names

    @property
    def task_index(self) -> dict[str, int]:
        """Task name -> index."""
        if self._task_index is None:
            self._task_index = {task.name: t for t, task in enumerate(self.tasks)}
        return self._task_index

    @property
    def input_running_tasks(self) -> IntArray:
        """The tasks the input has Running (on a node), ascending (read-only)."""
        return self._input_running_tasks

    @property
    def input_running_mask(self) -> npt.NDArray[np.bool_]:
        """[T] whether the input has the task Running (on a node); made when first asked for (a set of
        every Running task cost alibaba-2017's cycles 30 ms each, a mask 1 ms)."""
        if self._input_running_mask is None:
            mask = np.zeros(self.n_tasks, dtype=np.bool_)
            mask[self._input_running_tasks] = True
            mask.flags.writeable = False
            self._input_running_mask = mask
        return self._input_running_mask

    def task_of(self, name: str) -> int:
        return self.task_index[name]

    def job_of_task(self, t: int) -> Job:
        return self.jobs[int(self.task_job[t])]
