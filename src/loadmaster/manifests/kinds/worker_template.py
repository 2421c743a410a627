"""WorkerTemplate: a node shape that can be provisioned when nothing fits (LRS scale-up, K1)."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kinds.node import NODE_SHAPE_FIELDS, check_reserved_fits
from loadmaster.manifests.kinds.status_fields import free_form_status
from loadmaster.manifests.validation import number, read_object, string_map

FIELDS = {
    **NODE_SHAPE_FIELDS,
    "labels": string_map,  # the labels a node made from this template gets
    "cost": number(minimum=0),  # relative price: the "smallest fit" tier prefers cheaper templates
}


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    read = read_object(problems, "spec", value, FIELDS, required=("capacity",))
    check_reserved_fits(problems, "spec", read)
    return read


read_status = free_form_status
