"""Bad input is refused with a 4xx JSON body naming the field path, and nothing is stored."""

from __future__ import annotations

import pytest

from tests.api.conftest import Api

pytestmark = pytest.mark.anyio

HEAD = "api_version: loadmaster/v1\n"
GOOD = HEAD + "kind: Queue\nmetadata: {name: fine}\nspec: {}\n"


@pytest.mark.parametrize(
    ("text", "path", "words"),
    [
        pytest.param(
            HEAD + "kind: Queue\nmetadata: {name: q\n",
            "line 8, column 11",
            "malformed YAML",
            id="malformed-yaml",
        ),
        pytest.param(
            HEAD + "kind: Gadget\nmetadata: {name: g}\n", "kind", 'unknown kind "Gadget"', id="unknown-kind"
        ),
        pytest.param(
            HEAD + "kind: Queue\nmetadata: {name: q}\nspec: {prio: 1}\n",
            "spec.prio",
            "unknown field",
            id="unknown-field",
        ),
        pytest.param(
            HEAD + "kind: Queue\nmetadata: {name: q}\nspec: {deserved: {cpu: -2}}\n",
            "spec.deserved.cpu",
            "negative",
            id="negative-quantity",
        ),
        pytest.param(
            HEAD + "kind: Queue\nmetadata: {name: q}\nspec: {limit: {memory: 12 bananas}}\n",
            "spec.limit.memory",
            "",
            id="unparseable-quantity",
        ),
        pytest.param(
            HEAD + "kind: Queue\nmetadata: {name: Team_A}\nspec: {}\n",
            "metadata.name",
            "DNS-safe",
            id="non-dns-name",
        ),
        pytest.param(
            HEAD + "kind: Replica\nmetadata: {name: r}\nspec: {owner_kind: Job, owner: j, index: 0, "
            "spec_hash: " + "a" * 64 + ", image: x}\n",
            "kind",
            "created by the server",
            id="replica-kind",
        ),
        pytest.param(GOOD + "---\n" + GOOD, "metadata.name", "defined twice", id="same-object-twice"),
        pytest.param("# only a comment\n", "body", "no documents", id="no-documents"),
    ],
)
async def test_an_invalid_apply_is_422_with_every_problem_and_stores_nothing(
    shared_api: Api, text: str, path: str, words: str
) -> None:
    before = await shared_api.revision()
    response = await shared_api.apply(GOOD + "---\n" + text if path != "body" else text)
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "invalid"
    assert any(e["path"] == path and words in e["message"] for e in body["errors"]), body["errors"]
    assert "nothing was stored" in body["message"]
    assert await shared_api.revision() == before
    assert (await shared_api.user.get("/api/queues/fine")).status_code == 404  # the valid document too


async def test_several_bad_documents_are_reported_together(shared_api: Api) -> None:
    text = (
        HEAD
        + "kind: Queue\nmetadata: {name: A}\nspec: {x: 1}\n---\n"
        + HEAD
        + "kind: Job\nmetadata: {name: j}\n"
    )
    response = await shared_api.apply(text)
    problems = {(e.get("object"), e["path"]) for e in response.json()["errors"]}
    assert {("queues/A", "metadata.name"), ("queues/A", "spec.x"), ("jobs/j", "spec")} <= problems


@pytest.mark.parametrize(
    ("body", "path"),
    [
        pytest.param(b'{"items": [', "body", id="malformed-json"),
        pytest.param(b'{"things": []}', "items", id="no-items"),
        pytest.param(
            b'{"items": [{"api_version": "loadmaster/v1", "kind": "Queue", "metadata": {"name": "q"}, '
            b'"spec": {"weight": 2}}]}',
            "spec.weight",
            id="unknown-field-in-an-item",
        ),
    ],
)
async def test_a_bad_json_apply_names_the_path_and_stores_nothing(
    shared_api: Api, body: bytes, path: str
) -> None:
    before = await shared_api.revision()
    response = await shared_api.user.post(
        "/api/apply", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert [e["path"] for e in response.json()["errors"]] == [path]
    assert await shared_api.revision() == before


async def test_a_body_over_8_mib_is_413_before_it_is_parsed(shared_api: Api) -> None:
    before = await shared_api.revision()
    big = GOOD + "#" + "x" * (8 * 1024 * 1024) + "\n"
    response = await shared_api.apply(big)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    assert "limit is 8388608 bytes" in response.json()["message"]

    async def chunks():  # no Content-Length: counted while it arrives
        for _ in range(9):
            yield b"#" * (1024 * 1024)

    streamed = await shared_api.user.post(
        "/api/apply", content=chunks(), headers={"Content-Type": "application/yaml"}
    )
    assert streamed.status_code == 413
    assert await shared_api.revision() == before


@pytest.mark.parametrize(
    ("body", "path", "words"),
    [
        pytest.param({"name": "n1"}, "capacity", "required", id="missing-capacity"),
        pytest.param({"name": "N_1", "capacity": {"cpu": "1"}}, "name", "DNS-safe", id="bad-name"),
        pytest.param({"name": "n1", "capacity": {"cpu": "lots"}}, "capacity.cpu", "", id="unparseable-cpu"),
        pytest.param(
            {"name": "n1", "capacity": {"cpu": "1"}, "colour": "red"},
            "colour",
            "unknown field",
            id="unknown-field",
        ),
        pytest.param(
            {"name": "n1", "capacity": {"cpu": "1"}, "system_reserved": {"cpu": "2"}},
            "system_reserved.cpu",
            "capacity is 1",
            id="reserved-over-capacity",
        ),
    ],
)
async def test_a_bad_registration_names_the_body_field_and_stores_nothing(
    shared_api: Api, body: dict[str, object], path: str, words: str
) -> None:
    before = await shared_api.revision()
    response = await shared_api.agent.post("/api/nodes/register", json=body)
    assert response.status_code == 422, response.text
    assert any(e["path"] == path and words in e["message"] for e in response.json()["errors"]), (
        response.json()
    )
    assert await shared_api.revision() == before


@pytest.mark.parametrize(
    ("path", "params"),
    [
        pytest.param("/api/watch", {"kinds": "gadgets"}, id="watch-unknown-kind"),
        pytest.param("/api/watch", {"from_revision": "-1"}, id="watch-negative-revision"),
        pytest.param("/api/audit", {"since": "soon"}, id="audit-since-not-a-number"),
        pytest.param("/api/deployments", {"selector": "team in (a"}, id="selector-with-an-unclosed-set"),
    ],
)
async def test_bad_query_parameters_are_4xx_with_a_json_body(
    shared_api: Api, path: str, params: dict[str, str]
) -> None:
    response = await shared_api.user.get(path, params=params)
    assert response.status_code in (400, 422), response.text
    assert response.json()["error"] == "invalid"
    assert response.json()["message"]
