"""Ended records (LRS K2): what is left of a Terminated replica or a removed node, kept for history.

When a live object ends, the write that removes its key also stores its last state under
``/ended/<plural>/<name>/<revision, 12 digits>`` (the live key's last revision: unique per incarnation,
so a name that is used again, a global replica of a rejoining node, keeps each ended record), with
``ended_at``. Names are free again at once; the history stays readable (``GET /api/ended/<plural>``)
until the leader's cleanup (``runtime/reconciling/cleanup.py``) deletes it ``cleanup_retention`` after
it ended.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from loadmaster.manifests import plural_of
from loadmaster.manifests.timestamps import format_timestamp
from loadmaster.runtime.plane.storage.store_layout import encode_object
from loadmaster.store.interface import Put

ENDED = "/ended/"
REVISION_DIGITS = 12


def ended_prefix(kind: str | None = None) -> str:
    return ENDED if kind is None else f"{ENDED}{plural_of(kind)}/"


def ended_key(kind: str, name: str, revision: int) -> str:
    return f"{ended_prefix(kind)}{name}/{revision:0{REVISION_DIGITS}d}"


def ended_put(kind: str, obj: dict[str, Any], revision: int, now: datetime) -> Put:
    """The op that keeps ``obj`` (last stored at ``revision``) as an ended record from ``now``."""
    name = str(obj.get("metadata", {}).get("name", ""))
    metadata = {k: v for k, v in obj.get("metadata", {}).items() if k != "revision"}
    record = {**obj, "metadata": {**metadata, "ended_at": format_timestamp(now)}}
    return Put(ended_key(kind, name, revision), encode_object(record), expect_revision=0)
