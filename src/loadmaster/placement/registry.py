"""The plugin registry: every filter and scorer by its config name.

Registration is explicit (one list below), names are unique (a duplicate fails at import), and the
engine orders filters by rejection category, never by registration order.
"""

from __future__ import annotations

from loadmaster.placement.extension_points import Filter, Rejection, Scorer
from loadmaster.placement.plugins.cordon import Cordon
from loadmaster.placement.plugins.gpu_devices import GpuDevices
from loadmaster.placement.plugins.gpu_fragmentation import GpuFragmentation
from loadmaster.placement.plugins.gpu_headroom import GpuHeadroom
from loadmaster.placement.plugins.gpu_leftover import GpuLeftover
from loadmaster.placement.plugins.gpu_midfill_spread import GpuMidfillSpread
from loadmaster.placement.plugins.gpu_model import GpuModel
from loadmaster.placement.plugins.gpu_scores import ResourceType
from loadmaster.placement.plugins.host_ports import HostPorts
from loadmaster.placement.plugins.hosts import Hosts
from loadmaster.placement.plugins.image_pull import ImagePull
from loadmaster.placement.plugins.least_instances import LeastInstances
from loadmaster.placement.plugins.license_tier import LicenseTier
from loadmaster.placement.plugins.load_balance import LoadBalance
from loadmaster.placement.plugins.locality import Locality
from loadmaster.placement.plugins.node_availability import NodeAvailability
from loadmaster.placement.plugins.node_selector import NodeSelector
from loadmaster.placement.plugins.node_state import NodeState
from loadmaster.placement.plugins.prefer_no_schedule import PreferNoSchedule
from loadmaster.placement.plugins.preferred_affinity import PreferredAffinity
from loadmaster.placement.plugins.resource_fit import ResourceFit
from loadmaster.placement.plugins.runtime import Runtime
from loadmaster.placement.plugins.service_pack import ServicePack
from loadmaster.placement.plugins.service_spread import ServiceSpread
from loadmaster.placement.plugins.strategy_scores import STRATEGY_SCORERS
from loadmaster.placement.plugins.taint_toleration import TaintToleration
from loadmaster.placement.plugins.topology_spread import SoftTopologySpread, TopologySpread
from loadmaster.placement.plugins.volumes import Volumes


class RegistryError(ValueError):
    """An unknown or duplicate plugin name (raised at start-up, never mid-cycle)."""


def _by_name(plugins: list[Filter] | list[Scorer]) -> dict[str, Filter] | dict[str, Scorer]:
    table: dict[str, object] = {}
    for plugin in plugins:
        if plugin.name in table:
            raise RegistryError(f"duplicate plugin name {plugin.name!r}")
        table[plugin.name] = plugin
    return table  # type: ignore[return-value]


_FILTER_LIST: list[Filter] = [
    NodeState(), Cordon(), ResourceFit(), NodeSelector(), TaintToleration(), Hosts(), HostPorts(),
    GpuModel(), GpuDevices(), LicenseTier(), Runtime(), Volumes(), TopologySpread(),
]  # fmt: skip
_SCORER_LIST: list[Scorer] = [
    *STRATEGY_SCORERS, NodeAvailability(), PreferNoSchedule(), PreferredAffinity(),
    SoftTopologySpread(), ImagePull(), Locality(), LoadBalance(), LeastInstances(), ServiceSpread(),
    ServicePack(),
    ResourceType(), GpuFragmentation(), GpuHeadroom(), GpuMidfillSpread(), GpuLeftover(),
]  # fmt: skip

FILTERS: dict[str, Filter] = _by_name(_FILTER_LIST)  # type: ignore[assignment]
SCORERS: dict[str, Scorer] = _by_name(_SCORER_LIST)  # type: ignore[assignment]
# Filters in category order: a node's first failing filter names its rejection category.
ORDERED_FILTERS: tuple[Filter, ...] = tuple(
    sorted(FILTERS.values(), key=lambda f: list(Rejection).index(f.category))
)
