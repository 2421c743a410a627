"""The server's admission limits on what one request may ask for (``core.limits.AdmissionLimits``).

The manifests' own rules already bound every number (``core.limits``); these are the server's smaller,
configurable bounds on how much one object or request makes the control plane create: a service's
``replicas``, a Job's ``tasks``, and the number of objects in one apply or preview. A refusal is an
``InvalidError`` (422) whose problems name each field and the limit it broke; nothing is stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from loadmaster.core.limits import AdmissionLimits
from loadmaster.manifests import DEPLOYMENT, JOB, Manifest
from loadmaster.runtime.plane.errors import FieldProblem, InvalidError


def check_admission(manifests: Sequence[Manifest], limits: AdmissionLimits) -> None:
    """Raise InvalidError listing every field of ``manifests`` above ``limits``."""
    problems: list[FieldProblem] = []
    if len(manifests) > limits.max_objects_per_apply:
        problems.append(
            FieldProblem(
                "body",
                f"{len(manifests)} objects in one request; the server accepts at most "
                f"{limits.max_objects_per_apply} (--max-objects-per-apply)",
            )
        )
    for manifest in manifests:
        for path, count in _replica_counts(manifest):
            if isinstance(count, int) and count > limits.max_replicas:
                problems.append(
                    FieldProblem(
                        path,
                        f"must be at most {limits.max_replicas} (the server's --max-replicas), got {count}",
                        manifest.ref,
                    )
                )
    if problems:
        shown = "; ".join(f"{p.object + ': ' if p.object else ''}{p.path}: {p.message}" for p in problems[:3])
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise InvalidError(f"{len(problems)} problem(s), nothing was stored: {shown}{more}", problems)


def _replica_counts(manifest: Manifest) -> list[tuple[str, object]]:
    """(path, count) of every field that says how many replicas the object makes."""
    if manifest.kind == JOB:
        return [("spec.tasks", manifest.spec.get("tasks"))]
    if manifest.kind == DEPLOYMENT:
        return [
            (f"spec.services[{index}].replicas", service.get("replicas"))
            for index, service in enumerate(manifest.spec.get("services", []))
        ]
    return []
