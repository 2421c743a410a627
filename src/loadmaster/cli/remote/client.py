"""The CLI's HTTP client: one method per verb, every failure a ``CommandError`` a person can act on.

Every request goes through the typed client ``loadmaster.client`` (``ApiClient.lm``, whose typed calls
commands use directly); this module only turns its errors into the CLI's one-line messages.

A failure is one line (a refused manifest adds one indented line per field path): the server cannot
be reached, the token is missing or wrong, the server is a follower (and who leads), or the body the
server sent with its error code (docs/api.md: ``{"error", "message", "errors"?, "leader"?}``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

from loadmaster.client import (
    DEFAULT_SERVER,
    REQUEST_TIMEOUT_S,
    ClientError,
    LoadmasterClient,
    NotJsonError,
    UnreachableError,
)

__all__ = [
    "DEFAULT_SERVER",
    "EXIT_BAD_INPUT",
    "EXIT_REQUEST_FAILED",
    "ApiClient",
    "CommandError",
    "ReportingClient",
    "refusal_message",
    "unreachable_message",
]
# Exit codes: the server (or the network) said no / input the CLI itself refused before sending anything.
EXIT_REQUEST_FAILED = 1
EXIT_BAD_INPUT = 2


class CommandError(Exception):
    """What to print (on stderr) and the exit code; raised by the client and by commands' own checks."""

    def __init__(self, message: str, exit_code: int = EXIT_REQUEST_FAILED) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class ReportingClient(LoadmasterClient):
    """The typed client whose failures are ``CommandError`` messages (for commands' typed calls)."""

    def request(self, method: str, path: str, **options: Any) -> Any:
        try:
            return super().request(method, path, **options)
        except UnreachableError as error:
            raise CommandError(unreachable_message(self.server, error.cause)) from None
        except ClientError as error:
            raise CommandError(refusal_message(self.server, error.response)) from None
        except NotJsonError as error:
            raise CommandError(str(error)) from None


class ApiClient:
    def __init__(self, server: str, token: str | None, transport: httpx.BaseTransport | None = None) -> None:
        self.lm = ReportingClient(server, token, transport=transport)
        self.server = self.lm.server
        self.token = token
        self._http = self.lm.http

    def __enter__(self) -> ApiClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.lm.close()

    def get(self, path: str, params: dict[str, str] | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, json: Any = None) -> Any:
        return self.request("POST", path, json=json)

    def put(self, path: str, json: Any = None) -> Any:
        return self.request("PUT", path, json=json)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    def post_text(self, path: str, text: str, content_type: str = "application/yaml") -> Any:
        return self.request("POST", path, content=text.encode(), headers={"Content-Type": content_type})

    def request(self, method: str, path: str, **options: Any) -> Any:
        return self.lm.request(method, path, **options)

    def events(self, path: str, params: dict[str, str] | None = None) -> Iterator[ServerSentEvent]:
        """The server-sent events of a stream (watch, audit follow) until the server closes it."""
        timeout = httpx.Timeout(REQUEST_TIMEOUT_S, read=None)  # a quiet stream is not a dead server
        try:
            with self._http.stream("GET", path, params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    response.read()
                    raise CommandError(refusal_message(self.server, response))
                yield from EventSource(response).iter_sse()
        except httpx.TransportError as exc:
            raise CommandError(unreachable_message(self.server, exc)) from None

    def text_stream(self, path: str, params: dict[str, str] | None = None) -> Iterator[str]:
        """A plain-text response as it arrives (``logs -f`` keeps it open until Ctrl-C)."""
        timeout = httpx.Timeout(REQUEST_TIMEOUT_S, read=None)
        try:
            with self._http.stream("GET", path, params=params, timeout=timeout) as response:
                if response.status_code >= 400:
                    response.read()
                    raise CommandError(refusal_message(self.server, response))
                yield from response.iter_text()
        except httpx.TransportError as exc:
            raise CommandError(unreachable_message(self.server, exc)) from None


def unreachable_message(server: str, exc: httpx.TransportError) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"the loadmaster server at {server} did not answer in time ({type(exc).__name__})"
    text = str(exc) or type(exc).__name__
    reason = "connection refused" if "refused" in text.lower() else text
    return f"cannot reach the loadmaster server at {server}: {reason}; is `loadmaster server` running?"


def _error_body(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def refusal_message(server: str, response: httpx.Response) -> str:
    """One line for an error answer (plus one line per field path for validation errors)."""
    body = _error_body(response)
    status = response.status_code
    message = str(body.get("message") or response.text.strip()[:200] or response.reason_phrase)
    if status == 401:
        return (
            f"not authorized by {server}: {message} (pass --token or set LOADMASTER_TOKEN; "
            "the server's admin token is in <data-dir>/admin-token)"
        )
    if status == 403:
        return f"forbidden: {message}"
    if body.get("error") == "not_leader":
        leader = body.get("leader") or "unknown"
        leader_url = body.get("leader_url")
        retry = f"; retry with --server {leader_url}" if leader_url else ""
        said = f": {message}" if f"the leader is {leader}" not in message else ""  # named once is enough
        return f"{server} is not the leader (the leader is {leader}){retry}{said}"
    problems = body.get("errors")
    if isinstance(problems, list) and problems:
        lines = [
            f"{message} ({len(problems)} problem{'s' if len(problems) != 1 else ''}; nothing was stored)"
        ]
        lines.extend(f"  {_problem_line(problem)}" for problem in problems)
        return "\n".join(lines)
    if status == 413:
        return f"{message} (the request body is over the server's size limit; split the input)"
    return message if body.get("error") else f"the server at {server} answered {status}: {message}"


def _problem_line(problem: Any) -> str:
    if not isinstance(problem, dict):
        return str(problem)
    parts = [str(problem[key]) for key in ("ref", "object", "path") if problem.get(key)]
    parts.append(str(problem.get("message", "")))
    return ": ".join(part for part in parts if part)
