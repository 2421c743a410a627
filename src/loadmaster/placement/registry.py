"""The plugin registry: every filter and scorer by its config name.

Registration is explicit (one list below), names are unique (a duplicate fails at import), and the
engine orders filters by rejection category, never by registration order.
"""

from __future__ import annotations

from loadmaster.placement.extension_points import Filter, Rejection, Scorer
from loadmaster.placement.plugins.filters.cordon import Cordon
from loadmaster.placement.plugins.filters.gpu_devices import GpuDevices
from loadmaster.placement.plugins.filters.gpu_model import GpuModel
from loadmaster.placement.plugins.filters.host_ports import HostPorts
from loadmaster.placement.plugins.filters.hosts import Hosts
from loadmaster.placement.plugins.filters.license_tier import LicenseTier
from loadmaster.placement.plugins.filters.node_selector import NodeSelector
from loadmaster.placement.plugins.filters.node_state import NodeState
from loadmaster.placement.plugins.filters.resource_fit import ResourceFit
from loadmaster.placement.plugins.filters.runtime import Runtime
from loadmaster.placement.plugins.filters.taint_toleration import TaintToleration
from loadmaster.placement.plugins.filters.topology_spread import SoftTopologySpread, TopologySpread
from loadmaster.placement.plugins.filters.volumes import Volumes
from loadmaster.placement.plugins.scorers.gpu_fragmentation import GpuFragmentation
from loadmaster.placement.plugins.scorers.gpu_headroom import GpuHeadroom
from loadmaster.placement.plugins.scorers.gpu_leftover import GpuLeftover
from loadmaster.placement.plugins.scorers.gpu_midfill_spread import GpuMidfillSpread
from loadmaster.placement.plugins.scorers.gpu_scores import ResourceType
from loadmaster.placement.plugins.scorers.image_pull import ImagePull
from loadmaster.placement.plugins.scorers.least_instances import LeastInstances
from loadmaster.placement.plugins.scorers.load_balance import LoadBalance
from loadmaster.placement.plugins.scorers.locality import Locality
from loadmaster.placement.plugins.scorers.node_availability import NodeAvailability
from loadmaster.placement.plugins.scorers.prefer_no_schedule import PreferNoSchedule
from loadmaster.placement.plugins.scorers.preferred_affinity import PreferredAffinity
from loadmaster.placement.plugins.scorers.service_pack import ServicePack
from loadmaster.placement.plugins.scorers.service_spread import ServiceSpread
from loadmaster.placement.plugins.scorers.strategy_scores import STRATEGY_SCORERS


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
