"""Issue 12, the HTTP edge: what an unauthenticated, slow or greedy client can no longer do to a server.

Raw sockets on 127.0.0.1 play the misbehaving clients; every wait is bounded (socket timeouts), and the
server's limits are set small so that each test ends in well under a few seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from loadmaster.runtime.http_limits import HttpLimits
from tests.api.conftest import Api, open_api

pytestmark = pytest.mark.anyio
BOUND_S = 10.0  # no answer within this long: the server is waiting, which is the bug


def address(api: Api) -> tuple[str, int]:
    parts = urlsplit(api.url)
    return parts.hostname or "127.0.0.1", parts.port or 80


@contextlib.contextmanager
def raw_socket(api: Api) -> Iterator[socket.socket]:
    sock = socket.create_connection(address(api), timeout=BOUND_S)
    try:
        yield sock
    finally:
        sock.close()


def read_answer(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (or BOUND_S passes: TimeoutError)."""
    chunks = []
    with contextlib.suppress(ConnectionResetError):  # closed with our unread request: a reset
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


async def answer_of(api: Api, request: bytes) -> bytes:
    def exchange() -> bytes:
        with raw_socket(api) as sock:
            sock.sendall(request)
            return read_answer(sock)

    return await asyncio.to_thread(exchange)


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def body_of(answer: bytes) -> dict:
    return json.loads(answer.partition(b"\r\n\r\n")[2])


async def test_a_body_from_an_unknown_token_is_refused_before_it_is_sent(shared_api: Api) -> None:
    head = (
        b"POST /api/apply HTTP/1.1\r\nhost: x\r\nauthorization: Bearer not-a-token\r\n"
        b"content-type: application/yaml\r\ncontent-length: 104857600\r\n\r\n"
    )
    answer = await answer_of(shared_api, head)  # no body follows: only an early answer ends this
    assert status_of(answer) == 401
    assert body_of(answer)["error"] == "unauthorized"


async def test_an_absurd_content_length_is_413_at_once(shared_api: Api) -> None:
    token = shared_api.user.headers["authorization"].encode()
    head = (
        b"POST /api/apply HTTP/1.1\r\nhost: x\r\nauthorization: " + token + b"\r\n"
        b"content-type: application/yaml\r\ncontent-length: 1000000000000000000\r\n\r\n"
    )
    answer = await answer_of(shared_api, head)
    assert status_of(answer) == 413
    assert body_of(answer)["error"] == "too_large"


@pytest.fixture
async def strict_api(tmp_path: Path) -> Api:
    limits = HttpLimits(
        header_timeout_s=0.5, body_timeout_s=0.5, max_connections=40, max_watch_streams_per_token=3
    )
    async with open_api(tmp_path, keepalive=False, http_limits=limits) as opened:
        yield opened


async def test_slow_loris_connections_are_closed_once_the_head_is_late(strict_api: Api) -> None:
    def trickle() -> bytes:
        with raw_socket(strict_api) as sock:
            sock.settimeout(0.1)
            for byte in b"GET /api/health HTTP/1.1\r\nhost: x\r\n" * 10:
                try:
                    sock.sendall(bytes([byte]))
                    if sock.recv(65536) == b"":
                        return b""
                except TimeoutError:
                    continue  # still open: trickle on
                except OSError:  # reset by the server: closed
                    return b""
            raise AssertionError("a 4 s request head was still being read")

    async def idle() -> bytes:
        def wait() -> bytes:
            with raw_socket(strict_api) as sock:
                return read_answer(sock)

        return await asyncio.to_thread(wait)

    answers = await asyncio.gather(
        *(asyncio.to_thread(trickle) for _ in range(10)), *(idle() for _ in range(10))
    )
    for answer in answers[:10]:
        assert answer == b""
    assert answers[10:] == [b""] * 10  # a connection that never sends a request is closed too
    assert (await strict_api.user.get("/api/health")).status_code == 200


async def test_a_body_that_stops_arriving_is_408(strict_api: Api) -> None:
    token = strict_api.user.headers["authorization"].encode()
    head = (
        b"POST /api/apply HTTP/1.1\r\nhost: x\r\nauthorization: " + token + b"\r\n"
        b"content-type: application/yaml\r\ncontent-length: 1000\r\n\r\nkind: Qu"
    )
    answer = await answer_of(strict_api, head)
    assert status_of(answer) == 408
    assert body_of(answer)["error"] == "timeout"


@pytest.fixture
async def capped_api(tmp_path: Path) -> Api:
    """40 connections at most, and idle ones kept for 30 s: with strict_api's 0.5 s head deadline a busy
    machine could close some of the 40 held connections before the 41st arrives, and let it in."""
    limits = HttpLimits(header_timeout_s=30.0, body_timeout_s=30.0, max_connections=40)
    async with open_api(tmp_path, keepalive=False, http_limits=limits) as opened:
        yield opened


async def test_connections_past_the_cap_are_answered_503(capped_api: Api) -> None:
    # Accepted in the order they were queued: the 41st connection is the one past the cap.
    held = [socket.create_connection(address(capped_api), timeout=BOUND_S) for _ in range(40)]
    try:
        answer = await answer_of(capped_api, b"GET /api/health HTTP/1.1\r\nhost: x\r\n\r\n")
        assert status_of(answer) == 503
        assert body_of(answer)["error"] == "unavailable"
    finally:
        for sock in held:
            sock.close()


async def test_a_token_may_hold_only_so_many_streams(strict_api: Api) -> None:
    async with contextlib.AsyncExitStack() as streams:
        for _ in range(3):
            response = await streams.enter_async_context(strict_api.user.stream("GET", "/api/watch"))
            assert response.status_code == 200
        refused = await strict_api.user.get("/api/watch")
        assert refused.status_code == 429
        assert refused.json()["error"] == "too_many_streams"
        other = await streams.enter_async_context(strict_api.admin.stream("GET", "/api/watch"))
        assert other.status_code == 200  # another token has slots of its own
    again = await strict_api.user.get("/api/audit")  # slots are given back when streams end
    assert again.status_code == 200


async def test_many_watchers_share_one_store_watch_and_all_see_a_write(api: Api) -> None:
    store_watches_before = len(api.server.plane.store._hub._subscriptions)
    async with contextlib.AsyncExitStack() as streams:
        responses = [
            await streams.enter_async_context(
                api.user.stream("GET", "/api/watch", params={"kinds": "queues"})
            )
            for _ in range(60)
        ]
        iterators = [response.aiter_lines() for response in responses]
        for lines in iterators:
            assert await anext(lines) == ": stream open"
        assert len(api.server.plane.store._hub._subscriptions) == store_watches_before + 1
        applied = await api.apply(
            "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: q1}\n", api.admin
        )
        assert applied.status_code == 200

        async def first_event(lines) -> str:
            async with asyncio.timeout(BOUND_S):
                while not (line := await anext(lines)).startswith("data:"):
                    pass
                return json.loads(line.partition(":")[2])["name"]

        assert await asyncio.gather(*(first_event(lines) for lines in iterators)) == ["q1"] * 60


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param("/api/tokens", b"[" * 5000 + b"]" * 5000, id="tokens-deep"),
        pytest.param("/api/apply", b'{"items": ' + b"[" * 5000 + b"]" * 5000 + b"}", id="apply-deep"),
        pytest.param("/api/tokens", b'{"role": "user", "role": "admin"}', id="tokens-duplicate-key"),
    ],
)
async def test_deep_or_duplicated_json_is_a_422_in_json(shared_api: Api, path: str, body: bytes) -> None:
    response = await shared_api.admin.post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["error"] == "invalid"
    assert response.json()["errors"][0]["path"] == "body"


def alias_bomb(levels: int) -> str:
    lines = [
        "api_version: loadmaster/v1",
        "kind: Queue",
        "metadata: {name: bomb}",
        "spec:",
        '  a0: &a0 ["x","x","x","x","x","x","x","x","x"]',
    ]
    lines += [f"  a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


async def test_a_yaml_alias_bomb_is_refused_by_its_alias_limit(shared_api: Api) -> None:
    response = await shared_api.apply(alias_bomb(7))  # ~600,000 replayed events in 300 bytes
    assert response.status_code == 422
    assert "alias" in response.json()["message"]


async def test_the_openapi_document_declares_json_answers_and_the_error_body(shared_api: Api) -> None:
    doc = (await shared_api.anonymous.get("/openapi.json")).json()
    health = doc["paths"]["/api/health"]["get"]["responses"]
    assert health["200"]["content"]["application/json"]["schema"] != {"type": "string"}
    error_schema = doc["paths"]["/api/apply"]["post"]["responses"]["4XX"]["content"]["application/json"][
        "schema"
    ]
    assert error_schema["required"] == ["error", "message"]
