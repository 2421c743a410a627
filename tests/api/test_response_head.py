"""A response's head is held until its body's first write and leaves joined to it (response_head.py);
a head whose body is slow to come leaves at the loop's next turn; closing sends what is held first."""

from __future__ import annotations

import asyncio
import socket
from typing import cast

import pytest

from loadmaster.api.response_head import HeadHeldTransport
from tests.api.conftest import Api

pytestmark = pytest.mark.anyio


class RecordingTransport:
    """An in-memory transport: what was written, call by call."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 7


def held(recording: RecordingTransport) -> HeadHeldTransport:
    return HeadHeldTransport(cast(asyncio.Transport, recording), asyncio.get_running_loop())


async def test_a_head_and_its_body_leave_in_one_write() -> None:
    recording = RecordingTransport()
    transport = held(recording)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    transport.write(b"{}")
    transport.write(b"")  # h11's end of a body with a Content-Length
    await asyncio.sleep(0)
    assert recording.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}"]
    assert transport.get_write_buffer_size() == 7  # the rest is the wrapped transport's


async def test_a_head_whose_body_is_slow_to_come_leaves_at_the_next_turn() -> None:
    recording = RecordingTransport()
    transport = held(recording)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    assert recording.writes == []
    await asyncio.sleep(0)
    assert recording.writes == [b"HTTP/1.1 200 OK\r\n\r\n"]
    transport.write(b"5\r\nhello\r\n")
    assert recording.writes[1:] == [b"5\r\nhello\r\n"]


async def test_closing_sends_the_held_head_first() -> None:
    recording = RecordingTransport()
    transport = held(recording)
    transport.write(b"HTTP/1.1 204 No Content\r\n\r\n")
    transport.close()
    assert recording.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"]
    assert recording.closed


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data or not data.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data


async def test_a_real_server_answers_whole_responses_on_a_kept_alive_connection(api: Api) -> None:
    host, port = api.url.removeprefix("http://").split(":")

    def exchange() -> list[bytes]:
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            answers = []
            for _ in range(3):
                sock.sendall(f"GET /api/health HTTP/1.1\r\nhost: {host}\r\n\r\n".encode())
                answers.append(_read_response(sock))
            return answers

    answers = await asyncio.to_thread(exchange)
    for answer in answers:
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        lengths = [
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ]
        assert lengths == [len(body)]
