"""Refusals the runtime gives the API, each mapped to one HTTP status and error code (docs/api.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class FieldProblem:
    path: str  # the field, e.g. "spec.services[0].replicas" (or "line 3, column 5" in YAML text)
    message: str
    object: str = ""  # the object it belongs to, e.g. "deployments/shop"


class RequestError(Exception):
    """Base of every refusal; ``code`` is the JSON body's ``error``."""

    code = "invalid"
    status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidError(RequestError):
    """The request is well-formed but its content is wrong; ``problems`` names every field."""

    code, status = "invalid", 422

    def __init__(self, message: str, problems: Sequence[FieldProblem] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems)


class NotFoundError(RequestError):
    code, status = "not_found", 404


class WriteConflictError(RequestError):
    code, status = "conflict", 409
