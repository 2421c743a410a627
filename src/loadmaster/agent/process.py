"""Run the simulated agent as a process: until SIGINT or SIGTERM, then stop cleanly (exit code 0)."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable

from loadmaster.agent.api import AgentApi
from loadmaster.agent.simulated import AgentSettings, SimulatedNodes


async def run_agent(
    server: str,
    token: str | None,
    settings: AgentSettings,
    say: Callable[[str], None],
    stop: asyncio.Event | None = None,
) -> SimulatedNodes:
    """Run until ``stop`` is set (a fresh event stopped by SIGINT/SIGTERM when none is given)."""
    if stop is None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
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
