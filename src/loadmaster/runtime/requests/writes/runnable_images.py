"""While the process runtime is the only one: ``image:`` without ``command:`` is refused at apply time
when no node of the cluster could run it.

A real agent says how it runs replicas in its node's ``status.agent.driver``; ``process`` runs commands
only. Simulated nodes say nothing (they "run" images), so a cluster with any of them, or with no node
yet, accepts images as before. The refusal names each field, like every other apply refusal (422).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from loadmaster.manifests import DEPLOYMENT, JOB, Manifest
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError

COMMAND_ONLY_DRIVERS = frozenset({"process"})


def _drivers(nodes: Iterable[Mapping[str, Any]]) -> set[str | None]:
    return {((node.get("status") or {}).get("agent") or {}).get("driver") for node in nodes}


def _image_only(manifest: Manifest) -> list[tuple[str, str]]:
    """(path, image) of every replica template with an image and no command."""
    if manifest.kind == JOB:
        templates = [("spec", manifest.spec)]
    elif manifest.kind == DEPLOYMENT:
        templates = [(f"spec.services[{i}]", s) for i, s in enumerate(manifest.spec.get("services", []))]
    else:
        return []
    return [(path, str(t["image"])) for path, t in templates if t.get("image") and not t.get("command")]


def check_images_runnable(manifests: Sequence[Manifest], nodes: Iterable[Mapping[str, Any]]) -> None:
    """The nodes are read only when a manifest has an image-only template: an apply of commands (the
    common case) must not walk 5,000 nodes on the event loop (14 ms an apply, issue 12)."""
    problems = [
        FieldProblem(
            f"{path}.command",
            f"required: image {image} cannot run here, every node runs processes only (the process "
            "runtime; no container runtime yet): give the command to run",
            manifest.ref,
        )
        for manifest in manifests
        for path, image in _image_only(manifest)
    ]
    if not problems:
        return
    drivers = _drivers(nodes)
    if drivers and drivers <= COMMAND_ONLY_DRIVERS:
        shown = "; ".join(f"{p.object}: {p.path}: {p.message}" for p in problems[:3])
        raise InvalidError(f"{len(problems)} problem(s), nothing was stored: {shown}", problems)
