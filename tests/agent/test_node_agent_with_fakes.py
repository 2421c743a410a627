"""The node agent's decisions with in-memory fakes for the runtime and the server (the end-to-end tests use
real ones): work keyed by incarnation (a replacement moved from ``X.next`` to ``X`` keeps its process, the
old incarnation under ``X`` is stopped), a changed spec revision supersedes a start, a Running replica
without a process after a restart is reported exited, and report fields an older server lacks are dropped."""

from __future__ import annotations

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

import httpx

from loadmaster.agent.host.node_shape import NodeShape
from loadmaster.agent.link.api import AgentApi
from loadmaster.agent.node_agent import NodeAgent, NodeAgentSettings
from loadmaster.agent.runtime.protocol import LaunchSpec

NODE = "node-1"


class FakeUnit:
    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started_at = float(pid)
        self.ended = asyncio.Event()

    def is_running(self) -> bool:
        return not self.ended.is_set()

    async def wait(self) -> int | None:
        await self.ended.wait()
        return 0


class FakeRuntime:
    driver = "fake"
    limits = "none"

    def __init__(self) -> None:
        self.started: list[LaunchSpec] = []
        self.stopped: list[int] = []
        self._pids = itertools.count(100)

    async def start(self, spec: LaunchSpec) -> FakeUnit:
        self.started.append(spec)
        return FakeUnit(next(self._pids))

    async def stop(self, unit: FakeUnit, signal_number: int, grace_s: float) -> int | None:
        self.stopped.append(unit.pid)
        unit.ended.set()
        return 0

    def adopt(self, record: dict[str, Any]) -> FakeUnit | None:
        return None

    def record_of(self, unit: FakeUnit) -> dict[str, Any]:
        return {"pid": unit.pid, "started_at": unit.started_at}


class FakeServer:
    """Answers status reports with the replica as it would be stored."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, dict[str, Any]]] = []
        self.server = "http://fake"
        self.revisions = itertools.count(10_000)  # after every revision the tests write

    async def report_status(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.reports.append((name, body))
        status = {k: v for k, v in body.items() if k not in ("message", "reason", "incarnation")}
        metadata = {"name": name, "revision": next(self.revisions)}
        spec = {"incarnation": body["incarnation"]} if "incarnation" in body else {}
        return {"metadata": metadata, "spec": spec, "status": {**status, "node_ref": NODE}}


def replica(
    name: str, incarnation: str, phase: str, spec_hash: str = "a" * 64, revision: int = 1
) -> dict[str, Any]:
    spec = {
        "incarnation": incarnation,
        "spec_hash": spec_hash,
        "command": ["sleep", "60"],
        "owner_kind": "Deployment",
    }
    metadata = {"name": name, "revision": revision}
    return {"metadata": metadata, "spec": spec, "status": {"phase": phase, "node_ref": NODE}}


def make_agent(tmp_path: Path, healthy_after_s: float = 10.0) -> tuple[NodeAgent, FakeRuntime, FakeServer]:
    runtime, server = FakeRuntime(), FakeServer()
    settings = NodeAgentSettings(
        name=NODE, shape=NodeShape(capacity={"cpu": "1"}), work_dir=tmp_path, healthy_after_s=healthy_after_s
    )
    agent = NodeAgent(server, settings, runtime, lambda line: None)  # type: ignore[arg-type]
    agent.feed.listed = True
    return agent, runtime, server


async def settle(agent: NodeAgent, passes: int = 5) -> None:
    for _ in range(passes):
        agent.reconcile()
        await asyncio.sleep(0.01)


def test_a_replacement_moved_from_x_next_to_x_keeps_its_process_and_the_old_one_stops(tmp_path: Path) -> None:
    async def scenario() -> None:
        agent, runtime, server = make_agent(tmp_path)
        agent.feed.replicas = {
            "web-0": replica("web-0", "web-0@1", "Scheduled"),
            "web-0.next": replica("web-0.next", "web-0@7", "Scheduled"),
        }
        await settle(agent)
        assert sorted(spec.key for spec in runtime.started) == ["web-0@1", "web-0@7"]
        old_pid = agent.supervisors["web-0@1"].truth.pid
        # The swap: X deleted, X.next's object moved to the key X with the same incarnation.
        agent.feed.replicas = {"web-0": replica("web-0", "web-0@7", "Running", revision=5000)}
        await settle(agent)
        assert len(runtime.started) == 2  # adopted under the new name, not started again
        assert runtime.stopped == [old_pid]
        assert list(agent.supervisors) == ["web-0@7"]
        server.reports.clear()
        agent.supervisors["web-0@7"].truth = agent.supervisors["web-0@7"].truth.__class__(
            "running", 101, degraded=True, message="check failing"
        )
        agent.supervisors["web-0@7"].kick()
        await settle(agent)
        assert [name for name, _ in server.reports] == ["web-0"]  # reports follow the new name
        assert server.reports[0][1]["incarnation"] == "web-0@7"

    asyncio.run(scenario())


def test_a_changed_spec_revision_supersedes_the_running_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        agent, runtime, _ = make_agent(tmp_path)
        agent.feed.replicas = {"job-0": replica("job-0", "job-0@1", "Scheduled", spec_hash="a" * 64)}
        await settle(agent)
        first = agent.supervisors["job-0@1"].truth.pid
        changed = replica("job-0", "job-0@1", "Scheduled", spec_hash="b" * 64, revision=5000)
        agent.feed.replicas = {"job-0": changed}
        await settle(agent, passes=8)
        assert runtime.stopped == [first]
        assert [spec.key for spec in runtime.started] == ["job-0@1", "job-0@1"]
        assert agent.supervisors["job-0@1"].revision == "b" * 64

    asyncio.run(scenario())


def test_a_running_replica_whose_spec_revision_changed_is_started_again_with_the_new_spec(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        agent, runtime, _ = make_agent(tmp_path)
        agent.feed.replicas = {"web-1": replica("web-1", "web-1@1", "Scheduled", spec_hash="a" * 64)}
        await settle(agent)
        first = agent.supervisors["web-1@1"].truth.pid
        # Reported Running meanwhile; then its spec changes in place.
        changed = replica("web-1", "web-1@1", "Running", spec_hash="c" * 64, revision=50_000)
        agent.feed.replicas = {"web-1": changed}
        await settle(agent, passes=8)
        assert runtime.stopped == [first]
        assert len(runtime.started) == 2
        assert agent.supervisors["web-1@1"].truth.state == "running"

    asyncio.run(scenario())


def test_a_running_replica_without_a_process_after_an_agent_restart_is_reported_exited(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        agent, runtime, server = make_agent(tmp_path)
        agent.feed.replicas = {"web-2": replica("web-2", "web-2@1", "Running")}
        await settle(agent)
        assert runtime.started == []
        assert server.reports[0][1]["exited"] is True and "exit_code" not in server.reports[0][1]

    asyncio.run(scenario())


def test_a_replica_without_an_incarnation_is_keyed_by_its_name(tmp_path: Path) -> None:
    async def scenario() -> None:
        agent, runtime, _ = make_agent(tmp_path)
        plain = replica("old-0", "", "Scheduled")
        del plain["spec"]["incarnation"]
        agent.feed.replicas = {"old-0": plain}
        await settle(agent)
        assert list(agent.supervisors) == ["old-0"] and len(runtime.started) == 1

    asyncio.run(scenario())


def test_report_fields_an_older_server_does_not_know_are_dropped_and_the_report_goes_through(
    tmp_path: Path,
) -> None:
    """Against a real HTTP client (httpx's in-memory transport) whose server knows fewer report fields."""
    seen: list[dict[str, Any]] = []

    def older_server(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        unknown = [k for k in body if k in ("pid", "routable")]
        if unknown:
            errors = [{"path": k, "message": "unknown field (expected phase, ...)"} for k in unknown]
            return httpx.Response(422, json={"error": "invalid", "message": "bad", "errors": errors})
        return httpx.Response(200, json={"metadata": {"name": "web-0"}, "status": body})

    async def scenario() -> None:
        api = AgentApi("http://server", None, transport=httpx.MockTransport(older_server))
        settings = NodeAgentSettings(name=NODE, shape=NodeShape(capacity={"cpu": "1"}), work_dir=tmp_path)
        agent = NodeAgent(api, settings, FakeRuntime(), lambda line: None)  # type: ignore[arg-type]
        report = {"phase": "Running", "pid": 7, "routable": True, "healthy": True}
        answer = await agent._report("web-0", report)
        again = await agent._report("web-0", report)
        await api.aclose()
        assert answer is not None and answer["status"] == {"phase": "Running", "healthy": True}
        assert again is not None
        # One refused attempt, then only what the server knows: the second report is not tried in full.
        assert [sorted(body) for body in seen] == [
            ["healthy", "phase", "pid", "routable"],
            ["healthy", "phase"],
            ["healthy", "phase"],
        ]

    asyncio.run(scenario())


def test_a_process_without_a_healthcheck_is_reported_healthy_only_once_it_has_kept_running(
    tmp_path: Path,
) -> None:
    """Healthy at once would clear the leader's restart count after every restart of a process that
    exits right away: the restart budget would never run out (a crash loop)."""

    async def scenario() -> None:
        agent, runtime, server = make_agent(tmp_path, healthy_after_s=0.3)
        agent.feed.replicas = {"web-0": replica("web-0", "web-0@1", "Scheduled")}
        await settle(agent)
        assert [body["healthy"] for _, body in server.reports] == [False]
        await asyncio.sleep(0.4)
        await settle(agent)
        assert [body["healthy"] for _, body in server.reports] == [False, True]
        assert len(runtime.started) == 1

    asyncio.run(scenario())


def test_a_process_that_ends_before_it_has_kept_running_is_never_reported_healthy(tmp_path: Path) -> None:
    async def scenario() -> None:
        agent, _, server = make_agent(tmp_path, healthy_after_s=0.3)
        agent.feed.replicas = {"web-0": replica("web-0", "web-0@1", "Scheduled")}
        await settle(agent)
        unit = agent.supervisors["web-0@1"].unit
        assert unit is not None
        unit.ended.set()  # type: ignore[attr-defined]
        await asyncio.sleep(0.4)
        await settle(agent)
        assert [(body["healthy"], body["exited"]) for _, body in server.reports] == [
            (False, False),
            (False, True),
        ]

    asyncio.run(scenario())
