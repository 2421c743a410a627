"""Small JSON request bodies (registration, heartbeat, status, tokens), with a clear error if malformed."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from loadmaster.runtime.plane.errors import FieldProblem, InvalidError


async def json_body(request: Request, *, empty_ok: bool = False) -> Any:
    raw = await request.body()
    if not raw.strip():
        if empty_ok:
            return {}
        raise InvalidError("the request needs a JSON body", [FieldProblem("body", "required")])
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidError(
            f"malformed JSON body: {error}", [FieldProblem("body", f"malformed JSON: {error}")]
        ) from None
