"""Server-sent events: the object watch (live, replayed, relisted) and the audit log's follow mode."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from tests.api.conftest import Api, deployment, sse_events

pytestmark = pytest.mark.anyio


async def read_events(
    client: httpx.AsyncClient, path: str, params: dict[str, Any], until: Any, timeout_s: float = 10.0
) -> list[tuple[str, Any]]:
    """Stream ``path`` until ``until(events)`` is true; the events read so far."""
    lines: list[str] = []
    async with asyncio.timeout(timeout_s), client.stream("GET", path, params=params) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            lines.append(line)
            if not line and until(sse_events(lines)):
                break
    return sse_events(lines)


def phases_seen(events: list[tuple[str, Any]]) -> set[tuple[str, str]]:
    return {(data["name"], data["object"]["status"]["phase"]) for kind, data in events if kind == "put"}


async def test_the_watch_streams_replica_changes_as_they_happen(api: Api) -> None:
    await api.register("n1")

    async def apply_soon() -> None:
        await asyncio.sleep(0.2)
        await api.apply(deployment(replicas=1))

    applying = asyncio.create_task(apply_soon())
    events = await read_events(
        api.user,
        "/api/watch",
        {"kinds": "replicas"},
        lambda seen: ("shop-api-0", "Scheduled") in phases_seen(seen),
    )
    await applying
    assert {kind for kind, _ in events} == {"put"}
    assert {data["kind"] for _, data in events} == {"Replica"}  # deployments and nodes filtered out
    assert ("shop-api-0", "Pending") in phases_seen(events)
    revisions = [data["revision"] for _, data in events]
    assert revisions == sorted(revisions)
    assert events[-1][1]["object"]["metadata"]["revision"] == revisions[-1]


async def test_the_watch_replays_from_a_revision_and_reports_deletes(api: Api) -> None:
    start = await api.revision() + 1
    await api.apply(deployment(replicas=0))
    await api.user.delete("/api/deployments/shop")
    events = await read_events(
        api.user,
        "/api/watch",
        {"kinds": "deployments", "from_revision": start},
        lambda seen: any(kind == "delete" for kind, _ in seen),
    )
    assert [(kind, data["name"]) for kind, data in events] == [("put", "shop"), ("delete", "shop")]
    assert events[1][1]["object"] is None


async def test_a_compacted_revision_gives_relist_then_the_stream(api: Api) -> None:
    await api.apply(deployment("old", replicas=0))
    current = await api.revision()
    await api.server.plane.store.compact(current)

    async def apply_soon() -> None:
        await asyncio.sleep(0.2)
        await api.apply(deployment("new", replicas=0))

    applying = asyncio.create_task(apply_soon())
    events = await read_events(
        api.user,
        "/api/watch",
        {"kinds": "deployments", "from_revision": 1},
        lambda seen: any(d.get("name") == "new" for _, d in seen),
    )
    await applying
    assert events[0][0] == "relist" and events[0][1]["revision"] >= current
    assert [(kind, data["name"]) for kind, data in events[1:]] == [("put", "new")]


async def test_the_audit_log_filters_by_type_and_sequence_and_follows(api: Api) -> None:
    await api.apply(deployment("a", replicas=0))
    items = (await api.user.get("/api/audit", params={"type": "apply"})).json()["items"]
    assert [(i["type"], i["object"], i["actor"]) for i in items] == [("apply", "deployments/a", "user")]
    last = items[-1]["seq"]
    assert (await api.user.get("/api/audit", params={"since": last})).json()["items"] == []

    async def apply_soon() -> None:
        await asyncio.sleep(0.2)
        await api.apply(deployment("b", replicas=0))

    applying = asyncio.create_task(apply_soon())
    events = await read_events(
        api.user,
        "/api/audit",
        {"type": "apply", "since": last, "follow": "true"},
        lambda seen: len(seen) >= 1,
    )
    await applying
    assert [(kind, data["object"]) for kind, data in events] == [("audit", "deployments/b")]
    assert events[0][1]["seq"] > last


async def test_a_replayed_burst_arrives_whole_and_in_order(api: Api) -> None:
    """Events already queued go out together (several writes' worth, more than one batch): none is
    lost, repeated or reordered."""
    start = await api.revision() + 1
    for index in range(150):
        await api.apply(deployment(f"d{index}", replicas=0))
    events = await read_events(
        api.user,
        "/api/watch",
        {"kinds": "deployments", "from_revision": start},
        lambda seen: len(seen) >= 150,
    )
    assert [data["name"] for _, data in events] == [f"d{index}" for index in range(150)]
    revisions = [data["revision"] for _, data in events]
    assert revisions == sorted(set(revisions))
