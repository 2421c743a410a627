"""JSON responses encoded with msgspec: listing ten thousand replicas should not cost a second.

``FastJSONResponse`` is a JSONResponse (only its encoder differs), so the OpenAPI document declares
the routes that answer with it as answering JSON, not a string. ``ERROR_RESPONSES`` describes the one
error body every route may answer with (api/errors.py).
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.responses import JSONResponse

_encoder = msgspec.json.Encoder()


class FastJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return _encoder.encode(content)


def json_bytes(content: Any) -> bytes:
    return _encoder.encode(content)


_ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string", "description": "a code: invalid, unauthorized, too_large, ..."},
        "message": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "message": {"type": "string"},
                    "object": {"type": "string"},
                },
            },
        },
    },
}
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"description": what, "content": {"application/json": {"schema": _ERROR_SCHEMA}}}
    for status, what in (("4XX", "the request was refused"), ("5XX", "the server could not answer"))
}
