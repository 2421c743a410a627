"""The Alibaba openb GPU trace (../shared/traces/alibaba-gpu-v2023-openb) as loadmaster clusters, and the
packing figures measured on it. Used by bench/placement.py; not a test.

* ``file_order_figures``: every pod of a pod list, in file order (the issue's protocol), placed onto all
  1,523 nodes in one allocate cycle: pods placed, GPU allocated, dead GPUs, scheduler seconds.
* ``fgd_protocol``: the FGD paper's (USENIX ATC '23) protocol: the 1,213 GPU nodes; the default pod list
  plus pods drawn from it at random until one more would pass 1.3x the GPU capacity; shuffled; one cycle.
  Its figure is the GPUs left unallocated, the mean over seeds.
* ``pods_placed_bound``: an upper bound on the pods any scheduler can place, from GPU capacity alone (the
  cluster's, and each model's for the pods pinned to one: gpuspec33 pins more to T4s than T4s hold).

Dead GPUs: free GPUs on nodes where none of the pods left pending fits (re-checked per device, by the
engine's own filters), i.e. GPU capacity the cycle's leftover work cannot use. Seconds are wall time of
``run_cycle``; on a shared machine its cpu time (``cpu_seconds``) is the steadier figure.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from loadmaster.core.columns.snapshot import PENDING, ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.core.working.statement import Statement
from loadmaster.cycle import run_cycle
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for
from loadmaster.replay.traces.openb import FOLDER as OPENB_FOLDER
from loadmaster.replay.traces.openb import GPU_NODE_LIST as GPU_NODES
from loadmaster.replay.traces.openb import NODE_LIST, Pod
from loadmaster.replay.traces.openb import openb_nodes as read_openb_nodes
from loadmaster.replay.traces.openb import openb_pods as read_openb_pods

ROOT = Path(__file__).resolve().parent.parent
# The traces live beside the checkout (../shared/traces), or further up for a git worktree.
TRACES = next(
    (base / "shared" / "traces" for base in ROOT.parents if (base / "shared" / "traces").is_dir()),
    ROOT.parent / "shared" / "traces",
)
OPENB = TRACES / OPENB_FOLDER
FGD_RATIO, FGD_SEEDS = 1.3, tuple(range(42, 52))  # the paper's tune ratio and its ten seeds


def openb_nodes(node_file: str = NODE_LIST) -> tuple[Node, ...]:
    return read_openb_nodes(OPENB / node_file)


def openb_pods(pod_file: str) -> list[Pod]:
    """The pods of a pod list, in file order (the replay's reader: one parser for the trace)."""
    return read_openb_pods(OPENB / pod_file)


def cluster_of(nodes: tuple[Node, ...], pods: list[Pod], profile: str) -> Cluster:
    jobs = tuple(Job(name, (Task(name, name, request, gpu_models=models),)) for name, request, models in pods)
    return Cluster(nodes, jobs, config=SchedulerConfig(actions=("allocate",), profile=profile))  # type: ignore[arg-type]


def placement_figures(cluster: Cluster) -> dict[str, object]:
    """One allocate cycle over ``cluster`` (timed: ``run_cycle``, the scheduler's entry point), then the
    final state rebuilt from its decisions: what it placed, the GPU it allocated, the dead GPUs."""
    start, start_cpu = time.perf_counter(), time.process_time()
    plan = run_cycle(cluster)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    snapshot = ClusterSnapshot(cluster)
    statement = Statement(snapshot)
    for d in plan.decisions:
        statement.allocate(snapshot.task_of(d.task), snapshot.node_index[d.node])
    engine = PlacementEngine(snapshot, profile_for(cluster.config))
    fits_somewhere = np.zeros(snapshot.n_nodes, dtype=np.bool_)
    seen = set()
    for t in np.flatnonzero(snapshot.state.task_phase == PENDING).tolist():
        if (key := engine.class_of(t)) not in seen:
            seen.add(key)
            fits_somewhere |= engine.feasible(engine.context(t))
    devices = snapshot.state.devices
    free_gpus = devices.free(use_releasing=False).sum(axis=1) / GPU_DEVICE
    placed = len(plan.decisions)
    return {"pods": snapshot.n_tasks, "placed": placed,
            "placed_pct": round(100 * placed / max(snapshot.n_tasks, 1), 2),
            "gpu_allocated_pct": round(100 * (1 - free_gpus.sum() * GPU_DEVICE / devices.capacity.sum()), 2),
            "free_gpus": round(float(free_gpus.sum()), 1),
            "dead_gpus": round(float(free_gpus[~fits_somewhere].sum()), 1),
            "seconds": round(seconds, 3), "cpu_seconds": round(cpu_seconds, 3)}  # fmt: skip


def file_order_figures(pod_file: str, profile: str) -> dict[str, object]:
    return placement_figures(cluster_of(openb_nodes(), openb_pods(pod_file), profile))


def fgd_workload(seed: int, ratio: float = FGD_RATIO) -> list[Pod]:
    """The default pod list plus random draws from it until one more would pass ``ratio`` times the GPU
    nodes' capacity, shuffled (the FGD simulator's "tune" step; draws are seeded, so reproducible)."""
    base = openb_pods("openb_pod_list_default.csv")
    capacity = sum(node.allocatable["gpu"] for node in openb_nodes(GPU_NODES))
    rng = np.random.default_rng(seed)
    pods, total = list(base), sum(request.get("gpu", 0) for _, request, _ in base)
    while True:
        name, request, models = base[int(rng.integers(len(base)))]
        if total + request.get("gpu", 0) > ratio * capacity:
            break
        pods.append((f"{name}-tuned-{len(pods)}", request, models))
        total += request.get("gpu", 0)
    return [pods[i] for i in rng.permutation(len(pods))]


def fgd_protocol(profile: str, seeds: tuple[int, ...] = FGD_SEEDS) -> dict[str, object]:
    nodes = openb_nodes(GPU_NODES)
    runs = [placement_figures(cluster_of(nodes, fgd_workload(seed), profile)) for seed in seeds]
    unallocated = [float(r["free_gpus"]) for r in runs]  # type: ignore[arg-type]
    return {"seeds": len(seeds), "unallocated_gpus_mean": round(float(np.mean(unallocated)), 1),
            "unallocated_gpus": unallocated,
            "placed_pct_mean": round(float(np.mean([float(r["placed_pct"]) for r in runs])), 2)}  # type: ignore[arg-type]  # fmt: skip


def pods_placed_bound(pod_file: str) -> float:
    """An upper bound (percent) on the pods any scheduler can place, from GPU capacity alone: the GPU pods
    placed fit in the cluster's GPUs, and those that accept one GPU model only in that model's GPUs, so
    of each group at most as many as its smallest requests fitting in that capacity. The lower of the
    two counts bounds the pods placed."""
    capacity: Counter[str | None] = Counter()
    for node in openb_nodes():
        capacity[node.gpu_model] += node.allocatable.get("gpu", 0)
    pods = openb_pods(pod_file)
    gpu_pods = [request["gpu"] for _, request, _ in pods if request.get("gpu")]
    pinned: defaultdict[str, list[int]] = defaultdict(list)
    for _, request, models in pods:
        if models is not None and len(set(models)) == 1:
            pinned[models[0]].append(request["gpu"])
    by_models = sum(_unplaceable(requests, capacity[model]) for model, requests in pinned.items())
    by_total = _unplaceable(gpu_pods, sum(capacity.values()))
    return round(100 * (len(pods) - max(by_models, by_total)) / len(pods), 2)


def _unplaceable(requests: list[int], capacity: int) -> int:
    """How many of ``requests`` cannot all fit in ``capacity``, placing the smallest first."""
    smallest_first = np.cumsum(sorted(requests))
    return len(requests) - int(np.searchsorted(smallest_first, capacity, side="right"))
