"""Scale-up requests over real HTTP on 127.0.0.1 (LRS K1, issue 14): readable and closable over the API,
POSTed to the configured webhook (a receiver on 127.0.0.1), and one verdict in the request, ``why`` and
the preview: "fits after scale-up with template T"."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from loadmaster.runtime.config import ConfigError, ServerConfig
from tests.api.conftest import Api, deployment, open_api

pytestmark = pytest.mark.anyio

TEMPLATES = """
api_version: loadmaster/v1
kind: WorkerTemplate
metadata: {name: small}
spec: {capacity: {cpu: 2, memory: 8Gi}}
---
api_version: loadmaster/v1
kind: WorkerTemplate
metadata: {name: medium}
spec: {capacity: {cpu: 8, memory: 32Gi}}
"""


class Receiver:
    """A webhook receiver on 127.0.0.1: records each POSTed JSON body, answers 200."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/scale-up"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        self.bodies.append(json.loads(await reader.readexactly(length)))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


async def _open_requests(api: Api) -> list[dict[str, Any]]:
    response = await api.user.get("/api/scale-up-requests", params={"state": "open"})
    assert response.status_code == 200, response.text
    return list(response.json()["items"])


async def test_a_scale_up_request_is_posted_listed_explained_and_closed(tmp_path: Path) -> None:
    receiver = Receiver()
    url = await receiver.start()
    try:
        async with open_api(tmp_path, scale_up_webhook=url) as api:
            await api.register("n1", cpu="1")
            assert (await api.apply(TEMPLATES, client=api.admin)).status_code == 200
            await api.apply(deployment(replicas=1, cpu="4"))

            async def requested() -> bool:
                return bool(await _open_requests(api)) and bool(receiver.bodies)

            await api.wait_until(requested, "a scale-up request, listed and POSTed to the webhook")
            [request] = await _open_requests(api)
            assert (request["template"], request["tier"], request["state"]) == (
                "medium",
                "smallest_fit",
                "open",
            )
            assert request["replicas"] == ["shop-api-0"]
            assert request["verdict"] == "fits after scale-up with template medium"
            assert receiver.bodies == [request]  # the stored record, as it was POSTed

            why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
            assert why["scale_up"]["verdict"] == "fits_after_scale_up"
            assert why["scale_up"]["message"] == "fits after scale-up with template medium"
            preview = await api.user.post(
                "/api/scheduling/preview",
                content=deployment(name="more", replicas=1, cpu="4"),
                headers={"Content-Type": "application/yaml"},
            )
            [item] = preview.json()["items"]
            assert item["scale_up"]["message"] == "fits after scale-up with template medium"

            path = f"/api/scale-up-requests/{request['id']}/done"
            assert (await api.user.post(path)).status_code == 403  # a provisioner holds an admin token
            unknown = await api.admin.post("/api/scale-up-requests/nope-1/done")
            assert unknown.status_code == 404 and "nope-1" in unknown.text
            closed = (await api.admin.post(path)).json()
            assert (closed["state"], closed["done_by"]) == ("done", "admin") and closed["done_at"]
            assert (await api.admin.post(path)).json() == closed  # closing twice changes nothing
            assert await _open_requests(api) == []
            done = (await api.user.get("/api/scale-up-requests", params={"state": "done"})).json()["items"]
            assert [r["id"] for r in done] == [request["id"]]
            bad = await api.user.get("/api/scale-up-requests", params={"state": "closed"})
            assert bad.status_code == 422 and "state" in bad.text
            audit = (await api.user.get("/api/audit", params={"type": "scale_up_done"})).json()["items"]
            assert [a["details"]["request"] for a in audit] == [request["id"]]
    finally:
        await receiver.close()


async def test_a_replica_that_fits_no_template_is_infeasible_in_why(tmp_path: Path) -> None:
    async with open_api(tmp_path) as api:
        await api.register("n1", cpu="1")
        assert (await api.apply(TEMPLATES, client=api.admin)).status_code == 200
        await api.apply(deployment(replicas=1, cpu="16"))
        await api.wait_phases({"shop-api-0": "Pending"})
        why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
        assert why["scale_up"] == {
            "verdict": "infeasible",
            "template": "medium",
            "tier": "largest",
            "message": "infeasible with any template (a scale-up asks for the largest, medium)",
        }


def test_a_scale_up_webhook_that_is_not_an_http_url_is_refused_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--scale-up-webhook"):
        ServerConfig(data_dir=tmp_path, scale_up_webhook="ftp://127.0.0.1/x").check()
