"""Refusals: why the runtime would not do what a request asked, each with its error code (docs/api.md).

The runtime names the code (``invalid``, ``forbidden``, ``not_found``, ``conflict``, ``not_leader``,
``unavailable``);
how a code travels to a client (an HTTP status) is the API's business (``api/errors.py``). A store
that fails under a request is a refusal too: ``as_refusal`` says how such a failure reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loadmaster.store.interface import StoreError, UnavailableError


@dataclass(frozen=True, slots=True)
class FieldProblem:
    path: str  # the field, e.g. "spec.services[0].replicas" (or "line 3, column 5" in YAML text)
    message: str
    object: str = ""  # the object it belongs to, e.g. "deployments/shop"


class RequestError(Exception):
    """Base of every refusal; ``code`` is the JSON body's ``error``, ``details`` its extra fields."""

    code = "invalid"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.problems: tuple[FieldProblem, ...] = ()
        self.details: dict[str, Any] = {}


class InvalidError(RequestError):
    """The request is well-formed but its content is wrong; ``problems`` names every field."""

    code = "invalid"

    def __init__(self, message: str, problems: Sequence[FieldProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class NotFoundError(RequestError):
    code = "not_found"


class ForbiddenError(RequestError):
    """The caller's token may not act on this object (an agent token bound to another node)."""

    code = "forbidden"


class WriteConflictError(RequestError):
    code = "conflict"


class NotLeaderError(RequestError):
    """A write (or a fence) asked of a server that does not lead; ``leader`` and ``leader_url`` say
    where to go when they are known."""

    code = "not_leader"

    def __init__(
        self, leader: str | None = None, leader_url: str | None = None, *, message: str | None = None
    ) -> None:
        where = f"; the leader is {leader}" if leader else "; no server leads right now"
        super().__init__(message or f"this server does not lead{where}")
        self.leader, self.leader_url = leader, leader_url
        self.details = {"leader": leader, "leader_url": leader_url}


class StoreFailedError(RequestError):
    """The store failed under the request (unreachable, or it refused the operation)."""

    code = "unavailable"


# Every exception a request may end in that its client should be told about; anything else is a bug.
REFUSALS: tuple[type[Exception], ...] = (RequestError, StoreError)


def as_refusal(error: Exception) -> RequestError:
    """``error`` (one of REFUSALS) as the refusal its client reads."""
    if isinstance(error, RequestError):
        return error
    if isinstance(error, UnavailableError):
        return StoreFailedError(f"the store cannot be reached: {error}")
    if isinstance(error, StoreError):
        return StoreFailedError(f"the store refused the request: {error}")
    raise TypeError(f"not a refusal: {type(error).__name__}: {error}")
