"""Job: a batch gang of ``tasks`` identical tasks, of which ``min_available`` must run together."""

from __future__ import annotations

from typing import Any

from loadmaster.manifests.errors import Problems
from loadmaster.manifests.kinds.status_fields import free_form_status
from loadmaster.manifests.task_fields import TASK_FIELDS, apply_ranking_defaults, check_task
from loadmaster.manifests.timeslots import timeslot
from loadmaster.manifests.validation import Reader, integer, read_object

JOB_ONLY_FIELDS: dict[str, Reader] = {"tasks": integer(1), "min_available": integer(1), "timeslot": timeslot}


def check_gang(problems: Problems, read: dict[str, Any]) -> None:
    tasks, min_available = read.get("tasks"), read.get("min_available")
    if isinstance(tasks, int) and isinstance(min_available, int) and min_available > tasks:
        problems.add("spec.min_available", f"must be at most tasks ({tasks}), got {min_available}")


def read_spec(problems: Problems, value: object, name: str) -> dict[str, Any]:
    read = read_object(problems, "spec", value, {**JOB_ONLY_FIELDS, **TASK_FIELDS}, required=("tasks",))
    check_task(problems, "spec", read, value)
    check_gang(problems, read)
    # A Job is a gang: unless told otherwise, all of its tasks start together or none does.
    if isinstance(read.get("tasks"), int):
        read.setdefault("min_available", read["tasks"])
    apply_ranking_defaults(read)
    return read


read_status = free_form_status
