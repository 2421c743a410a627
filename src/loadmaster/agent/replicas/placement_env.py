"""What a replica's placement gives its process besides its spec: the GPU devices and the address the
server assigned it on this node, as environment variables.

* ``status.devices`` (written by the scheduler's bind; ``core/devices.py`` picks them) ->
  ``CUDA_VISIBLE_DEVICES`` and ``NVIDIA_VISIBLE_DEVICES``, e.g. ``"0,1"``;
* ``status.address_slot`` -> ``LOADMASTER_REPLICA_ADDRESS``, the slot's address of this agent's pool.

They are set after the spec's ``env``, so a replica cannot claim devices or an address it was not given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadmaster.agent.host.address_pool import AddressPool
from loadmaster.agent.replicas.replica_launch import spec_of, status_of

DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
ADDRESS_VARIABLE = "LOADMASTER_REPLICA_ADDRESS"


def assigned_devices(replica: Mapping[str, Any]) -> tuple[int, ...]:
    devices = status_of(replica).get("devices") or []
    return tuple(d for d in devices if isinstance(d, int) and not isinstance(d, bool))


def assigned_address(replica: Mapping[str, Any], pool: AddressPool | None) -> str | None:
    """The replica's address on this node; None when it asks for none, or its slot has no address here."""
    if not spec_of(replica).get("address") or pool is None:
        return None
    return pool.address(status_of(replica).get("address_slot"))


def missing_address(replica: Mapping[str, Any], pool: AddressPool | None) -> str | None:
    """Why a replica that asks for an address cannot have one here (None: it can, or asks for none).
    Such a replica is not started: the server fails it (``subnet_pool_exhausted``) when its slot is
    past the pool."""
    if not spec_of(replica).get("address"):
        return None
    slot = status_of(replica).get("address_slot")
    if pool is None:
        return "this agent has no --address-pool"
    if slot is None:
        return "no address slot was assigned"
    if pool.address(slot) is None:
        return f"address slot {slot} is past this agent's pool {pool.cidr} ({pool.size} addresses)"
    return None


def missing_devices(replica: Mapping[str, Any]) -> str | None:
    """Why a replica that asks for GPUs cannot start yet: no devices on record (a replica placed without
    a bind gets them from the next scheduling cycle). None: it has them, or asks for none."""
    spec = spec_of(replica)
    asks = spec.get("gpus") not in (None, 0, "0") or bool((spec.get("resources") or {}).get("gpu"))
    return "no GPU devices were assigned yet" if asks and not assigned_devices(replica) else None


def placement_env(replica: Mapping[str, Any], pool: AddressPool | None) -> dict[str, str]:
    env: dict[str, str] = {}
    devices = assigned_devices(replica)
    if devices:
        listed = ",".join(str(d) for d in devices)
        env.update((variable, listed) for variable in DEVICE_VARIABLES)
    address = assigned_address(replica, pool)
    if address is not None:
        env[ADDRESS_VARIABLE] = address
    return env
