"""``loadmaster agent --address-pool CIDR``: the addresses this node hands to its replicas.

The pool's size (its host addresses: a /30 has 2, a /28 has 14; a /31 or /32 all of its 2 or 1) is
registered as the node's ``addresses`` capacity, which the scheduler counts like any resource. The
server gives each replica with ``address: true`` a slot at its bind (``status.address_slot``); slot k is
the pool's k-th host address, exported to the process as ``LOADMASTER_REPLICA_ADDRESS`` and reported as
``status.address`` (docs/addresses.md). A slot past the pool (the pool shrank) has no address.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from loadmaster.agent.host.node_shape import ShapeError
from loadmaster.core.resources import ADDRESSES

MAX_POOL = 65536  # a /16 of IPv4: every address is listed once at start


@dataclass(frozen=True, slots=True)
class AddressPool:
    cidr: str
    addresses: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.addresses)

    def address(self, slot: object) -> str | None:
        """The slot's address; None for a missing slot or one past the pool."""
        if isinstance(slot, int) and not isinstance(slot, bool) and 0 <= slot < self.size:
            return self.addresses[slot]
        return None

    def capacity(self) -> dict[str, str]:
        return {ADDRESSES: str(self.size)}


def parse_address_pool(text: str, option: str = "--address-pool") -> AddressPool:
    """``"127.0.10.0/28"`` -> its 14 host addresses; ShapeError naming ``option`` when it is no network."""
    try:
        network = ipaddress.ip_network(text.strip(), strict=True)
    except ValueError as exc:
        raise ShapeError(
            f'{option}: expected a network such as 127.0.10.0/28, got "{text}" ({exc})'
        ) from None
    if network.num_addresses > MAX_POOL:
        raise ShapeError(f"{option}: {network} has {network.num_addresses} addresses; at most {MAX_POOL}")
    return AddressPool(str(network), tuple(str(host) for host in network.hosts()))
