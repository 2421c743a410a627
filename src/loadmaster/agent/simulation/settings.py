"""What a simulated agent is asked to be: its nodes' names and shape, and how often it speaks."""

from __future__ import annotations

from dataclasses import dataclass

from loadmaster.agent.host.node_shape import NodeShape

DEFAULT_HEARTBEAT_S = 10.0
DEFAULT_POLL_S = 1.0
# Concurrent requests per agent: enough to register 1,000 nodes in a few seconds, few enough to leave the
# server's single writer room for the scheduler.
DEFAULT_CONCURRENCY = 8


@dataclass(frozen=True, slots=True)
class AgentSettings:
    names: tuple[str, ...]
    shape: NodeShape
    heartbeat_s: float = DEFAULT_HEARTBEAT_S
    poll_s: float = DEFAULT_POLL_S
    concurrency: int = DEFAULT_CONCURRENCY
