"""Every failure a CLI request can meet becomes one message a person can act on (docs/api.md error bodies).

The server side is httpx's in-memory transport answering with the error bodies docs/api.md defines;
unreachable servers are real (a closed port on 127.0.0.1).
"""

from __future__ import annotations

import socket
from typing import Any

import httpx
import pytest

from loadmaster.cli.remote.client import ApiClient, CommandError

SERVER = "http://127.0.0.1:7480"


def answering(status: int, body: Any = None, text: str | None = None) -> ApiClient:
    def respond(request: httpx.Request) -> httpx.Response:
        if text is not None:
            return httpx.Response(status, text=text)
        return httpx.Response(status, json=body)

    return ApiClient(SERVER, "secret", transport=httpx.MockTransport(respond))


def failure_of(client: ApiClient) -> str:
    with client, pytest.raises(CommandError) as failed:
        client.get("/api/nodes")
    assert failed.value.exit_code == 1
    return failed.value.message


def test_a_not_leader_answer_names_the_leader_once() -> None:
    body = {
        "error": "not_leader",
        "message": "this server does not lead; the leader is b",
        "leader": "b",
        "leader_url": "http://b:1",
    }
    assert failure_of(answering(503, body)) == (
        f"{SERVER} is not the leader (the leader is b); retry with --server http://b:1"
    )


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        pytest.param(
            401,
            {"error": "unauthorized", "message": "unknown token"},
            f"not authorized by {SERVER}: unknown token (pass --token or set LOADMASTER_TOKEN;",
            id="401-says-how-to-pass-a-token",
        ),
        pytest.param(
            403,
            {"error": "forbidden", "message": "role agent may not list deployments"},
            "forbidden: role agent may not list deployments",
            id="403-carries-the-servers-message",
        ),
        pytest.param(
            503,
            {
                "error": "not_leader",
                "message": "writes go to the leader",
                "leader": "b",
                "leader_url": "http://b:1",
            },
            f"{SERVER} is not the leader (the leader is b); retry with --server http://b:1: "
            "writes go to the leader",
            id="not-leader-names-the-leader-and-its-url",
        ),
        pytest.param(
            503,
            {"error": "not_leader", "message": "no leader yet", "leader": None},
            f"{SERVER} is not the leader (the leader is unknown): no leader yet",
            id="not-leader-without-a-known-leader",
        ),
        pytest.param(
            404,
            {"error": "not_found", "message": "replicas/web-9 not found"},
            "replicas/web-9 not found",
            id="404-is-the-servers-message",
        ),
        pytest.param(
            413,
            {"error": "too_large", "message": "body over 8 MiB"},
            "body over 8 MiB (the request body is over the server's size limit; split the input)",
            id="413-says-to-split",
        ),
        pytest.param(
            500, None, f"the server at {SERVER} answered 500: Internal Server Error", id="500-without-body"
        ),
    ],
)
def test_an_error_answer_becomes_one_line(status: int, body: Any, expected: str) -> None:
    message = failure_of(answering(status, body))
    assert message.startswith(expected)
    assert "\n" not in message


def test_a_validation_error_lists_every_path_under_one_header() -> None:
    body = {
        "error": "invalid",
        "message": "2 documents refused",
        "errors": [
            {"path": "deployments/web: spec.services[0].replica", "message": "unknown field"},
            {"path": "jobs/t: spec.resources.cpu", "message": "negative quantity -1"},
        ],
    }
    lines = failure_of(answering(422, body)).splitlines()
    assert lines == [
        "2 documents refused (2 problems; nothing was stored)",
        "  deployments/web: spec.services[0].replica: unknown field",
        "  jobs/t: spec.resources.cpu: negative quantity -1",
    ]


def test_an_answer_that_is_not_json_is_reported_not_crashed_on() -> None:
    assert failure_of(answering(200, text="<html>proxy</html>")).endswith("something that is not JSON")
    assert failure_of(answering(502, text="Bad Gateway from proxy")) == (
        f"the server at {SERVER} answered 502: Bad Gateway from proxy"
    )


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_says_where_and_what_to_start() -> None:
    server = f"http://127.0.0.1:{closed_port()}"
    message = failure_of(ApiClient(server, None))
    assert message == (
        f"cannot reach the loadmaster server at {server}: connection refused; is `loadmaster server` running?"
    )


def test_the_token_is_sent_as_a_bearer_header() -> None:
    seen: list[str | None] = []

    def respond(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers.get("authorization"))
        return httpx.Response(200, json={"items": []})

    with ApiClient(SERVER, "t0k3n", transport=httpx.MockTransport(respond)) as client:
        assert client.get("/api/nodes") == {"items": []}
    with ApiClient(SERVER, None, transport=httpx.MockTransport(respond)) as client:
        client.get("/api/nodes")
    assert seen == ["Bearer t0k3n", None]
