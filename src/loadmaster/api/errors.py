"""Every error the API returns is ``{"error": code, "message": one line, "errors"?: [{path, message}]}``.

A refusal from the runtime (``runtime/plane/errors.py``: a bad request, a write on a follower, a store
that cannot be reached...) names its code; ``REFUSAL_STATUS`` gives each code its HTTP status, the one
place the server's statuses are decided. FastAPI's own 404/405 and query-parameter errors are reshaped
into the same body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from loadmaster.api.responses import FastJSONResponse
from loadmaster.runtime.plane.errors import REFUSALS, FieldProblem, as_refusal

# docs/api.md. A runtime "invalid" is always about the content of a well-formed request (422); the
# API's own 400s (a missing body, a bad query parameter) are ApiErrors that carry their status.
REFUSAL_STATUS = {
    "invalid": 422,
    "forbidden": 403,
    "not_found": 404,
    "conflict": 409,
    "not_leader": 503,
    "unavailable": 503,
}
_HTTP_CODES = {
    400: "invalid",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "invalid",
    409: "conflict",
    413: "too_large",
    422: "invalid",
    503: "unavailable",
}


class ApiError(Exception):
    """An error the API itself raises (auth, body shape, too large)."""

    def __init__(self, status: int, code: str, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.extra = status, code, message, extra or {}


def error_body(
    code: str, message: str, problems: Sequence[FieldProblem] = (), **extra: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {"error": code, "message": message}
    if problems:
        body["errors"] = [
            {"path": p.path, "message": p.message, **({"object": p.object} if p.object else {})}
            for p in problems
        ]
    body.update(extra)
    return body


def error_response(
    status: int, code: str, message: str, problems: Sequence[FieldProblem] = (), **extra: Any
) -> FastJSONResponse:
    return FastJSONResponse(error_body(code, message, problems, **extra), status_code=status)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api(_: Request, error: ApiError) -> FastJSONResponse:
        return error_response(error.status, error.code, error.message, **error.extra)

    async def _refusal(_: Request, error: Exception) -> FastJSONResponse:
        refusal = as_refusal(error)
        status = REFUSAL_STATUS[refusal.code]
        return error_response(status, refusal.code, refusal.message, refusal.problems, **refusal.details)

    for refused in REFUSALS:
        app.add_exception_handler(refused, _refusal)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, error: StarletteHTTPException) -> FastJSONResponse:
        code = _HTTP_CODES.get(error.status_code, "invalid")
        return error_response(error.status_code, code, str(error.detail))

    @app.exception_handler(RecursionError)
    async def _too_deep(_: Request, error: RecursionError) -> FastJSONResponse:
        # Whatever a request nests so deeply that handling it recursed too far is the client's doing.
        return error_response(
            422, "invalid", "the request is nested too deeply", [FieldProblem("body", "nested too deeply")]
        )

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, error: Exception) -> FastJSONResponse:
        # Starlette logs the error with its traceback after this answer; the client gets JSON too.
        return error_response(500, "internal", f"the server failed: {type(error).__name__}")

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, error: RequestValidationError) -> FastJSONResponse:
        problems = [
            FieldProblem(".".join(str(part) for part in item.get("loc", ())), str(item.get("msg", "invalid")))
            for item in error.errors()
        ]
        message = "; ".join(f"{p.path}: {p.message}" for p in problems) or "invalid request"
        return error_response(400, "invalid", message, problems)
