"""What the HA tests ask the servers to do: register nodes, then a burst of applies from several threads.

The cluster is sized to be nearly full once every replica is placed (8 nodes of 4 CPUs take 64
replicas of 500m), so a replica placed twice, or a new leader scheduling from a stale picture of the
nodes, would over-commit a node rather than go unnoticed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.ha.failover_client import FailoverClient, WriteLog
from tests.ha.servers import ServerGroup

NODES = 8
NODE_CAPACITY = {"cpu": "4", "memory": "16Gi"}
REQUEST = {"cpu": "500m", "memory": "256Mi"}
BURST_THREADS = 4


def node_body(name: str) -> dict[str, Any]:
    return {"name": name, "labels": {}, "capacity": NODE_CAPACITY, "system_reserved": {}, "taints": [],
            "network": {}}  # fmt: skip


def job(name: str, tasks: int = 1) -> dict[str, Any]:
    spec = {"tasks": tasks, "command": ["work"], "resources": REQUEST}
    return {"api_version": "loadmaster/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def job_replicas(name: str, tasks: int = 1) -> set[str]:
    return {f"{name}-{index}" for index in range(tasks)}


def deployment(name: str, replicas: int) -> dict[str, Any]:
    service = {"name": "web", "command": ["serve"], "replicas": replicas, "resources": REQUEST}
    return {"api_version": "loadmaster/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"services": [service]}}  # fmt: skip


def deployment_replicas(name: str, replicas: int) -> set[str]:
    return {f"{name}-web-{index}" for index in range(replicas)}


def register_nodes(group: ServerGroup, log: WriteLog, count: int = NODES) -> list[str]:
    names = [f"node-{index:02d}" for index in range(count)]
    with FailoverClient(group.servers, group.token, log, deadline_s=20) as client:
        for name in names:
            client.post("/api/nodes/register", node_body(name), name)
    return names


def apply(group: ServerGroup, log: WriteLog, *manifests: dict[str, Any], deadline_s: float = 20) -> None:
    """Apply each manifest in a request of its own, through one client (it remembers who leads)."""
    with FailoverClient(group.servers, group.token, log, deadline_s) as client:
        for manifest in manifests:
            client.post("/api/apply", {"items": [manifest]}, manifest["metadata"]["name"])


class ApplyBurst:
    """``BURST_THREADS`` threads, each applying its share of one-task Jobs, one request per Job."""

    def __init__(self, group: ServerGroup, names: list[str], log: WriteLog, deadline_s: float) -> None:
        self._group = group
        self._log = log
        self._deadline_s = deadline_s
        self._errors: list[BaseException] = []
        self.cancelled = threading.Event()  # a failed test stops the threads after their current apply
        shares = [names[start::BURST_THREADS] for start in range(BURST_THREADS)]
        self._threads = [threading.Thread(target=self._run, args=(share,), daemon=True) for share in shares]

    def _run(self, names: list[str]) -> None:
        try:
            with FailoverClient(
                self._group.servers, self._group.token, self._log, self._deadline_s
            ) as client:
                for name in names:
                    if self.cancelled.is_set():
                        return
                    client.post("/api/apply", {"items": [job(name)]}, name)
        except BaseException as error:  # handed to the test by join(), not swallowed
            self._errors.append(error)

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def wait_acknowledged(self, count: int, timeout_s: float = 20.0) -> None:
        """Block until at least ``count`` applies got a 2xx (the burst is under way)."""
        deadline = time.monotonic() + timeout_s
        while len(self._log.acknowledged) < count:
            if self._errors:
                raise self._errors[0]
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"only {len(self._log.acknowledged)} applies acknowledged in {timeout_s}s"
                )
            time.sleep(0.005)

    def join(self) -> None:
        for thread in self._threads:
            thread.join(self._deadline_s + 10)
            assert not thread.is_alive(), "an apply thread is still running after its deadline"
        if self._errors:
            raise self._errors[0]


@contextmanager
def apply_burst(
    group: ServerGroup, names: list[str], log: WriteLog, deadline_s: float
) -> Iterator[ApplyBurst]:
    """Start the burst; on leaving, wait until every apply was acknowledged (or raise its error)."""
    burst = ApplyBurst(group, names, log, deadline_s)
    burst.start()
    try:
        yield burst
    except BaseException:
        burst.cancelled.set()
        raise
    burst.join()
