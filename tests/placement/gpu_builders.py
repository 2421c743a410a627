"""Builders for small GPU clusters in the scorer tests: nodes of whole GPUs, one-task jobs asking a share."""

from __future__ import annotations

from loadmaster.core.model import Job, Node, Task, TaskStatus

GI = 2**30


def node(name: str, gpus: int) -> Node:
    """64 cores, 256 GiB and ``gpus`` whole devices (none: a cpu-only node)."""
    alloc = {"cpu": 64_000, "memory": 256 * GI} | ({"gpu": gpus * 1000} if gpus else {})
    return Node(name, alloc, alloc)


def job(name: str, gpu: int, on: str | None = None) -> Job:
    """One task of 1 core, 1 GiB and ``gpu`` milli-GPU; Running on ``on`` if given, else Pending."""
    request = {"cpu": 1000, "memory": GI} | ({"gpu": gpu} if gpu else {})
    status = TaskStatus.RUNNING if on else TaskStatus.PENDING
    return Job(name, (Task(name, name, request, status, on),))
