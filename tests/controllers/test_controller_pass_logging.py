"""A controller pass or a scheduler cycle logs at info only when an operator should read it; routine ones log
at debug."""

from __future__ import annotations

import logging
from collections.abc import Iterator, MutableMapping
from typing import Any

import pytest
import structlog
from structlog.testing import capture_logs

from loadmaster.controllers.changes import CreateJobReplicas
from loadmaster.manifests import parse_manifests
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.reconciling import controller_loop
from loadmaster.runtime.reconciling.writes.change_writes import ChangeOutcome
from loadmaster.runtime.requests.writes.object_writes import apply_manifests
from loadmaster.runtime.requests.writes.status_writes import register_node
from loadmaster.runtime.scheduling import scheduler_service
from loadmaster.testing.fake_clock import FakeClock
from tests.controllers.conftest import catch_up

pytestmark = pytest.mark.anyio

JOB = """
api_version: loadmaster/v1
kind: Job
metadata: {name: train}
spec: {tasks: 2, image: "trainer:1", resources: {cpu: 100m}}
"""


@pytest.fixture(name="logs")
def fixture_logs() -> Iterator[list[MutableMapping[str, Any]]]:
    """Every log entry of the test, debug included, whatever level another test configured."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with capture_logs() as entries:
            yield entries
    finally:
        structlog.configure(**saved)


@pytest.fixture(name="unhurried")
def fixture_unhurried(monkeypatch: pytest.MonkeyPatch) -> None:
    """No pass or cycle counts as slow: on a busy machine a routine one can take longer than the 0.1 s
    that makes it worth an info line, and these tests are about what else raises the level."""
    monkeypatch.setattr(controller_loop, "SLOW_PASS_S", float("inf"))
    monkeypatch.setattr(scheduler_service, "SLOW_CYCLE_S", float("inf"))


def pass_lines(entries: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in entries if entry["event"] == "controllers"]


async def one_pass(plane: ControlPlane, full: bool = False) -> None:
    assert plane.controllers is not None
    await catch_up(plane)
    await plane.controllers.reconcile_once(full=full)
    await catch_up(plane)


async def test_a_routine_pass_that_creates_replicas_logs_at_debug(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]], unhurried: None
) -> None:
    await apply_manifests(plane, parse_manifests(JOB), "user")
    await one_pass(plane)
    [line] = pass_lines(logs)
    assert (line["log_level"], line["changes"], line["conflicts"]) == ("debug", 1, 0)
    assert line["duration_ms"] >= 0


async def test_a_pass_that_marks_a_node_not_ready_logs_at_info(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]]
) -> None:
    await register_node(plane, {"name": "n1", "capacity": {"cpu": "4", "memory": "8Gi"}}, "agent")
    await one_pass(plane)
    assert isinstance(plane.clock, FakeClock)
    plane.clock.advance(91)  # past the heartbeat window
    await one_pass(plane, full=True)
    assert [(line["log_level"], line["nodes_not_ready"]) for line in pass_lines(logs)] == [("info", 1)]


async def test_a_pass_slower_than_the_threshold_logs_at_info(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(controller_loop, "SLOW_PASS_S", 0.0)
    await apply_manifests(plane, parse_manifests(JOB), "user")
    await one_pass(plane)
    assert [line["log_level"] for line in pass_lines(logs)] == ["info"]


async def test_a_pass_whose_writes_conflicted_logs_at_info(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone changed the job between the pass's read and its write (the store refused the CAS)."""

    async def refused(*_: Any) -> ChangeOutcome:
        return ChangeOutcome(conflicts=[CreateJobReplicas("train", (0, 1))])

    monkeypatch.setattr(controller_loop, "write_changes", refused)
    await apply_manifests(plane, parse_manifests(JOB), "user")
    await one_pass(plane)
    assert [(line["log_level"], line["conflicts"]) for line in pass_lines(logs)] == [("info", 1)]


async def test_a_pass_with_nothing_to_do_logs_nothing(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]], unhurried: None
) -> None:
    await one_pass(plane)
    assert pass_lines(logs) == []


def cycle_lines(entries: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in entries if entry["event"] == "cycle"]


async def one_cycle(plane: ControlPlane) -> None:
    assert plane.scheduler is not None
    await one_pass(plane)  # the job's replicas
    await plane.scheduler.reconcile_once()
    await catch_up(plane)


async def test_a_cycle_that_only_binds_logs_at_debug(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]], unhurried: None
) -> None:
    await register_node(plane, {"name": "n1", "capacity": {"cpu": "4", "memory": "8Gi"}}, "agent")
    await apply_manifests(plane, parse_manifests(JOB), "user")
    await one_cycle(plane)
    assert [(line["log_level"], line["decisions"]) for line in cycle_lines(logs)] == [("debug", {"bind": 2})]


async def test_a_cycle_where_replicas_wait_logs_at_info(
    plane: ControlPlane, logs: list[MutableMapping[str, Any]]
) -> None:
    await apply_manifests(plane, parse_manifests(JOB), "user")  # no node: both replicas wait
    await one_cycle(plane)
    assert [(line["log_level"], line["decisions"]) for line in cycle_lines(logs)] == [("info", {"wait": 2})]
