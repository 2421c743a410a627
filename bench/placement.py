"""Placement benchmarks; prints one JSON document. Not a test: figures go into the issue notes.

    .venv/bin/python bench/placement.py            # everything (about a minute)
    .venv/bin/python bench/placement.py --quick    # smaller repetitions

(a) kube-scheduler's SchedulingBasic shape: 5,000 nodes (4 cpu, 32Gi), 10,000 pods (100m, 500Mi),
    one task at a time (a full filter+score pass per pod) and grouped (equivalence class);
    plus ``loadmaster simulate`` of the same scenario as a YAML file, start to finish (subprocess).
(b) the same at 100,000 nodes: latency of one placement (p50/p99).
(c) the Alibaba openb GPU trace (../shared/traces/alibaba-gpu-v2023-openb): every pod of a pod list
    placed in creation order onto all 1,523 nodes in one cycle, with the default profile and with a
    plain first-fit baseline: pods placed, allocation ratios, stranded GPUs, seconds.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.core.snapshot import ClusterSnapshot
from loadmaster.core.statement import Statement
from loadmaster.cycle import run_cycle
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for

ROOT = Path(__file__).resolve().parent.parent
# The traces live beside the checkout (../shared/traces), or further up for a git worktree.
OPENB = (
    next(
        (base / "shared" / "traces" for base in ROOT.parents if (base / "shared" / "traces").is_dir()),
        ROOT.parent / "shared" / "traces",
    )
    / "alibaba-gpu-v2023-openb"
    / "csv"
)
GI, MI = 2**30, 2**20


def basic_cluster(n_nodes: int, n_pods: int) -> Cluster:
    alloc = {"cpu": 4000, "memory": 32 * GI}
    nodes = tuple(Node(f"node-{i:06d}", alloc, alloc) for i in range(n_nodes))
    jobs = tuple(
        Job(f"pod-{i:06d}", (Task(f"pod-{i:06d}", f"pod-{i:06d}", {"cpu": 100, "memory": 500 * MI}),))
        for i in range(n_pods)
    )
    return Cluster(nodes, jobs)


def one_at_a_time(cluster: Cluster) -> dict[str, float]:
    snapshot = ClusterSnapshot(cluster)
    engine = PlacementEngine(snapshot, profile_for(cluster.config))
    statement = Statement(snapshot)
    latencies, cpu = np.empty(snapshot.n_tasks), np.empty(snapshot.n_tasks)
    start = time.perf_counter()
    for t in range(snapshot.n_tasks):
        began, began_cpu = time.perf_counter(), time.thread_time()
        choice = engine.choose(t)
        statement.allocate(t, choice.node)
        latencies[t], cpu[t] = time.perf_counter() - began, time.thread_time() - began_cpu
    seconds = time.perf_counter() - start
    rate = round(snapshot.n_tasks / seconds)
    # CPU time per placement too: on a shared machine the wall p99 mostly measures other processes.
    return {"pods": snapshot.n_tasks, "seconds": round(seconds, 3), "pods_per_s": rate,
            "p50_ms": round(float(np.percentile(latencies, 50)) * 1e3, 3),
            "p99_ms": round(float(np.percentile(latencies, 99)) * 1e3, 3),
            "p99_cpu_ms": round(float(np.percentile(cpu, 99)) * 1e3, 3)}  # fmt: skip


def grouped(cluster: Cluster) -> dict[str, float]:
    snapshot = ClusterSnapshot(cluster)
    engine = PlacementEngine(snapshot, profile_for(cluster.config))
    statement = Statement(snapshot)
    start = time.perf_counter()

    def apply(t: int, choice: object) -> bool:
        statement.allocate(t, choice.node)  # type: ignore[attr-defined]
        return True

    engine.choose_many(list(range(snapshot.n_tasks)), apply, statement.allocate_many)
    seconds = time.perf_counter() - start
    return {
        "pods": snapshot.n_tasks,
        "seconds": round(seconds, 3),
        "pods_per_s": round(snapshot.n_tasks / seconds),
    }


def simulate_file(n_nodes: int, n_pods: int) -> dict[str, float]:
    """Write the SchedulingBasic scenario as YAML (flow style) and time `loadmaster simulate` on it."""
    lines = ["name: scheduling-basic", "config: {actions: [allocate]}", "nodes:"]
    lines += [f"  - {{name: node-{i:06d}, capacity: {{cpu: 4, memory: 32Gi}}}}" for i in range(n_nodes)]
    lines.append("jobs:")
    lines += [
        f"  - {{name: pod-{i:06d}, tasks: [{{name: pod-{i:06d}, request: {{cpu: 100m, memory: 500Mi}}}}]}}"
        for i in range(n_pods)
    ]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scheduling-basic.yaml"
        path.write_text("\n".join(lines) + "\n")
        exe = Path(sys.executable).parent / "loadmaster"
        start = time.perf_counter()
        done = subprocess.run([str(exe), "simulate", str(path)], capture_output=True, check=True)
        seconds = time.perf_counter() - start
    placed = sum(1 for v in json.loads(done.stdout)["tasks"].values() if v["status"] == "Running")
    return {"file_mb": round(path.stat().st_size / 1e6, 2) if path.exists() else None, "placed": placed,
            "seconds_end_to_end": round(seconds, 3)}  # fmt: skip


def big_cluster_latency(n_nodes: int, samples: int) -> dict[str, float]:
    cluster = basic_cluster(n_nodes, samples)
    result = one_at_a_time(cluster)
    return {"nodes": n_nodes, "placements": samples, "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "p99_cpu_ms": result["p99_cpu_ms"]}  # fmt: skip


def openb_cluster(pod_file: str, profile: str) -> Cluster:
    nodes = []
    with open(OPENB / "openb_node_list_all_node.csv") as f:
        for row in csv.DictReader(f):
            alloc = {"cpu": int(row["cpu_milli"]), "memory": int(row["memory_mib"]) * MI,
                     "gpu": int(row["gpu"]) * GPU_DEVICE}  # fmt: skip
            nodes.append(Node(row["sn"], alloc, alloc, gpu_model=row["model"] or None))
    with open(OPENB / pod_file) as f:
        rows = list(csv.DictReader(f))
    if "creation_time" in rows[0]:
        rows.sort(key=lambda r: int(r["creation_time"] or 0))
    jobs = []
    for row in rows:
        num_gpu, gpu_milli = int(row["num_gpu"]), int(row["gpu_milli"])
        request = {"cpu": int(row["cpu_milli"]), "memory": int(row["memory_mib"]) * MI}
        if num_gpu:
            request["gpu"] = gpu_milli if num_gpu == 1 and gpu_milli < GPU_DEVICE else num_gpu * GPU_DEVICE
        spec = row.get("gpu_spec") or ""
        models = tuple(spec.split("|")) if spec and spec != "nan" else None
        name = row["name"]
        jobs.append(Job(name, (Task(name, name, request, gpu_models=models),)))
    return Cluster(tuple(nodes), tuple(jobs), config=SchedulerConfig(actions=("allocate",), profile=profile))


def openb_figures(pod_file: str, profile: str) -> dict[str, object]:
    cluster = openb_cluster(pod_file, profile)
    start = time.perf_counter()
    plan = run_cycle(cluster)
    seconds = time.perf_counter() - start
    # Rebuild the final state to measure allocation and stranding.
    snapshot = ClusterSnapshot(cluster)
    statement = Statement(snapshot)
    for d in plan.decisions:
        statement.allocate(snapshot.task_of(d.task), snapshot.node_index[d.node])
    alloc, used = snapshot.node_alloc, snapshot.state.node_used
    ratio = {r: round(float(used[i].sum() / max(alloc[i].sum(), 1)), 4)
             for i, r in enumerate(("cpu", "memory", "gpu"))}  # fmt: skip
    engine = PlacementEngine(snapshot, profile_for(cluster.config))
    pending = [snapshot.task_of(n) for n, o in plan.tasks.items() if o.status == "Pending"]
    fits_somewhere = np.zeros(snapshot.n_nodes, dtype=np.bool_)
    seen = set()
    for t in pending:
        key = engine.class_of(t)
        if key not in seen:
            seen.add(key)
            fits_somewhere |= engine.feasible(engine.context(t))
    device_free = snapshot.state.devices.free(use_releasing=False)
    free_gpu = device_free.sum(axis=1) / GPU_DEVICE
    stranded = float(free_gpu[~fits_somewhere].sum())
    return {"pods": len(plan.tasks), "placed": len(plan.decisions), "pending": len(pending),
            "allocation_ratio": ratio, "stranded_gpus": round(stranded, 2),
            "free_gpus": round(float(free_gpu.sum()), 2), "seconds": round(seconds, 3)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    result: dict[str, object] = {}
    basic = basic_cluster(5000, 10000)
    result["scheduling_basic_5000"] = {"one_at_a_time": one_at_a_time(basic), "grouped": grouped(basic),
                                       "simulate_cli": simulate_file(5000, 10000)}  # fmt: skip
    result["one_placement_100000_nodes"] = big_cluster_latency(100_000, 200 if args.quick else 1000)
    openb: dict[str, object] = {}
    for pod_file in (
        "openb_pod_list_default.csv",
        "openb_pod_list_multigpu50.csv",
        "openb_pod_list_gpushare100.csv",
    ):
        openb[pod_file] = {profile: openb_figures(pod_file, profile)
                           for profile in ("gpu_pack", "default", "first_fit")}  # fmt: skip
    result["openb"] = openb
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
