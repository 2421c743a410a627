"""Admit a request body only from a known token, within the size limit, within the time limit.

A pure ASGI middleware in front of every route that takes a body (POST, PUT, PATCH). Before a byte of
the body is read, the bearer token is looked up (unknown or missing: 401) and a declared
Content-Length over the limit is refused (413), so an unauthenticated client costs no body memory at
all. An admitted body is read here, counting bytes (over the limit: 413, the rest dropped unread), and
must arrive whole within ``body_timeout_s`` (else 408), so a client trickling a body cannot hold the
connection. A body within the limits goes on to the app unchanged; routes still check the token's role.

A refused body is read and dropped (up to DRAIN_BYTES, within the body time limit) before the answer
goes out: most clients read no response until they have sent their whole body, and would see a reset
connection instead of the refusal. A declared length past DRAIN_BYTES is answered at once.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loadmaster.api.responses import json_bytes
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.requests.reads.token_lookup import grant_of_token

_WITH_BODY = frozenset({"POST", "PUT", "PATCH"})
# Past this many bytes of a refused body the connection is simply closed.
DRAIN_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    code: str
    message: str


class _ClientGoneError(Exception):
    """The client went away while sending its body."""


def bearer_token(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            if scheme.lower() != "bearer":
                return None
            return token.strip() or None
    return None


def declared_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            return int(value) if value.isdigit() else None
    return None


class BodyAdmission:
    def __init__(self, app: ASGIApp, plane: ControlPlane, max_bytes: int, body_timeout_s: float) -> None:
        self.app = app
        self.plane = plane
        self.max_bytes = max_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        declared = declared_length(scope)
        refusal = await self._refusal_before_body(scope, declared)
        if refusal is not None and declared is not None and declared > DRAIN_BYTES:
            await _answer(send, refusal)
            return
        try:
            async with asyncio.timeout(self.body_timeout_s):
                body, size = await self._read(receive, keep=refusal is None)
        except _ClientGoneError:
            return
        except TimeoutError:
            late = f"the request body did not arrive within {self.body_timeout_s} s"
            await _answer(send, refusal or Refusal(408, "timeout", late))
            return
        if refusal is None and body is None:
            refusal = self._too_large(None if size > DRAIN_BYTES else size)
        if refusal is not None:
            await _answer(send, refusal)
            return
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refusal_before_body(self, scope: Scope, declared: int | None) -> Refusal | None:
        token = bearer_token(scope)
        if token is None:
            return Refusal(401, "unauthorized", "missing bearer token: send 'Authorization: Bearer <token>'")
        if await grant_of_token(self.plane, token) is None:
            return Refusal(401, "unauthorized", "unknown token")
        if declared is not None and declared > self.max_bytes:
            return self._too_large(declared)
        return None

    def _too_large(self, size: int | None) -> Refusal:
        told = f"{size} bytes" if size is not None else "more than that"
        return Refusal(413, "too_large", f"the request body is {told}; the limit is {self.max_bytes} bytes")

    async def _read(self, receive: Receive, *, keep: bool) -> tuple[bytes | None, int]:
        """The whole body (None if it is refused or passed the limit) and its size in bytes; a body
        not kept is counted and dropped, and reading stops past DRAIN_BYTES."""
        chunks: list[bytes] = []
        size = 0
        more = True
        while more and size <= DRAIN_BYTES:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _ClientGoneError
            chunk = message.get("body", b"")
            size += len(chunk)
            more = bool(message.get("more_body", False))
            keep = keep and size <= self.max_bytes
            if keep:
                chunks.append(chunk)
            else:
                chunks.clear()  # drop it: only the count matters now
        return (b"".join(chunks) if keep else None), size


async def _answer(send: Send, refusal: Refusal) -> None:
    body = json_bytes({"error": refusal.code, "message": refusal.message})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
