"""Small JSON request bodies (registration, heartbeat, status, tokens), with a clear error if malformed."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from loadmaster.api.strict_json import strict_loads
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError


async def json_body(request: Request, *, empty_ok: bool = False) -> Any:
    raw = await request.body()
    if not raw.strip():
        if empty_ok:
            return {}
        raise InvalidError("the request needs a JSON body", [FieldProblem("body", "required")])
    return strict_loads(raw)
