"""A cycle's request sent to the decision worker process as what changed since the previous one.

Pickling a 5,000-node, 10,000-task cluster whole costs ~110 ms to dump (in the server, holding the
GIL) and ~430 ms to load (measured, bench/busy_cycle.py's cluster). But between two cycles most nodes
and tasks are the very same objects: the scheduling model keeps a ``Node`` while its node's state
holds and a replica's ``Task`` until its spec changes. So both ends keep a mirror, by name, of the
nodes and tasks of the last request sent: a node or task the worker holds already is sent as its name
(pickle's persistent ids) and the worker puts its own copy back in its place. The worker's cluster then
holds the same objects from one cycle to the next, which its ``SnapshotCache`` needs to reuse columns.

Both mirrors are rebuilt from each request the same way (the last object of a name wins), so they stay
equal as long as every request sent is decoded; a worker that fails or restarts starts empty, and the
server's end is ``forget``-ed then (everything is sent whole once).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from loadmaster.core.model import Cluster, Node, Task
from loadmaster.runtime.scheduling.deciding.decision_step import DecideRequest

NODE_ID = "node"
TASK_ID = "task"
PROTOCOL = pickle.HIGHEST_PROTOCOL


class ClusterMirror:
    """The nodes and tasks, by name, of the last request (both ends keep one)."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.tasks: dict[str, Task] = {}

    def hold(self, cluster: Cluster) -> None:
        self.nodes = {node.name: node for node in cluster.nodes}
        self.tasks = {task.name: task for job in cluster.jobs for task in job.tasks}

    def forget(self) -> None:
        self.nodes, self.tasks = {}, {}


class _Sender(pickle.Pickler):
    def __init__(self, file: io.BytesIO, mirror: ClusterMirror) -> None:
        super().__init__(file, protocol=PROTOCOL)
        self._mirror = mirror

    def persistent_id(self, obj: Any) -> tuple[str, str] | None:
        kind = type(obj)  # exact types: a subclass is pickled whole
        if kind is not Node and kind is not Task:
            return None
        name: str = obj.name
        held = self._mirror.nodes.get(name) if kind is Node else self._mirror.tasks.get(name)
        if held is not obj:
            return None
        return (NODE_ID if kind is Node else TASK_ID, name)


class _Receiver(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, mirror: ClusterMirror) -> None:
        super().__init__(file)
        self._mirror = mirror

    def persistent_load(self, pid: Any) -> Any:
        kind, name = pid
        return self._mirror.nodes[name] if kind == NODE_ID else self._mirror.tasks[name]


def encode_request(request: DecideRequest, mirror: ClusterMirror) -> bytes:
    """The request as bytes for a worker whose mirror equals ``mirror``; ``mirror`` then holds its cluster."""
    if not mirror.nodes and not mirror.tasks:  # a new worker: no hook to call per object (~10x faster)
        data = pickle.dumps(request, protocol=PROTOCOL)
    else:
        buffer = io.BytesIO()
        _Sender(buffer, mirror).dump(request)
        data = buffer.getvalue()
    mirror.hold(request.cluster)
    return data


def decode_request(data: bytes, mirror: ClusterMirror) -> DecideRequest:
    """The worker's end of ``encode_request``."""
    request = _Receiver(io.BytesIO(data), mirror).load()
    if not isinstance(request, DecideRequest):
        raise TypeError(f"expected a DecideRequest, got {type(request).__name__}")
    mirror.hold(request.cluster)
    return request
