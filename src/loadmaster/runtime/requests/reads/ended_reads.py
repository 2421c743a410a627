"""Reading ended records for the API (``runtime/plane/ended_records.py`` keeps them)."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests import ManifestError, normalize_kind
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.runtime.plane.ended_records import ended_prefix
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError
from loadmaster.runtime.plane.storage.store_layout import decode_object


async def ended_objects(plane: ControlPlane, kind_text: str) -> list[dict[str, Any]]:
    """Every ended record of one kind, by name then by when it ended (oldest first)."""
    try:
        kind = normalize_kind(kind_text)
    except ManifestError as error:
        raise InvalidError(f"kind: {error.message}", [FieldProblem("kind", error.message)]) from None
    entries, _ = await plane.store.list(ended_prefix(kind))
    return [decode_object(entry.value, entry.mod_revision) for entry in entries]
