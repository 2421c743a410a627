"""The OpenAPI document describes every answer: each route declares a typed 2xx schema (an object with
named fields, a list, or a map; never a bare string or an empty schema) except those that answer with
text or bytes by nature (Prometheus metrics, the watch's server-sent events, a replica's log lines, the
agents' throughput download), which declare their media type; and the main routes' real answers are
what their documented models say."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import TypeAdapter

from loadmaster.api.response_schemas import (
    Health,
    ObjectList,
    PreviewResult,
    ServerInfo,
    StoredObject,
)
from loadmaster.wire import QueueState, WhyAnswer
from tests.api.conftest import Api, deployment

pytestmark = pytest.mark.anyio

TEXT_ANSWERS = {
    ("/metrics", "get"): "text/plain",
    ("/api/watch", "get"): "text/event-stream",
    ("/api/replicas/{name}/logs", "get"): "text/plain",  # the agent's log lines, relayed
    ("/api/agent/throughput", "get"): "application/octet-stream",  # bytes to time a download by
}
MAIN_ROUTES = {
    ("/api/{kind}", "get"): "ObjectList",
    ("/api/{kind}/{name}", "get"): "StoredObject",
    ("/api/apply", "post"): "ApplyResult",
    ("/api/replicas/{name}/why", "get"): "WhyAnswer",
    ("/api/scheduling/preview", "post"): "PreviewResult",
    ("/api/queue-state", "get"): "QueueState",
    ("/api/health", "get"): "Health",
    ("/api/ready", "get"): "Readiness",
    ("/api/info", "get"): "ServerInfo",
}


def _is_typed(schema: dict[str, Any]) -> bool:
    if "$ref" in schema:
        return True
    if schema.get("type") == "object":
        return bool(schema.get("properties") or schema.get("additionalProperties"))
    return schema.get("type") == "array" and bool(schema.get("items"))


async def _document(api: Api) -> dict[str, Any]:
    response = await api.anonymous.get("/openapi.json")
    assert response.status_code == 200
    return dict(response.json())


async def test_every_route_declares_a_typed_json_schema_for_its_answer(shared_api: Api) -> None:
    paths = (await _document(shared_api))["paths"]
    untyped = []
    for path, operations in paths.items():
        for method, operation in operations.items():
            answers = {code: r for code, r in operation["responses"].items() if code.startswith("2")}
            assert answers, f"{method} {path} declares no 2xx answer"
            for code, answer in answers.items():
                content = answer.get("content", {})
                if (path, method) in TEXT_ANSWERS:
                    assert TEXT_ANSWERS[path, method] in ",".join(content), (path, content)
                    continue
                schema = content.get("application/json", {}).get("schema", {})
                if not _is_typed(schema):
                    untyped.append(f"{method.upper()} {path} {code}: {schema}")
    assert untyped == []


async def test_the_main_routes_name_their_answers_models(shared_api: Api) -> None:
    document = await _document(shared_api)
    for (path, method), model in MAIN_ROUTES.items():
        schema = document["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": f"#/components/schemas/{model}"}, path
    victims = document["components"]["schemas"]["PreviewResult"]["properties"]["victims"]
    assert victims["items"] == {"$ref": "#/components/schemas/Disruption"}
    disruption = document["components"]["schemas"]["Disruption"]["properties"]
    assert {"replica", "kind", "action", "from", "to", "queue", "why"} <= set(disruption)
    why = document["components"]["schemas"]["WhyAnswer"]  # declared in wire.py, shared with the client
    assert why["properties"]["nodes"]["description"] == "node -> every reason it fails"
    assert {"replica", "phase", "summary", "fresh"} <= set(why["required"])
    assert "placement" not in why["required"]


def _conforms(model: type[Any], answer: Any) -> None:
    """``answer`` validates as ``model`` (a pydantic model, or a ``TypedDict`` of ``loadmaster/wire.py``)."""
    TypeAdapter(model).validate_python(answer, by_alias=True)


async def test_real_answers_are_what_their_models_say(api: Api) -> None:
    await api.register("n1", cpu="1")
    assert (await api.apply(deployment(replicas=1, cpu="2"))).status_code == 200

    async def attempted() -> bool:
        replica = (await api.replicas()).get("shop-api-0", {})
        return bool(replica.get("status", {}).get("conditions"))

    await api.wait_until(attempted, "a first attempt")
    _conforms(Health, (await api.anonymous.get("/api/health")).json())
    _conforms(ServerInfo, (await api.user.get("/api/info")).json())
    _conforms(ObjectList, (await api.user.get("/api/replicas")).json())
    _conforms(StoredObject, (await api.user.get("/api/replicas/shop-api-0")).json())
    why = (await api.user.get("/api/replicas/shop-api-0/why")).json()
    _conforms(WhyAnswer, why)
    assert why["summary"] == {"capacity": 1}
    _conforms(QueueState, (await api.user.get("/api/queue-state")).json())
    preview = await api.user.post(
        "/api/scheduling/preview",
        content=deployment(name="other", replicas=1, cpu="500m"),
        headers={"Content-Type": "application/yaml"},
    )
    assert preview.status_code == 200
    _conforms(PreviewResult, preview.json())
