"""The server's Prometheus metrics (names from docs/api.md), in a registry of its own.

One registry per control plane, not the process-wide default, so that several servers in one test
process do not share counters.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

# Cycle durations: from well under a millisecond (nothing to do) to seconds (10,000 replicas at once).
CYCLE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Pending -> Scheduled: tens of milliseconds when a node is free, minutes behind a backoff.
# The per-resource figures of a queue exported as loadmaster_queue_<figure>{queue, resource}.
QUEUE_FIGURES = ("allocated", "deserved", "fair_share", "limit")
E2E_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0)


class ControlPlaneMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.decisions = Counter(
            "loadmaster_decisions",
            "Scheduling decisions written, by action (bind, pipeline, evict, move, wait)",
            ["action"],
            registry=self.registry,
        )
        self.failures = Counter(
            "loadmaster_failures",
            "Replicas left Pending by a cycle, and failed cycles, by reason",
            ["reason"],
            registry=self.registry,
        )
        self.decision_duration = Histogram(
            "loadmaster_decision_duration_seconds",
            "Duration of one scheduling cycle (decide and write)",
            buckets=CYCLE_BUCKETS,
            registry=self.registry,
        )
        self.e2e_duration = Histogram(
            "loadmaster_e2e_duration_seconds",
            "From a replica's creation (Pending) to its Scheduled write",
            buckets=E2E_BUCKETS,
            registry=self.registry,
        )
        self.retries = Counter(
            "loadmaster_retries",
            "Placement attempts that failed and will be retried at the normal cadence",
            registry=self.registry,
        )
        self.max_retries = Counter(
            "loadmaster_max_retries",
            "Placement attempts that failed past the 4th and put a replica in backoff",
            registry=self.registry,
        )
        self.skipped_objects = Counter(
            "loadmaster_skipped_objects",
            "Objects the scheduler could not convert and left out of its cycles, by kind and reason",
            ["kind", "reason"],
            registry=self.registry,
        )
        self.controller_errors = Counter(
            "loadmaster_controller_errors",
            "Controller errors for one owner (logged; the pass went on with the others), by owner kind",
            ["kind"],
            registry=self.registry,
        )
        self.scale_up_requests = Counter(
            "loadmaster_scale_up_requests",
            "Scale-up requests recorded, by worker template",
            ["template"],
            registry=self.registry,
        )
        # LRS L4's names: per-node placement successes, and the scheduler's reads of node capacity.
        self.successes = Counter(
            "loadmaster_successes",
            "Replicas bound to a node by the scheduler, by node",
            ["node"],
            registry=self.registry,
        )
        self.store_capacity_fetches = Counter(
            "loadmaster_store_capacity_fetches",
            "Node capacity read from the store by the scheduler (a node object converted), by success",
            ["success"],
            registry=self.registry,
        )
        self.cycles = Counter("loadmaster_cycles", "Scheduling cycles run", registry=self.registry)
        self.decision_worker_restarts = Counter(
            "loadmaster_decision_worker_restarts",
            "Deaths of the decision worker process (decide_in: process), each followed by a new worker",
            registry=self.registry,
        )
        self.pending = Gauge(
            "loadmaster_pending_replicas", "Pending replicas after the last cycle", registry=self.registry
        )
        self.backoffs = Gauge(
            "loadmaster_backoff_replicas", "Pending replicas waiting out a backoff", registry=self.registry
        )
        self.is_leader = Gauge("loadmaster_is_leader", "1 while this server leads", registry=self.registry)
        # GPU fragmentation (placement/gpu_fragmentation_report.py), per GPU node and cluster-wide
        self.gpu_fragmented = Gauge(
            "loadmaster_gpu_fragmented",
            "GPUs free on the node that the workload's GPU shapes cannot use (expected)",
            ["node"],
            registry=self.registry,
        )
        self.gpu_largest_schedulable = Gauge(
            "loadmaster_gpu_largest_schedulable",
            "Largest GPU request (GPUs) the node could take now",
            ["node"],
            registry=self.registry,
        )
        self.cluster_gpu_fragmented = Gauge(
            "loadmaster_cluster_gpu_fragmented",
            "GPUs free in the cluster that the workload's GPU shapes cannot use (expected)",
            registry=self.registry,
        )
        self.cluster_gpu_largest_schedulable = Gauge(
            "loadmaster_cluster_gpu_largest_schedulable",
            "Largest GPU request (GPUs) some node could take now",
            registry=self.registry,
        )

        # Per queue, after each cycle (runtime/scheduling/telemetry/queue_gauges.py): user units (cores,
        # bytes, devices); resource is one of the resources the cluster declares.
        self.queue_amounts = {
            figure: Gauge(
                f"loadmaster_queue_{figure}",
                f"The queue's {figure.replace('_', ' ')} per resource after the last cycle",
                ["queue", "resource"],
                registry=self.registry,
            )
            for figure in QUEUE_FIGURES
        }
        self.queue_dominant_share = Gauge(
            "loadmaster_queue_dominant_share",
            "max over resources of allocated / min(limit, max(deserved, fair share)); above 1: reclaimable",
            ["queue"],
            registry=self.registry,
        )

        # The pressure rebalancer (issue 16)
        self.rebalance_moves = Counter(
            "loadmaster_rebalance_moves", "Voluntary moves the rebalancer started", registry=self.registry
        )
        self.rebalance_skips = Counter(
            "loadmaster_rebalance_skips",
            "Rebalancer candidates refused, by reason (rebalance_skipped events)",
            ["reason"],
            registry=self.registry,
        )
        self.node_pressure = Gauge(
            "loadmaster_node_pressure",
            "The rebalancer's pressure EWMA per node and resource (0..1), for nodes with fresh samples",
            ["node", "resource"],
            registry=self.registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
