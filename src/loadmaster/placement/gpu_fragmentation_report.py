"""Fragmentation telemetry: per GPU node and cluster-wide, the largest GPU request that could be placed now
and the GPU capacity fragmented for the workload's shapes (``gpu_fragmentation.py``), so that users see
fragmentation instead of guessing it (``loadmaster get nodes -o wide``, ``/metrics``).

* largest schedulable shape: on a Ready, uncordoned node, its fully free devices as whole GPUs when it
  has any, else the most free on one device (a share); 0 on a node that takes nothing now. Cluster-wide:
  the largest over the nodes (a bigger request fits nowhere, however much is free in total);
* fragmented: ``F`` of the node, the free GPU its shapes cannot use (expected over the distribution);
  cluster-wide: the sum.

Computed from the snapshot's working state, with its shapes (``config.gpu_shapes``, else its own tasks').
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.resources import GPU_DEVICE
from loadmaster.placement.gpu_fragmentation import fragmented_gpu, largest_gpu_shape


@dataclass(frozen=True, slots=True)
class NodeGpuFragmentation:
    largest_gpus: float  # GPUs: a whole number, or a share of one device below 1
    fragmented_gpus: float


@dataclass(frozen=True, slots=True)
class GpuFragmentationReport:
    nodes: dict[str, NodeGpuFragmentation]  # the nodes with GPUs, by name
    largest_gpus: float
    fragmented_gpus: float


def gpu_fragmentation_report(snapshot: ClusterSnapshot) -> GpuFragmentationReport:
    gpu_nodes = _gpu_nodes(snapshot)
    schedulable = snapshot.node_ready[gpu_nodes] & ~snapshot.node_unschedulable[gpu_nodes]
    largest = np.where(schedulable, largest_gpu_shape(snapshot, gpu_nodes), 0) / GPU_DEVICE
    fragmented = fragmented_gpu(snapshot, gpu_nodes) / GPU_DEVICE
    nodes = {
        snapshot.node_names[n]: NodeGpuFragmentation(float(big), round(float(frag), 3))
        for n, big, frag in zip(gpu_nodes.tolist(), largest.tolist(), fragmented.tolist(), strict=True)
    }
    return GpuFragmentationReport(nodes, float(largest.max(initial=0.0)), _cluster_total(fragmented))


def cluster_fragmented_gpus(snapshot: ClusterSnapshot) -> float:
    """The report's ``fragmented_gpus`` alone, without the per-node views and the largest shapes (a
    replay measures it every virtual hour and needs no more)."""
    return _cluster_total(fragmented_gpu(snapshot, _gpu_nodes(snapshot)) / GPU_DEVICE)


def _gpu_nodes(snapshot: ClusterSnapshot) -> npt.NDArray[np.int64]:
    return np.flatnonzero(snapshot.node_alloc[snapshot.gpu_row] > 0)


def _cluster_total(fragmented: npt.NDArray[np.float64]) -> float:
    return round(float(fragmented.sum()), 3)
