"""The agent's own endpoint (``/probe``, ``/logs``) on 127.0.0.1: what it answers to a malformed request."""

from __future__ import annotations

import asyncio
import json

from loadmaster.agent.agent_http import AgentEndpoint


async def exchange(port: int, request: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), timeout=10)
    writer.close()
    return answer


def test_a_request_line_without_a_target_is_answered_400_saying_what_was_expected() -> None:
    async def scenario() -> tuple[bytes, bytes]:
        endpoint = AgentEndpoint("n1", lambda name: None)
        port = await endpoint.start("127.0.0.1", 0)
        try:
            return await exchange(port, b"GARBAGE\r\n\r\n"), await exchange(
                port, b"GET /probe HTTP/1.0\r\n\r\n"
            )
        finally:
            await endpoint.close()

    bad, good = asyncio.run(scenario())
    head, _, body = bad.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 400 Bad Request")
    assert json.loads(body) == {
        "error": "bad_request",
        "message": "the request line must be 'GET /path HTTP/1.x'",
    }
    assert good.split(b"\r\n", 1)[0].split(b" ")[1] == b"200"
