"""Placement benchmarks; prints one JSON document. Not a test: figures go into the issue notes.

    .venv/bin/python bench/placement.py            # everything (about a minute)
    .venv/bin/python bench/placement.py --quick    # smaller repetitions
    # chosen sections, pod lists (openb_pod_list_NAME.csv) and profiles; one case, as a bisect runs it:
    .venv/bin/python bench/placement.py --only openb --pod-lists default --profiles gpu_pack

(a) kube-scheduler's SchedulingBasic shape: 5,000 nodes (4 cpu, 32Gi), 10,000 pods (100m, 500Mi),
    one task at a time (a full filter+score pass per pod) and grouped (equivalence class);
    plus ``loadmaster simulate`` of the same scenario as a YAML file, start to finish (subprocess).
(b) the same at 100,000 nodes: latency of one placement (p50/p99).
(c) the Alibaba openb GPU trace (bench/openb_trace.py): every pod of a pod list placed in file order
    onto all 1,523 nodes in one cycle, with gpu_pack, first fit and default: pods placed, GPU allocated,
    dead GPUs, scheduler seconds; an upper bound on the pods any scheduler can place; and the FGD
    paper's protocol (1,213 GPU nodes, pods resampled to 1.3x the GPU capacity, shuffled; the mean
    unallocated GPUs over 10 seeds, 3 with --quick).
(d) the control plane's service modes: 30 services x 100 replicas, and one service of 10,000, placed in
    one cycle onto 1,000 empty nodes with the profile of ``spread`` and of ``pack``
    (``manifests.model.job_spec.PLACEMENT_PROFILES``), each replica its own single-task job named after its
    service, as the control plane builds them (``runtime/scheduling/model/service_jobs.py``): cycle seconds
    (wall and cpu) and the largest skew of a service's replica counts over the nodes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, Task
from loadmaster.core.working.statement import Statement
from loadmaster.cycle import run_cycle
from loadmaster.manifests.model.job_spec import PLACEMENT_PROFILES
from loadmaster.placement.engine import PlacementEngine
from loadmaster.placement.profile import profile_for
from openb_trace import FGD_SEEDS, fgd_protocol, file_order_figures, pods_placed_bound

GI, MI = 2**30, 2**20
OPENB_FILES = (
    "openb_pod_list_default.csv",
    "openb_pod_list_gpuspec33.csv",
    "openb_pod_list_multigpu50.csv",
    "openb_pod_list_gpushare100.csv",
)
OPENB_PROFILES = ("gpu_pack", "first_fit", "default")


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
        file_mb = round(path.stat().st_size / 1e6, 2)  # measured here: the directory goes with the block
        exe = Path(sys.executable).parent / "loadmaster"
        start = time.perf_counter()
        done = subprocess.run([str(exe), "simulate", str(path)], capture_output=True, check=True)
        seconds = time.perf_counter() - start
    placed = sum(1 for v in json.loads(done.stdout)["tasks"].values() if v["status"] == "Running")
    return {"file_mb": file_mb, "placed": placed, "seconds_end_to_end": round(seconds, 3)}


def big_cluster_latency(n_nodes: int, samples: int) -> dict[str, float]:
    cluster = basic_cluster(n_nodes, samples)
    result = one_at_a_time(cluster)
    return {"nodes": n_nodes, "placements": samples, "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"],
            "p99_cpu_ms": result["p99_cpu_ms"]}  # fmt: skip


def service_modes(n_nodes: int = 1000, n_services: int = 30, replicas: int = 100) -> dict[str, object]:
    alloc = {"cpu": 64000, "memory": 256 * GI}
    nodes = tuple(Node(f"node-{i:06d}", alloc, alloc) for i in range(n_nodes))
    figures: dict[str, object] = {}
    for mode in ("spread", "pack"):
        profile = PLACEMENT_PROFILES[mode]
        request = {"cpu": 10, "memory": 16 * MI}
        jobs = tuple(
            Job(f"shop/svc{s}", (Task(f"shop-svc{s}-{i}", f"shop/svc{s}", request),), profile=profile)
            for s in range(n_services) for i in range(replicas)
        )  # fmt: skip
        start, cpu = time.perf_counter(), time.process_time()
        plan = run_cycle(Cluster(nodes, jobs), 0.0)
        seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
        per_service: dict[str, np.ndarray] = {}
        index = {node.name: i for i, node in enumerate(nodes)}
        for decision in plan.decisions:
            counts = per_service.setdefault(
                decision.task.rsplit("-", 1)[0], np.zeros(n_nodes, dtype=np.int64)
            )
            counts[index[decision.node]] += 1
        skew = max(int(c.max() - c.min()) for c in per_service.values())
        figures[mode] = {"profile": profile, "placed": len(plan.decisions),
                         "cycle_seconds": round(seconds, 3), "cycle_cpu_seconds": round(cpu_seconds, 3),
                         "max_service_skew": skew}  # fmt: skip
    return figures


SECTIONS = ("basic", "big", "services", "openb", "fgd")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, default=SECTIONS, help="these sections only")
    parser.add_argument("--pod-lists", nargs="+", help="openb_pod_list_NAME.csv by NAME")
    parser.add_argument("--profiles", nargs="+", default=OPENB_PROFILES, help="profiles (openb, fgd)")
    args = parser.parse_args()
    pod_lists = [f"openb_pod_list_{name}.csv" for name in args.pod_lists] if args.pod_lists else OPENB_FILES
    result: dict[str, object] = {}
    if "basic" in args.only:
        basic = basic_cluster(5000, 10000)
        result["scheduling_basic_5000"] = {"one_at_a_time": one_at_a_time(basic), "grouped": grouped(basic),
                                           "simulate_cli": simulate_file(5000, 10000)}  # fmt: skip
    if "big" in args.only:
        result["one_placement_100000_nodes"] = big_cluster_latency(100_000, 200 if args.quick else 1000)
    if "services" in args.only:
        result["service_modes_1000_nodes"] = {
            "30x100": service_modes(),
            "1x10000": service_modes(n_services=1, replicas=10_000),
        }
    if "openb" in args.only:
        result["openb"] = {f: {profile: file_order_figures(f, profile) for profile in args.profiles}
                           for f in pod_lists}  # fmt: skip
        result["openb_pods_placed_bound_pct"] = {f: pods_placed_bound(f) for f in pod_lists}
    if "fgd" in args.only:
        seeds = FGD_SEEDS[:3] if args.quick else FGD_SEEDS
        profiles = [p for p in args.profiles if p != "default"]  # default is not in the paper's comparison
        result["fgd_protocol"] = {profile: fgd_protocol(profile, seeds) for profile in profiles}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
