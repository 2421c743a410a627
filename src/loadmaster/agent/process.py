"""Run an agent as a process (the simulated one, or the real node agent): until SIGINT or SIGTERM, then
stop cleanly (exit code 0)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from loadmaster.agent.link.api import AgentApi
from loadmaster.agent.node_agent import NodeAgent, NodeAgentSettings
from loadmaster.agent.runtime.cgroup_limits import CgroupV2Limits
from loadmaster.agent.runtime.process_driver import ProcessRuntime
from loadmaster.agent.simulation.settings import AgentSettings
from loadmaster.agent.simulation.simulated import SimulatedNodes


def stop_on_signals() -> asyncio.Event:
    """An event SIGINT or SIGTERM sets (called inside the running loop)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


async def run_agent(
    server: str,
    token: str | None,
    settings: AgentSettings,
    say: Callable[[str], None],
    stop: asyncio.Event | None = None,
) -> SimulatedNodes:
    """Run until ``stop`` is set (a fresh event stopped by SIGINT/SIGTERM when none is given)."""
    stop = stop or stop_on_signals()
    api = AgentApi(server, token)
    nodes = SimulatedNodes(api, settings, say)
    try:
        await nodes.run(stop)
    finally:
        await api.aclose()
    say(
        f"stopped: {nodes.heartbeats_sent} heartbeats, {nodes.reporter.reports_sent} status reports "
        f"({nodes.reporter.stale_reports} no longer needed)"
    )
    return nodes


def run_agent_process(
    server: str, token: str | None, settings: AgentSettings, say: Callable[[str], None]
) -> None:
    """The ``loadmaster agent`` command's body: blocks until a signal asks it to stop."""
    asyncio.run(run_agent(server, token, settings, say))


async def run_node_agent(
    server: str,
    token: str | None,
    settings: NodeAgentSettings,
    say: Callable[[str], None],
    stop: asyncio.Event | None = None,
) -> NodeAgent:
    """The real agent until ``stop`` (SIGINT/SIGTERM when none is given); its processes keep running."""
    stop = stop or stop_on_signals()
    api = AgentApi(server, token)
    agent = NodeAgent(api, settings, ProcessRuntime(CgroupV2Limits.detect()), say)
    try:
        await agent.run(stop)
    finally:
        await api.aclose()
    say(f"stopped: {agent.heartbeats_sent} heartbeats; {len(agent.supervisors)} replica(s) left running")
    return agent


def run_node_agent_process(
    server: str, token: str | None, settings: NodeAgentSettings, say: Callable[[str], None]
) -> None:
    asyncio.run(run_node_agent(server, token, settings, say))
