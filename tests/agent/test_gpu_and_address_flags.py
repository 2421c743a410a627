"""``--gpus`` and ``--address-pool``: what they declare, and bad values refused naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.agent.host.address_pool import parse_address_pool
from loadmaster.agent.host.gpu_inventory import GpuInventory, parse_gpus
from loadmaster.agent.host.node_shape import ShapeError
from loadmaster.cli.commands.agent import node_settings_from_options
from loadmaster.cli.remote.client import CommandError


def test_a_count_declares_that_many_devices_of_no_model() -> None:
    assert parse_gpus("4") == GpuInventory(4)
    assert parse_gpus("4").device_ids == (0, 1, 2, 3)
    assert parse_gpus("4").registration_fields() == {}


def test_driver_model_and_capabilities_are_read_with_the_count() -> None:
    inventory = parse_gpus("nvidia:A100:gpu,compute x4")
    assert inventory == GpuInventory(4, "A100", "nvidia", ("gpu", "compute"))
    assert inventory.capacity() == {"gpu": "4"}
    assert inventory.registration_fields() == {
        "gpu_model": "A100",
        "gpu_driver": "nvidia",
        "gpu_capabilities": ["gpu", "compute"],
    }
    assert parse_gpus("nvidia:H100 x1") == GpuInventory(1, "H100", "nvidia")


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0", "from 1 to 1024"),
        ("many", "expected a device count"),
        ("A100 x2", "DRIVER:MODEL"),
        ("nvidia:A100 x0", "from 1 to 1024"),
        ("nvidia:A100:gpu,gpu x2", "given twice"),
        ("nvidia:A 100 x2", "bad model"),
        ("nvidia:A100:gpu:extra x2", "DRIVER:MODEL"),
    ],
)
def test_a_bad_gpus_value_is_refused_naming_the_flag(value: str, says: str) -> None:
    with pytest.raises(ShapeError, match="--gpus") as error:
        parse_gpus(value)
    assert says in str(error.value)


def test_an_address_pool_offers_its_host_addresses_by_slot() -> None:
    pool = parse_address_pool("127.0.10.0/28")
    assert pool.size == 14
    assert pool.capacity() == {"addresses": "14"}
    assert (pool.address(0), pool.address(13)) == ("127.0.10.1", "127.0.10.14")
    assert pool.address(14) is None and pool.address(None) is None and pool.address(True) is None


@pytest.mark.parametrize("value", ["127.0.10.1/28", "300.0.0.0/24", "loopback", "10.0.0.0/8"])
def test_a_bad_address_pool_is_refused_naming_the_flag(value: str) -> None:
    with pytest.raises(ShapeError, match="--address-pool"):
        parse_address_pool(value)


@pytest.mark.parametrize(
    ("capacity", "gpus", "pool", "says"),
    [
        ("cpu=2,memory=1Gi,gpu=2", "2", None, "--gpus: --capacity gives gpu already"),
        ("cpu=2,memory=1Gi,addresses=2", None, "127.0.10.0/30", "--address-pool: --capacity gives addresses"),
        ("cpu=2,memory=1Gi", "two", None, "--gpus:"),
    ],
)
def test_the_agent_command_refuses_a_resource_given_twice_or_a_bad_flag(
    capacity: str, gpus: str | None, pool: str | None, says: str, tmp_path: Path
) -> None:
    with pytest.raises(CommandError, match=says):
        node_settings_from_options(
            "n1", capacity, "", "", tmp_path, "30s", "30s", "1s", "127.0.0.1:0", gpus=gpus, address_pool=pool
        )
