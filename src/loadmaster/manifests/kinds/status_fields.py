"""Readers for what the server and the agent write under ``status``."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.quantity_fields import timestamp
from loadmaster.manifests.validation import describe, list_of, object_of, plain_json, text

# One entry per transition attempt (CARA's Phase condition): what happened, why, and when.
condition = object_of(
    {
        "type": text,
        "status": text,
        "reason": text,
        "message": text,
        "last_transition_time": timestamp,
        "details": plain_json,
    },
    required=("type",),
)
conditions = list_of(condition)


def free_form_status(problems: Problems, path: str, value: object) -> Any:
    """Status of kinds whose status only the server writes (queues, deployments, jobs, templates)."""
    if not isinstance(value, dict):
        problems.add(path, f"expected a mapping, got {describe(value)}")
        return {}
    return plain_json(problems, path, value)
