"""Where a replica's logs are: the real agent's endpoint (``status.probe_address`` of its node).

The server does not keep logs; ``GET /api/replicas/{name}/logs`` asks the agent that runs the replica
(docs/agent.md). A replica that is not on a node, or on a node without an agent endpoint (a simulated
node), has no logs to read: that is a 409 naming why.
"""

from __future__ import annotations

from loadmaster.manifests import NODE, REPLICA
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.errors import WriteConflictError
from loadmaster.runtime.requests.reads.object_reads import get_object


class NoLogsError(WriteConflictError):
    """The replica exists but no agent can be asked for its logs."""


async def log_source(plane: ControlPlane, name: str) -> str:
    """``http://127.0.0.1:PORT/logs/<name>``: the agent endpoint that has the replica's logs."""
    replica = await get_object(plane, REPLICA, name)
    node_name = (replica.get("status") or {}).get("node_ref")
    if not node_name:
        raise NoLogsError(f"replicas/{name} is not on a node: it has no logs yet")
    node = await get_object(plane, NODE, str(node_name))
    address = (node.get("status") or {}).get("probe_address")
    if not address:
        raise NoLogsError(f"nodes/{node_name} has no agent endpoint (a simulated node runs nothing)")
    return f"http://{address}/logs/{name}"
