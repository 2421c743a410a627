"""JSON request bodies decoded strictly: malformed, duplicated keys or too deeply nested -> InvalidError.

``json.loads`` keeps the last of two equal keys (so ``{"role": "user", "role": "admin"}`` would mean
whatever the last one says, silently), and raises RecursionError, not a decoding error, on arrays or
objects nested about 1,000 deep. Both are the client's mistake and are refused as such (422, path
``body``), never a 500.
"""

from __future__ import annotations

import json
from typing import Any

from loadmaster.runtime.plane.errors import FieldProblem, InvalidError


class _DuplicateKeyError(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKeyError(f'the key "{key}" appears twice in one object')
            seen.add(key)
    return obj


def _refuse(problem: str) -> InvalidError:
    return InvalidError(
        f"malformed JSON body: {problem}", [FieldProblem("body", f"malformed JSON: {problem}")]
    )


def strict_loads(raw: bytes) -> Any:
    try:
        return json.loads(raw, object_pairs_hook=_unique_object)
    except (UnicodeDecodeError, json.JSONDecodeError, _DuplicateKeyError) as error:
        raise _refuse(str(error)) from None
    except RecursionError:
        raise _refuse("nested too deeply") from None
