"""GPU fragmentation: how much of a node's free GPU capacity the workload's typical shapes cannot use.

The measure of FGD (Weng et al., "Beware of Fragmentation", USENIX ATC '23). For a shape k
(``core/gpu_shapes.py``: gpu g_k, cpu c_k, memory m_k, accepted models A_k) and a node with free devices
f_d (milli-GPU), free cpu C and free memory M:

* ``fits_k``: the node's model is in A_k, ``C >= c_k``, ``M >= m_k``, and the GPU part fits: a share
  (g_k < 1 GPU) on one device (``max f_d >= g_k``), j whole GPUs on j fully free devices;
* ``V_k``: the device capacity the shape can use: ``sum(f_d for f_d >= g_k)`` for a share (a device with
  less free than the share is a fragment for it), ``1000 * (fully free devices)`` for whole GPUs;
* ``R_k = g_k * min(C / c_k, M / m_k)``: the GPU that copies of the shape can take before the node's cpu
  or memory runs out (beyond FGD, which counts a node whole as long as one copy fits: a node whose cpu
  is nearly gone strands its GPUs for the shape even while one copy still fits);
* usable ``U_k = min(V_k, R_k)`` if ``fits_k`` else 0; fragmented ``F_k = G - U_k``, G = the node's free
  GPU.

The node's fragmentation is the expectation over the shapes, ``F = G - sum_k w_k U_k``. Placing a task on
the node changes it by ``dF = (U_before - U_after) - g_task``: the expected usable capacity the placement
destroys, minus the GPU the task itself takes. FGD places each task where ``dF`` is smallest.

The weights (beyond FGD, which uses the shapes' frequencies p_k): ``w_k ~ p_k / (s_k**2 * n_k)``,
normalised, with s_k the share of the cluster's GPUs whose model the shape accepts (1 for a shape that
accepts any) and n_k the shape's request in GPUs (0.81 for a share of 0.81, 8 for eight GPUs).

* ``1 / s_k**2``: frequencies alone value a GPU of a rare model as a GPU of any other: on the openb
  gpuspec33 trace, where a third of the GPU tasks are pinned to models holding a few percent of the GPUs,
  unconstrained tasks then took the pinned tasks' capacity and FGD allocated 86.8 % of the GPUs (first
  fit: 92.3 %); with ``1 / s_k**2``, 93.3 % (bench/placement.py, docs/decisions.md).
* ``1 / n_k``: ``U_k / n_k`` is how many copies of shape k the node can still take, so
  ``sum_k w_k U_k`` is proportional to the expected number of *tasks* the node can still take (FGD counts
  GPUs: a whole node kept for one 8-GPU task weighs as much as the eight 1-GPU tasks it could hold). Tasks
  are what wait: on openb default in file order, 99.3 % of the pods placed against 98.9 % by GPUs, with
  the same GPU allocated (95.6 %; docs/decisions.md, "issue 18, session 7").

Where no shape names models (every s_k = 1) and every shape asks for 1 GPU, this is FGD's weighting
exactly. The shapes scored are the ``MAX_SHAPES`` heaviest by ``w_k``: by frequency, the shapes pinned
to the rarest model (their weights the largest) were the first to be cut.

Shapes that ask for no GPU are not in the distribution: every free GPU is a fragment for them (FGD), which
adds the same amount to every node's ``dF`` for a given task, so it would change no choice.

Computed per node from its free devices: for each size s among the shares' sizes and one whole device
(1000), ``V[s]`` = the free capacity on devices with at least s free; ``V_k = V[size_k]``, and the GPU
part fits exactly when ``V_k >= g_k`` (a share fits on a device iff one has g_k free iff ``V_k >= g_k``;
j whole GPUs fit iff ``1000 * fully free >= 1000 * j``). A placement changes ``V`` in closed form
(``after_share``, ``after_whole``), so no device array is copied per candidate node. The fits are exact
(integer comparisons); capacities are float32 (exact for every milli-GPU amount below 2**24; the
[shapes, nodes] temporaries then stay small enough for the cpu cache: 4x faster than float64 on openb),
and so is ``R_k`` (a cap, to float32's 1 part in 2**24). Every step is elementwise or a sum over the
shapes in a fixed order, so a node's value never depends on which other nodes are computed with it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.gpu_shapes import GpuShape, GpuShapes
from loadmaster.core.resources import CPU, GPU_DEVICE, MEMORY

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Float32Array = npt.NDArray[np.float32]
BoolArray = npt.NDArray[np.bool_]

# The heaviest shapes (by weight w_k) kept for scoring: the cost of a score grows with their count, and on
# the Alibaba openb default trace the 64 heaviest carry 98 % of the GPU tasks.
MAX_SHAPES = 64
# w_k ~ p_k / s_k ** SUPPLY_EXPONENT (module docstring): on openb's gpuspec33, FGD alone allocated 91.5 %
# of the GPUs with 1 (demand per unit of supply) and 93.2 % with 2 (first fit: 92.3 %).
SUPPLY_EXPONENT = 2
# Free cpu and memory are floored at half a unit in ``R_k``: a shape asking for none (c_k = 0) then gets
# C / 0 = infinity ("no limit") even on a node with none free, where 0 / 0 would be undefined.
HALF_UNIT = 0.5


@dataclass(frozen=True, slots=True)
class ShapeTable:
    """A shape distribution compiled against one snapshot's nodes: arrays over shapes k."""

    gpu: Float32Array  # [K] milli-GPU (j whole GPUs: 1000 * j)
    cpu: IntArray  # [K] millicores
    memory: IntArray  # [K] bytes
    cpu_f32: Float32Array  # the same as float32, for R_k
    memory_f32: Float32Array
    sizes: IntArray  # [S] the shares' sizes and one whole device, ascending
    size_of: IntArray  # [K] the shape's row in ``sizes``
    weight: Float32Array  # [K, N] w_k where node n's GPU model is accepted, else 0

    @property
    def is_empty(self) -> bool:
        return self.gpu.size == 0

    @classmethod
    def build(cls, snapshot: ClusterSnapshot, shapes: GpuShapes) -> ShapeTable:
        every = [shape for shape, _ in shapes.weights]
        accepted = _accepted(snapshot, every)
        gpus = snapshot.node_alloc[snapshot.gpu_row].astype(np.float64)
        supply = (accepted * gpus[None, :]).sum(axis=1) / max(gpus.sum(), 1.0)
        frequency = np.array([w for _, w in shapes.weights], dtype=np.float64)
        # a shape no node can take counts for nothing (and would divide by zero)
        weight = np.where(supply > 0, frequency / np.where(supply > 0, supply, 1.0) ** SUPPLY_EXPONENT, 0.0)
        # per task rather than per GPU: divided by the request in GPUs (module docstring)
        weight /= np.array([s.gpu for s in every], dtype=np.float64) / GPU_DEVICE
        # The heaviest by weight, not by frequency: a shape pinned to a rare model is rare itself, and it
        # is the one whose capacity needs guarding (on gpuspec33 the G3-only shapes were all cut by
        # frequency, and unconstrained work took the G3 GPUs). Kept in the table's order.
        kept_rows = np.sort(np.argsort(-weight, kind="stable")[:MAX_SHAPES])
        kept_rows = kept_rows[weight[kept_rows] > 0]
        kept = [shapes.weights[i] for i in kept_rows]
        accepted, weight = accepted[kept_rows], weight[kept_rows]
        weight /= max(weight.sum(), 1e-300)
        requested = np.array([s.gpu for s, _ in kept], dtype=np.int64)
        whole = requested >= GPU_DEVICE
        # j whole GPUs take floor(request) devices (devices.py); a share takes part of one
        gpu = np.where(whole, requested // GPU_DEVICE * GPU_DEVICE, requested)
        sizes = np.unique(np.append(requested[~whole], GPU_DEVICE)).astype(np.int64)
        cpu = np.array([s.cpu for s, _ in kept], dtype=np.int64)
        memory = np.array([s.memory for s, _ in kept], dtype=np.int64)
        return cls(
            gpu=gpu.astype(np.float32),
            cpu=cpu,
            memory=memory,
            cpu_f32=cpu.astype(np.float32),
            memory_f32=memory.astype(np.float32),
            sizes=sizes,
            size_of=np.searchsorted(sizes, np.where(whole, GPU_DEVICE, gpu)).astype(np.int64),
            weight=np.where(accepted, weight[:, None], 0.0).astype(np.float32),
        )

    @classmethod
    def of(cls, snapshot: ClusterSnapshot) -> ShapeTable:
        """The snapshot's table, built once: from ``config.gpu_shapes``, else from its own GPU tasks."""
        table = snapshot.memo.get(("gpu_shape_table",))
        if table is None:
            table = snapshot.memo[("gpu_shape_table",)] = cls.build(snapshot, workload_shapes(snapshot))
        assert isinstance(table, ShapeTable)
        return table


def workload_shapes(snapshot: ClusterSnapshot) -> GpuShapes:
    """The shapes a cycle scores against: ``config.gpu_shapes`` (learned by the control plane), else
    those of the snapshot's own GPU tasks (``own_gpu_shapes``, once per snapshot)."""
    shapes = snapshot.config.gpu_shapes
    if shapes is not None and shapes.weights:
        return shapes
    own = snapshot.memo.get(("gpu_own_shapes",))
    if own is None:
        own = snapshot.memo[("gpu_own_shapes",)] = own_gpu_shapes(snapshot)
    assert isinstance(own, GpuShapes)
    return own


def own_gpu_shapes(snapshot: ClusterSnapshot) -> GpuShapes:
    """The distribution of the snapshot's GPU tasks (Pending and placed alike), each counted once with
    its shape (``GpuShape.of_request``). The requests are read from the columns and counted by
    ``Counter`` over tuples, which runs in C; the shape is made once per distinct request: a Python step
    per task would cost a replay's every cycle a pass over every task it holds."""
    request, tasks = snapshot.task_request, snapshot.tasks
    gpu_tasks = np.flatnonzero(request[snapshot.gpu_row] > 0)
    rows = [snapshot.gpu_row, snapshot.res_index[CPU], snapshot.res_index[MEMORY]]
    gpu, cpu, memory = request[rows][:, gpu_tasks].tolist()
    models = [tasks[t].gpu_models for t in gpu_tasks.tolist()]
    weights: dict[GpuShape, float] = {}
    for (g, c, m, listed), count in Counter(zip(gpu, cpu, memory, models, strict=True)).items():
        shape = GpuShape.of_request(g, c, m, listed)
        assert shape is not None  # a GPU task
        weights[shape] = weights.get(shape, 0.0) + count  # model lists in another order: one shape
    return GpuShapes.weighted(weights)


def capacity_by_size(free: IntArray, sizes: IntArray) -> Float32Array:
    """``V[s, c]``: free capacity on devices with at least ``sizes[s]`` free; ``free``: [C, D] milli-GPU
    per device (0 for padding devices)."""
    large_enough = free[None, :, :] >= sizes[:, None, None]
    return np.asarray(np.where(large_enough, free[None, :, :], 0).sum(axis=2), dtype=np.float32)


def after_whole(capacity: Float32Array, devices: int) -> Float32Array:
    """``V`` once a task has taken ``devices`` fully free devices (each counted under every size)."""
    return capacity - np.float32(devices * GPU_DEVICE)


def after_share(capacity: Float32Array, share: int, taken_from: IntArray, sizes: IntArray) -> Float32Array:
    """``V`` once a task has taken ``share`` from a device that had ``taken_from[c]`` free."""
    left = taken_from - share
    was = np.where(taken_from[None, :] >= sizes[:, None], taken_from[None, :], 0)
    now = np.where(left[None, :] >= sizes[:, None], left[None, :], 0)
    return np.asarray(capacity + (now - was), dtype=np.float32)


def expected_usable(
    table: ShapeTable, capacity: Float32Array, cpu: IntArray, memory: IntArray, nodes: IntArray
) -> Float32Array:
    """``sum_k w_k U_k`` (milli-GPU) for each of ``nodes``, given their ``V`` (``capacity_by_size``), free
    cpu and free memory (see the module docstring)."""
    usable = capacity[table.size_of]
    fits = usable >= table.gpu[:, None]
    fits &= cpu[None, :] >= table.cpu[:, None]
    fits &= memory[None, :] >= table.memory[:, None]
    with np.errstate(divide="ignore"):  # c_k = 0: C / 0 = inf, no limit (HALF_UNIT)
        copies = np.maximum(cpu, HALF_UNIT).astype(np.float32)[None, :] / table.cpu_f32[:, None]
        by_memory = np.maximum(memory, HALF_UNIT).astype(np.float32)[None, :] / table.memory_f32[:, None]
    np.minimum(copies, by_memory, out=copies)
    copies *= table.gpu[:, None]  # R_k
    np.minimum(usable, copies, out=usable)
    usable *= fits
    usable *= table.weight[:, nodes]
    return np.asarray(usable.sum(axis=0), dtype=np.float32)


def _accepted(snapshot: ClusterSnapshot, shapes: list[GpuShape]) -> BoolArray:
    """[K, N]: shape k accepts node n's GPU model (looked up once per distinct model, not per node)."""
    codes: dict[str | None, int] = {}
    node_code = np.array([codes.setdefault(node.gpu_model, len(codes)) for node in snapshot.nodes])
    models = list(codes)
    by_code = np.array(
        [[shape.gpu_models is None or m in shape.gpu_models for m in models] for shape in shapes],
        dtype=np.bool_,
    ).reshape(len(shapes), len(models))
    return np.asarray(by_code[:, node_code] if node_code.size else by_code[:, :0], dtype=np.bool_)


def free_devices(snapshot: ClusterSnapshot, nodes: IntArray) -> IntArray:
    """[C, D] free milli-GPU per device, counting what Releasing tasks hold as free (as every score)."""
    devices = snapshot.state.devices
    return np.asarray(devices.capacity[nodes] - devices.used[nodes], dtype=np.int64)


def free_cpu_memory(snapshot: ClusterSnapshot, nodes: IntArray) -> tuple[IntArray, IntArray]:
    free = snapshot.state.node_free
    return free[snapshot.res_index[CPU], nodes], free[snapshot.res_index[MEMORY], nodes]


def fragmented_gpu(snapshot: ClusterSnapshot, nodes: IntArray, table: ShapeTable | None = None) -> FloatArray:
    """``F`` in milli-GPU for each of ``nodes``: the free GPU the shapes cannot use, in expectation.
    ``table``: the snapshot's own when omitted."""
    table = table or ShapeTable.of(snapshot)
    free = free_devices(snapshot, nodes)
    free_gpu: FloatArray = free.sum(axis=1).astype(np.float64)
    if table.is_empty:
        return free_gpu
    cpu, memory = free_cpu_memory(snapshot, nodes)
    usable = expected_usable(table, capacity_by_size(free, table.sizes), cpu, memory, nodes)
    return np.asarray(np.maximum(free_gpu - usable, 0.0), dtype=np.float64)


def largest_gpu_shape(snapshot: ClusterSnapshot, nodes: IntArray) -> IntArray:
    """The largest GPU request (milli-GPU) each of ``nodes`` could take now: its fully free devices as
    whole GPUs when it has any, else the most free on one device (a share); 0 when nothing is free."""
    devices = snapshot.state.devices
    free, capacity = free_devices(snapshot, nodes), devices.capacity[nodes]
    full = ((free == capacity) & (capacity > 0)).sum(axis=1)
    return np.asarray(np.where(full > 0, full * GPU_DEVICE, free.max(axis=1, initial=0)), dtype=np.int64)
