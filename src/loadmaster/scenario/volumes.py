"""Volume pools of a node and volume claims of a task; sizes are memory quantities (bytes).

A pool is ``{name, labels, size}`` with a name unique within its node; a claim is
``{match_labels, size, ephemeral}`` and matches a pool whose labels contain every pair.
"""

from __future__ import annotations

from loadmaster.core.model import VolumeClaim, VolumePool
from loadmaster.scenario.fields import as_bool, as_mapping, as_name, as_uniquely_named, check_keys, require
from loadmaster.scenario.quantities import as_memory_bytes
from loadmaster.scenario.selectors import as_match_labels

_POOL_FIELDS = frozenset({"name", "labels", "size"})
_CLAIM_FIELDS = frozenset({"match_labels", "size", "ephemeral"})


def as_volume_pool(value: object, path: str) -> VolumePool:
    mapping = as_mapping(value, path)
    check_keys(mapping, _POOL_FIELDS, path)
    labels = mapping.get("labels")
    return VolumePool(
        name=as_name(require(mapping, "name", path), f"{path}.name"),
        size_bytes=as_memory_bytes(require(mapping, "size", path), f"{path}.size"),
        labels=() if labels is None else as_match_labels(labels, f"{path}.labels"),
    )


def as_volume_pools(value: object, path: str) -> tuple[VolumePool, ...]:
    """A node's pools, in file order; pool names are unique within the node."""
    return as_uniquely_named(value, path, as_volume_pool, "volume pool")


def as_volume_claim(value: object, path: str) -> VolumeClaim:
    mapping = as_mapping(value, path)
    check_keys(mapping, _CLAIM_FIELDS, path)
    labels, ephemeral = mapping.get("match_labels"), mapping.get("ephemeral")
    return VolumeClaim(
        size_bytes=as_memory_bytes(require(mapping, "size", path), f"{path}.size"),
        match_labels=() if labels is None else as_match_labels(labels, f"{path}.match_labels"),
        ephemeral=False if ephemeral is None else as_bool(ephemeral, f"{path}.ephemeral"),
    )
