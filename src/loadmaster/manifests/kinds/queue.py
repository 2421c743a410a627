"""Queue: a node of the quota tree (KAI): deserved share, hard limit, weight above deserved."""

from __future__ import annotations

from typing import Any

from loadmaster.core.model import PROFILES
from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kinds.status_fields import free_form_status
from loadmaster.manifests.quantity_fields import parsed_or_none, resources
from loadmaster.manifests.validation import at, dns_name, integer, number, one_of, read_object

DEFAULT_QUEUE_PRIORITY = 0
DEFAULT_OVER_QUOTA_WEIGHT = 1


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    fields = {
        "parent": dns_name,
        "priority": integer(),
        "deserved": resources(),
        "limit": resources(),
        "over_quota_weight": number(minimum=0),
        # The placement profile of the jobs and services in this queue that name none themselves.
        "profile": one_of(*PROFILES),
    }
    read = read_object(problems, "spec", value, fields)
    if read.get("parent") == name:
        problems.add("spec.parent", f'queue "{name}" cannot be its own parent')
    _check_deserved_within_limit(problems, read)
    read.setdefault("priority", DEFAULT_QUEUE_PRIORITY)
    read.setdefault("over_quota_weight", DEFAULT_OVER_QUOTA_WEIGHT)
    return read


def _check_deserved_within_limit(problems: Problems, read: dict[str, Any]) -> None:
    """A guarantee above the hard maximum could never be honoured, so it is refused."""
    deserved = parsed_or_none(read.get("deserved", {}))
    limit = parsed_or_none(read.get("limit", {}))
    if deserved is None or limit is None:
        return
    for resource, amount in deserved.items():
        if resource in limit and amount > limit[resource]:
            problems.add(
                at("spec.deserved", resource),
                f"deserved {read['deserved'][resource]} exceeds the limit {read['limit'][resource]}",
            )


# Written by the server (fair share, usage); not part of what users apply.
read_status = free_form_status
