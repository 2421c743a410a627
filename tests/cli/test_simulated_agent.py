"""The simulated agent's loops against an in-memory control plane: registration while the server starts,
heartbeats, re-registration of forgotten nodes, reports for assigned replicas, and fatal refusals."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from loadmaster.agent.host.node_shape import NodeShape
from loadmaster.agent.link.api import AgentApi, AgentFatalError
from loadmaster.agent.simulation.settings import AgentSettings
from loadmaster.agent.simulation.simulated import SimulatedNodes
from tests.cli.fake_control_plane import FakeControlPlane

SHAPE = NodeShape(capacity={"cpu": "8", "memory": "32Gi"})
FAST = {"heartbeat_s": 0.01, "poll_s": 0.01}


async def run_until(
    plane: FakeControlPlane, names: tuple[str, ...], done: Callable[[], bool], timeout_s: float = 5.0
) -> tuple[SimulatedNodes, list[str]]:
    said: list[str] = []
    api = AgentApi("http://fake", "token", transport=plane.transport())
    agent = SimulatedNodes(api, AgentSettings(names=names, shape=SHAPE, **FAST), said.append)
    stop = asyncio.Event()
    running = asyncio.create_task(agent.run(stop))
    try:
        async with asyncio.timeout(timeout_s):
            while not done():
                if running.done():
                    running.result()  # re-raise what ended it early
                    raise AssertionError("the agent stopped before the condition held")
                await asyncio.sleep(0.005)
    finally:
        stop.set()
        await running
        await api.aclose()
    return agent, said


def test_nodes_are_registered_once_the_server_answers_and_then_heartbeat() -> None:
    plane = FakeControlPlane(unreachable_requests=3)
    names = ("sim-01", "sim-02")
    _, said = asyncio.run(run_until(plane, names, lambda: min(plane.heartbeats[n] for n in names) >= 2))
    assert set(plane.nodes) == set(names)
    assert plane.nodes["sim-01"]["capacity"] == {"cpu": "8", "memory": "32Gi"}
    assert any("cannot reach the server at http://fake" in line and "retrying" in line for line in said)


def test_scheduled_replicas_are_reported_running_and_terminating_ones_terminated() -> None:
    plane = FakeControlPlane()
    plane.assign("web-0", "sim-01", "Scheduled")
    plane.assign("web-1", "sim-01", "Terminating")
    plane.assign("web-2", "elsewhere", "Scheduled")
    plane.assign("web-3", "sim-01", "Pending")
    asyncio.run(run_until(plane, ("sim-01",), lambda: len(plane.reports) >= 2))
    assert sorted(plane.reports) == [("web-0", "Running"), ("web-1", "Terminated")]
    assert (plane.phase_of("web-2"), plane.phase_of("web-3")) == ("Scheduled", "Pending")


def test_each_report_is_sent_once_even_though_every_poll_sees_the_replica() -> None:
    plane = FakeControlPlane()
    plane.assign("web-0", "sim-01", "Scheduled")
    agent, _ = asyncio.run(
        run_until(plane, ("sim-01",), lambda: plane.heartbeats["sim-01"] >= 10 and bool(plane.reports))
    )
    assert plane.reports == [("web-0", "Running")]
    assert agent.reporter.reports_sent == 1


def test_a_node_the_server_forgot_is_registered_again() -> None:
    plane = FakeControlPlane()

    def forgotten_then_back() -> bool:
        if plane.heartbeats["sim-01"] == 1 and plane.registrations["sim-01"] == 1:
            plane.nodes.clear()  # a server restarted on an empty data dir
        return plane.registrations["sim-01"] >= 2 and plane.heartbeats["sim-01"] >= 2

    _, said = asyncio.run(run_until(plane, ("sim-01",), forgotten_then_back))
    assert "node sim-01 is unknown to the server; registering it again" in said


def test_a_refused_registration_stops_the_agent_with_the_servers_message() -> None:
    plane = FakeControlPlane()
    plane.refuse_registration_with = 401
    with pytest.raises(AgentFatalError, match="the server refused to register node sim-01: unknown token"):
        asyncio.run(run_until(plane, ("sim-01",), lambda: False))


def test_an_agent_token_that_may_not_watch_falls_back_to_polling_each_node() -> None:
    plane = FakeControlPlane(token_role="agent")
    plane.assign("web-0", "sim-01", "Scheduled")
    _, said = asyncio.run(run_until(plane, ("sim-01",), lambda: bool(plane.reports)))
    assert any("may not watch replicas; polling each node" in line for line in said)


def test_a_token_that_may_watch_learns_assignments_from_the_watch_stream() -> None:
    plane = FakeControlPlane(token_role="user")
    plane.assign("web-0", "sim-01", "Scheduled")
    plane.hidden_from_list.add("web-0")
    event = {"kind": "Replica", "name": "web-0", "revision": 2, "object": plane.replicas["web-0"]}
    plane.watch_events.append(event)
    _, said = asyncio.run(run_until(plane, ("sim-01",), lambda: bool(plane.reports)))
    assert plane.reports == [("web-0", "Running")]
    assert plane.watches >= 1
    assert not any("polling" in line for line in said)


def test_a_replacement_that_takes_over_a_name_is_adopted_and_the_incarnation_it_replaced_stops() -> None:
    plane = FakeControlPlane()
    plane.assign("web-0", "sim-01", "Scheduled", incarnation="web-0@1")
    plane.assign("web-0.next", "sim-02", "Scheduled", incarnation="web-0.next@5")

    async def scenario() -> dict[str, str]:
        api = AgentApi("http://fake", "token", transport=plane.transport())
        settings = AgentSettings(names=("sim-01", "sim-02"), shape=SHAPE, **FAST)
        agent = SimulatedNodes(api, settings, lambda line: None)
        stop = asyncio.Event()
        running = asyncio.create_task(agent.run(stop))
        try:
            async with asyncio.timeout(5):
                while len(agent.reporter.running) < 2:
                    await asyncio.sleep(0.005)
                # The swap: the replacement's object moves to the key web-0, web-0.next is gone.
                plane.replicas["web-0"] = {**plane.replicas.pop("web-0.next"), "metadata": {"name": "web-0"}}
                while "web-0@1" in agent.reporter.running:
                    await asyncio.sleep(0.005)
        finally:
            stop.set()
            await running
            await api.aclose()
        return agent.reporter.running

    assert asyncio.run(scenario()) == {"web-0.next@5": "web-0"}
    # Every report named the incarnation it was about; none reached the successor by name alone.
    assert sorted(plane.reports) == [("web-0", "Running"), ("web-0.next", "Running")]
