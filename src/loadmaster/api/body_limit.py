"""Refuse request bodies over the limit (413) before anything reads or parses them.

A pure ASGI middleware: the body is read here, counting bytes, and refused as soon as it passes the
limit (or at once when its Content-Length says it will), so a client that streams gigabytes costs at
most ``limit`` bytes of memory. The rest of a refused body is read and dropped (up to DRAIN_BYTES)
before the answer goes out: most clients read no response until they have sent their whole body, and
would see a reset connection instead of the 413. A body within the limit goes on to the app unchanged.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loadmaster.api.responses import json_bytes

_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
# Past this many bytes of a refused body the connection is simply closed.
DRAIN_BYTES = 64 * 1024 * 1024


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        too_large = declared is not None and declared.isdigit() and int(declared) > self.max_bytes
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            more = bool(message.get("more_body", False))
            if too_large or size > self.max_bytes:
                too_large = True
                chunks.clear()  # drop it: only the count matters now
                if size > DRAIN_BYTES:
                    break
                continue
            chunks.append(chunk)
        if too_large:
            await self._refuse(send, int(declared) if declared is not None and declared.isdigit() else None)
            return
        body = b"".join(chunks)
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send, declared: int | None) -> None:
        size = f"{declared} bytes" if declared is not None else "more than that"
        body = json_bytes(
            {
                "error": "too_large",
                "message": f"the request body is {size}; the limit is {self.max_bytes} bytes",
            }
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
