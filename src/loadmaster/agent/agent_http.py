"""The agent's own small HTTP endpoint, on 127.0.0.1 only: ``GET /probe`` (node loss: the server asks
"is this host up?") and ``GET /logs/{replica}?tail=N&follow=1`` (the server relays ``loadmaster logs``).

HTTP/1.0-style: one request per connection, the body ends when the connection closes, which is what
a followed log needs. Requests are GETs without bodies; anything else is answered 404 or 405.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from loadmaster.agent.runtime.process_driver import LOG_FILE
from loadmaster.agent.runtime.process_logs import tail_lines

# A followed log is checked for new lines this often.
FOLLOW_POLL_S = 0.25
# A request line and headers larger than this are refused (nothing legitimate sends more).
MAX_HEAD_BYTES = 16 * 1024


class AgentEndpoint:
    def __init__(self, node: str, log_directory: Callable[[str], Path | None]) -> None:
        self.node = node
        self.log_directory = log_directory
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> int:
        self._server = await asyncio.start_server(self._serve, host, port, limit=MAX_HEAD_BYTES)
        return int(self._server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), timeout=2.0)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10.0)
            request_line = head.decode("latin-1").split("\r\n", 1)[0].split(" ")
            if len(request_line) < 2:
                message = "the request line must be 'GET /path HTTP/1.x'"
                return await _send_json(writer, 400, {"error": "bad_request", "message": message})
            await self._answer(request_line[0], request_line[1], reader, writer)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # no whole head within 10 s or MAX_HEAD_BYTES: nothing to answer, the connection ends
        except (ConnectionError, OSError):
            pass  # the client went away (a followed log that was closed)
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(
        self, method: str, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        url = urlsplit(target)
        if method != "GET":
            return await _send_json(writer, 405, {"error": "method_not_allowed"})
        if url.path == "/probe":
            return await _send_json(writer, 200, {"node": self.node, "ok": True})
        if url.path.startswith("/logs/"):
            query = parse_qs(url.query)
            tail = query.get("tail", [None])[0]
            follow = query.get("follow", ["0"])[0] in ("1", "true")
            name = unquote(url.path[len("/logs/") :])
            return await self._logs(name, tail, follow, reader, writer)
        return await _send_json(writer, 404, {"error": "not_found"})

    async def _logs(
        self,
        replica: str,
        tail: str | None,
        follow: bool,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        directory = self.log_directory(replica)
        if directory is None:
            message = f"replicas/{replica} has no process on node {self.node}"
            return await _send_json(writer, 404, {"error": "not_found", "message": message})
        count = int(tail) if tail and tail.isdigit() else None
        lines = tail_lines(directory, count)
        writer.write(
            b"HTTP/1.0 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
        )
        writer.write("".join(line + "\n" for line in lines).encode())
        await writer.drain()
        if follow:
            await _follow(directory / LOG_FILE, reader, writer)


async def _follow(path: Path, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """New bytes as they are appended, until the client disconnects (a truncated log restarts at 0)."""
    position = path.stat().st_size if path.exists() else 0
    while not writer.is_closing() and not reader.at_eof():
        await asyncio.sleep(FOLLOW_POLL_S)
        size = path.stat().st_size if path.exists() else 0
        if size < position:
            position = 0
        if size > position:
            with path.open("rb") as handle:
                handle.seek(position)
                chunk = handle.read(size - position)
            position = size
            writer.write(chunk)
            await writer.drain()


async def _send_json(writer: asyncio.StreamWriter, status: int, body: Any) -> None:
    payload = json.dumps(body).encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed"}.get(status, "Error")
    head = (
        f"HTTP/1.0 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    )
    writer.write(head.encode() + b"Connection: close\r\n\r\n" + payload)
    await writer.drain()
