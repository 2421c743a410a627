"""``loadmaster.client``: the typed Python client against a real in-process server, and the errors it
raises (the CLI turns them into its one-line messages)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from loadmaster.client import ClientError, LoadmasterClient, UnreachableError
from loadmaster.runtime.plane.process.logging_setup import configure_logging
from tests.cli.in_process_server import InProcessServer

configure_logging()

QUEUE = {"api_version": "loadmaster/v1", "kind": "Queue", "metadata": {"name": "py", "labels": {"team": "a"}}}
JOB = {
    "api_version": "loadmaster/v1",
    "kind": "Job",
    "metadata": {"name": "pyjob"},
    "spec": {"queue": "py", "tasks": 1, "command": ["x"], "resources": {"cpu": "64"}},
}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoadmasterClient]:
    server = InProcessServer(tmp_path_factory.mktemp("python-client")).start()
    try:
        with LoadmasterClient(server.url, server.token) as lm:
            yield lm
    finally:
        server.close()


def test_apply_list_get_and_delete_round_trip(client: LoadmasterClient) -> None:
    applied = client.apply([QUEUE, JOB])
    assert [(item["kind"], item["name"], item["action"]) for item in applied] == [
        ("Queue", "py", "created"),
        ("Job", "pyjob", "created"),
    ]
    assert [q["metadata"]["name"] for q in client.list_objects("queues", selector="team=a")] == ["py"]
    assert client.get_object("jobs", "pyjob")["spec"]["tasks"] == 1
    assert "py" in client.queue_state()["queues"]
    client.delete_object("jobs", "pyjob")
    with pytest.raises(ClientError) as missing:
        client.get_object("jobs", "pyjob")
    assert (missing.value.status, missing.value.code) == (404, "not_found")


def test_a_refusal_carries_the_servers_code_and_message(client: LoadmasterClient) -> None:
    with pytest.raises(ClientError) as refused:
        client.list_objects("replicas", selector="team in (a")
    assert refused.value.status == 422 and refused.value.code == "invalid"
    assert 'expected "," or ")" in the in set' in refused.value.message


def test_an_unknown_token_is_a_401_client_error(client: LoadmasterClient) -> None:
    with LoadmasterClient(client.server, "not-a-token") as stranger, pytest.raises(ClientError) as refused:
        stranger.info()
    assert (refused.value.status, refused.value.code, refused.value.message) == (
        401,
        "unauthorized",
        "unknown token",
    )


def test_a_server_that_does_not_answer_is_unreachable() -> None:
    with LoadmasterClient("http://127.0.0.1:9", "x", timeout_s=2) as lm, pytest.raises(UnreachableError):
        lm.info()
