"""An apply (or preview) body -> validated manifests: every document first, all errors at once.

The body is YAML text (``application/yaml``, several ``---`` documents) or JSON ``{"items": [...]}``.
Any problem in any document refuses the whole request (422, every problem listed with its object and
field path), so nothing is stored from a request that is partly wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from loadmaster.api.strict_json import strict_loads
from loadmaster.manifests import (
    REPLICA,
    Manifest,
    ManifestError,
    ManifestErrors,
    manifest_from_object,
    parse_manifests,
)
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError

ORIGIN = "<request>"
# Smaller bodies parse in about a millisecond: cheaper on the loop than the hop to a thread (~0.2 ms).
OFF_LOOP_BYTES = 16 * 1024
_JSON_TYPES = ("application/json",)
_YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml", "text/plain")


def _problems(errors: Iterable[ManifestError]) -> list[FieldProblem]:
    return [FieldProblem(error.path, error.message, error.ref) for error in errors]


def _refuse(problems: list[FieldProblem]) -> InvalidError:
    shown = "; ".join(f"{p.object + ': ' if p.object else ''}{p.path}: {p.message}" for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return InvalidError(f"{len(problems)} problem(s), nothing was stored: {shown}{more}", problems)


def _is_json(content_type: str, body: bytes) -> bool:
    kind = content_type.partition(";")[0].strip().lower()
    if kind in _JSON_TYPES:
        return True
    if kind in _YAML_TYPES:
        return False
    return body.lstrip()[:1] == b"{"  # no (or an unknown) content type: a JSON object starts with '{'


def _from_json(body: bytes) -> list[Manifest]:
    try:
        data = strict_loads(body)
    except InvalidError as error:
        raise _refuse(list(error.problems)) from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise _refuse([FieldProblem("items", 'expected a JSON object {"items": [ ...objects... ]}')])
    extra = sorted(set(data) - {"items"})
    problems = [FieldProblem(key, "unknown field (expected items)") for key in extra]
    manifests: list[Manifest] = []
    seen: dict[str, int] = {}
    for number, item in enumerate(data["items"], start=1):
        try:
            manifest = manifest_from_object(item, f"{ORIGIN} items[{number - 1}]")
        except ManifestErrors as errors:
            problems += _problems(errors.errors)
            continue
        if manifest.ref in seen:
            problems.append(
                FieldProblem(
                    "metadata.name",
                    f"defined twice (items {seen[manifest.ref]} and {number - 1})",
                    manifest.ref,
                )
            )
        seen.setdefault(manifest.ref, number - 1)
        manifests.append(manifest)
    if problems:
        raise _refuse(problems)
    return manifests


def _from_yaml(body: bytes) -> list[Manifest]:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise _refuse([FieldProblem("body", f"not UTF-8 text: {error}")]) from None
    try:
        return parse_manifests(text, ORIGIN)
    except ManifestErrors as errors:
        raise _refuse(_problems(errors.errors)) from None
    except ManifestError as error:
        raise _refuse(_problems([error])) from None


def manifests_of(
    body: bytes, content_type: str, *, allowed_kinds: Iterable[str] | None = None
) -> list[Manifest]:
    """The body's manifests, or InvalidError listing every problem. Replicas are never accepted:
    the server creates them from their Deployment or Job."""
    manifests = _from_json(body) if _is_json(content_type, body) else _from_yaml(body)
    if not manifests:
        raise _refuse([FieldProblem("body", "no documents: send at least one object")])
    allowed = set(allowed_kinds) if allowed_kinds is not None else None
    problems = []
    for manifest in manifests:
        if manifest.kind == REPLICA:
            problems.append(
                FieldProblem(
                    "kind", "replicas are created by the server; apply their Deployment or Job", manifest.ref
                )
            )
        elif allowed is not None and manifest.kind not in allowed:
            problems.append(
                FieldProblem("kind", f"expected one of {', '.join(sorted(allowed))} here", manifest.ref)
            )
    if problems:
        raise _refuse(problems)
    return manifests


async def read_manifests(
    body: bytes, content_type: str, *, allowed_kinds: Iterable[str] | None = None
) -> list[Manifest]:
    """``manifests_of``, off the event loop when the body is large or its YAML may hold aliases."""
    if len(body) > OFF_LOOP_BYTES or (b"*" in body and not _is_json(content_type, body)):
        return await asyncio.to_thread(manifests_of, body, content_type, allowed_kinds=allowed_kinds)
    return manifests_of(body, content_type, allowed_kinds=allowed_kinds)
