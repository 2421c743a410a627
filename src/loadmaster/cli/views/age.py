"""Ages as tables show them (``45s``, ``12m``, ``3h``, ``5d``): at most two units, kubectl-style."""

from __future__ import annotations

from datetime import datetime

from loadmaster.manifests.timestamps import parse_timestamp

MISSING = "-"


def format_seconds(seconds: float) -> str:
    """Whole units, largest first; below an hour the minutes keep their seconds (``2m5s``)."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 10:
        return f"{minutes}m{seconds}s" if seconds else f"{minutes}m"
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes}m" if minutes and hours < 10 else f"{hours}h"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours}h" if hours and days < 10 else f"{days}d"


def age(timestamp: object, now: datetime) -> str:
    """How long ago ``timestamp`` (RFC 3339) was, or ``-`` when there is none or it cannot be read."""
    if not timestamp:
        return MISSING
    try:
        moment = parse_timestamp(timestamp)
    except ValueError:
        return MISSING
    return format_seconds((now - moment).total_seconds())
