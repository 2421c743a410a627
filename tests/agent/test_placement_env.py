"""What a replica's placement gives its process: device and address variables, after the spec's env, and
why a replica cannot start yet (no address it can have here, no devices on record)."""

from __future__ import annotations

from typing import Any

from loadmaster.agent.host.address_pool import parse_address_pool
from loadmaster.agent.replicas.placement_env import missing_address, missing_devices, placement_env
from loadmaster.agent.replicas.replica_launch import launch_spec

POOL = parse_address_pool("127.0.10.0/30")


def replica(spec: dict[str, Any], status: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "web-svc-0"}, "spec": {"command": ["true"], **spec}, "status": status}


def test_devices_and_the_slots_address_become_variables_over_the_specs_env(tmp_path: Any) -> None:
    placed = replica(
        {"gpus": 2, "address": True, "env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3", "KEEP": "1"}},
        {"devices": [2, 3], "address_slot": 1},
    )
    env = launch_spec(placed, "n1", tmp_path, placement_env(placed, POOL)).env
    assert env == {
        "CUDA_VISIBLE_DEVICES": "2,3",
        "NVIDIA_VISIBLE_DEVICES": "2,3",
        "LOADMASTER_REPLICA_ADDRESS": "127.0.10.2",
        "KEEP": "1",
    }


def test_a_replica_without_devices_or_address_requests_gets_neither_variable() -> None:
    assert placement_env(replica({}, {"address_slot": 0}), POOL) == {}


def test_an_address_the_agent_cannot_give_is_named() -> None:
    asks = {"address": True}
    assert missing_address(replica(asks, {"address_slot": 1}), POOL) is None
    assert missing_address(replica(asks, {"address_slot": 2}), POOL) == (
        "address slot 2 is past this agent's pool 127.0.10.0/30 (2 addresses)"
    )
    assert missing_address(replica(asks, {}), POOL) == "no address slot was assigned"
    assert missing_address(replica(asks, {"address_slot": 0}), None) == "this agent has no --address-pool"
    assert missing_address(replica({}, {}), None) is None


def test_a_gpu_replica_waits_for_its_devices_on_record() -> None:
    assert missing_devices(replica({"gpus": 1}, {})) == "no GPU devices were assigned yet"
    assert missing_devices(replica({"resources": {"gpu": 0.5}}, {})) == "no GPU devices were assigned yet"
    assert missing_devices(replica({"gpus": "all"}, {"devices": [0]})) is None
    assert missing_devices(replica({"gpus": 0}, {})) is None
