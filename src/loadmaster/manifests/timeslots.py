"""``timeslot: {start, end}`` on a Job or a Deployment (LRS K3, an opt-in advance reservation).

Nothing of it is placed before ``start - timeslot_lead_time`` (the server's setting, 35 min by default,
so a job's nodes are ready at ``start``), and everything of it is stopped at ``end``. Both are RFC 3339
times with a timezone; an ``end`` not after ``start`` is refused naming ``timeslot.end``. The window is
the owner's, not a replica's: it is not copied into replicas and does not change their spec hash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.quantity_fields import timestamp
from loadmaster.manifests.timestamps import parse_timestamp
from loadmaster.manifests.validation import at, read_object


@dataclass(frozen=True, slots=True)
class Timeslot:
    start: datetime
    end: datetime


def timeslot(problems: Problems, path: str, value: object) -> dict[str, Any]:
    read = read_object(problems, path, value, {"start": timestamp, "end": timestamp}, ("start", "end"))
    try:
        start, end = parse_timestamp(read.get("start")), parse_timestamp(read.get("end"))
    except ValueError:
        return read  # a bad or missing time was reported by its own field
    if end <= start:
        problems.add(at(path, "end"), f"must be after start ({read['start']}), got {read['end']}")
    return read


def timeslot_of(owner_spec: Mapping[str, Any]) -> Timeslot | None:
    """The stored owner's window, or None when it has none."""
    raw = owner_spec.get("timeslot")
    if not isinstance(raw, dict):
        return None
    return Timeslot(parse_timestamp(raw["start"]), parse_timestamp(raw["end"]))
