"""The HTTP host probe against real sockets on 127.0.0.1: an answer is "host up", anything else is not."""

from __future__ import annotations

import asyncio
import socket

from loadmaster.runtime.reconciling.host_probe import HttpHostProbe


async def _answer_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await reader.readuntil(b"\r\n\r\n")
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
    await writer.drain()
    writer.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_host_that_answers_its_probe_address_is_up() -> None:
    async def run() -> bool:
        server = await asyncio.start_server(_answer_once, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with server:
            return await HttpHostProbe().probe("n1", f"127.0.0.1:{port}")

    assert asyncio.run(run()) is True


def test_a_refused_connection_is_no_answer() -> None:
    assert asyncio.run(HttpHostProbe().probe("n1", f"127.0.0.1:{_closed_port()}")) is False


def test_a_node_that_published_no_probe_address_cannot_answer() -> None:
    assert asyncio.run(HttpHostProbe().probe("n1", None)) is False
