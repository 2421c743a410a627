"""RFC 3339 timestamps as manifests write them (``"2026-11-21T10:00:00Z"``)."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache


def parse_timestamp(value: object) -> datetime:
    """An RFC 3339 string with a timezone -> an aware datetime; ValueError says what is wrong.

    A timezone is required: a naive time is ambiguous between the agent's and the server's clocks.
    """
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        moment = _parse_text(value)
    else:
        raise ValueError(f'bad timestamp {value!r}: expected a string like "2026-11-21T10:00:00Z"')
    if moment.tzinfo is None:
        raise ValueError(f'timestamp "{value}" has no timezone: add "Z" for UTC')
    return moment


@lru_cache(maxsize=8192)
def _parse_text(value: str) -> datetime:
    """Remembered: a thousand nodes heartbeating in one round carry the same few timestamps, read by
    several readers each (datetimes are immutable, so sharing one is safe)."""
    try:
        return datetime.fromisoformat(value.strip())
    except ValueError:
        raise ValueError(f'bad timestamp "{value}": expected e.g. "2026-11-21T10:00:00Z"') from None


def format_timestamp(moment: datetime) -> str:
    """An aware datetime -> ``2026-11-21T10:00:00Z`` (UTC shown as Z, as users write it)."""
    text = moment.isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
