"""The normalized form of one object: what the store keeps and the API returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from loadmaster.manifests.kind_names import API_VERSION, normalize_kind, object_ref


@dataclass(frozen=True, slots=True)
class Manifest:
    """One validated object. ``metadata``, ``spec`` and ``status`` are plain JSON-ready dicts with
    snake_case keys; quantities are kept as the user wrote them (``"500m"``) so the object
    round-trips, and defaults the scheduler relies on (placement, replicas, priority ...) are filled in.
    """

    kind: str
    name: str
    metadata: dict[str, Any]
    spec: dict[str, Any]
    status: dict[str, Any] = field(default_factory=dict)
    api_version: str = API_VERSION

    @property
    def ref(self) -> str:
        """``deployments/shop``: how errors, the CLI and logs name this object."""
        return object_ref(self.kind, self.name)

    @property
    def labels(self) -> dict[str, str]:
        labels: dict[str, str] = self.metadata.get("labels", {})
        return labels

    def to_dict(self) -> dict[str, Any]:
        """The full object as the API returns it (``status`` only when there is one)."""
        obj: dict[str, Any] = {
            "api_version": self.api_version,
            "kind": self.kind,
            "metadata": self.metadata,
            "spec": self.spec,
        }
        if self.status:
            obj["status"] = self.status
        return obj

    @classmethod
    def from_stored(cls, obj: Mapping[str, Any]) -> Manifest:
        """Wrap an object read back from the store WITHOUT validating it again.

        Only for objects that passed ``manifest_from_object`` when they were written; anything from
        a user goes through ``parse_manifests`` or ``manifest_from_object`` instead.
        """
        metadata = dict(obj.get("metadata") or {})
        return cls(
            kind=normalize_kind(obj.get("kind")),
            name=str(metadata.get("name", "")),
            metadata=metadata,
            spec=dict(obj.get("spec") or {}),
            status=dict(obj.get("status") or {}),
            api_version=str(obj.get("api_version", API_VERSION)),
        )
