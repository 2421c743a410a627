"""``loadmaster.client``: a typed Python client of the REST API (docs/api.md), over httpx.

    from loadmaster.client import LoadmasterClient

    with LoadmasterClient("http://127.0.0.1:7480", token) as lm:
        lm.apply([manifest_dict, ...])                  # -> [ApplyItem]
        lm.list_objects("replicas", selector="team!=a") # -> [object dicts]
        lm.why("shop-api-0")["summary"]                 # -> WhyAnswer
        lm.queue_state()["queues"]["team-a"]["dominant_share"]

The CLI talks to the server through it (``cli/remote/client.py`` turns its errors into one-line
messages). A refusal is a ``ClientError`` carrying the HTTP status, the server's error code, message
and whole body; a server that cannot be reached is an ``UnreachableError``. Answers are the server's
JSON, typed with ``TypedDict`` where their shape is fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Any, TypedDict

import httpx

from loadmaster.wire import ApplyItem, QueueState, WhyAnswer

DEFAULT_SERVER = "http://127.0.0.1:7480"
# Generous for one request: an apply of thousands of documents is validated before it is answered.
REQUEST_TIMEOUT_S = 60.0


class ClientError(Exception):
    """The server refused (status >= 400): ``code`` and ``message`` from its JSON body when it sent one."""

    def __init__(self, response: httpx.Response) -> None:
        try:
            body = response.json()
        except ValueError:
            body = None
        self.response = response
        self.status = response.status_code
        self.body: dict[str, Any] = body if isinstance(body, dict) else {}
        self.code = str(self.body.get("error") or "")
        self.message = str(self.body.get("message") or response.text.strip()[:200] or response.reason_phrase)
        super().__init__(f"{self.status} {self.code or 'error'}: {self.message}")


class UnreachableError(Exception):
    """No answer: the server is down, the address is wrong, or it did not answer in time."""

    def __init__(self, server: str, cause: httpx.TransportError) -> None:
        self.server = server
        self.cause = cause
        self.timed_out = isinstance(cause, httpx.TimeoutException)
        super().__init__(f"cannot reach {server}: {cause or type(cause).__name__}")


class NotJsonError(Exception):
    """The server answered with a body that is not JSON (a proxy's page, most likely)."""


class PreviewResult(TypedDict):
    items: list[dict[str, Any]]
    victims: list[dict[str, Any]]  # {replica, kind, action, from, queue, why}
    moves: list[dict[str, Any]]  # the same, with ``to``


class LoadmasterClient:
    def __init__(
        self,
        server: str = DEFAULT_SERVER,
        token: str | None = None,
        *,
        timeout_s: float = REQUEST_TIMEOUT_S,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.server = server.rstrip("/")
        self.token = token
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.Client(
            base_url=self.server, headers=headers, timeout=timeout_s, transport=transport
        )

    def __enter__(self) -> LoadmasterClient:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # -- the one request path ------------------------------------------------------------------------

    def request(self, method: str, path: str, **options: Any) -> Any:
        """The answer's JSON; ``ClientError`` for a refusal, ``UnreachableError`` for no answer."""
        try:
            response = self.http.request(method, path, **options)
        except httpx.TransportError as error:
            raise UnreachableError(self.server, error) from None
        if response.status_code >= 400:
            raise ClientError(response)
        try:
            return response.json()
        except ValueError:
            raise NotJsonError(
                f"the server at {self.server} answered {method} {path} with something that is not JSON"
            ) from None

    # -- typed calls ---------------------------------------------------------------------------------

    def apply(self, items: Sequence[dict[str, Any]]) -> list[ApplyItem]:
        """Create or update objects (dicts as ``Manifest.to_dict()`` gives them); all or nothing."""
        answer = self.request("POST", "/api/apply", json={"items": list(items)})
        return list(answer.get("items", []))

    def list_objects(self, plural: str, selector: str | None = None) -> list[dict[str, Any]]:
        """Every object of a kind (``replicas``, ``queues``, ...) by name; ``selector``: kubectl's grammar."""
        params = {"selector": selector} if selector else None
        return list(self.request("GET", f"/api/{plural}", params=params).get("items", []))

    def get_object(self, plural: str, name: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("GET", f"/api/{plural}/{name}")
        return answer

    def delete_object(self, plural: str, name: str) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("DELETE", f"/api/{plural}/{name}")
        return answer

    def why(self, replica: str) -> WhyAnswer:
        answer: WhyAnswer = self.request("GET", f"/api/replicas/{replica}/why")
        return answer

    def preview(self, items: Sequence[dict[str, Any]]) -> PreviewResult:
        """Per replica where it would go (``items``), and the evictions and moves that cycle would make."""
        answer: PreviewResult = self.request("POST", "/api/scheduling/preview", json={"items": list(items)})
        return answer

    def queue_state(self) -> QueueState:
        answer: QueueState = self.request("GET", "/api/queue-state")
        return answer

    def info(self) -> dict[str, Any]:
        answer: dict[str, Any] = self.request("GET", "/api/info")
        return answer
