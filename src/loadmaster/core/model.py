"""The domain model of one frozen cluster: nodes, queues, jobs and their tasks.

These are plain immutable values with names (the edges' view). The scheduler proper works on the
columnar ``ClusterSnapshot`` built from them (snapshot.py), where everything is an integer index.
Quantities are already canonical integers (resources.py). Every field mirrors the scenario format
(``shared/spec/scenario-format.md``) and the manifests; defaults are the spec's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Literal, get_args

from loadmaster.core.resources import CPU, MEMORY

if TYPE_CHECKING:
    from loadmaster.core.gpu_shapes import GpuShapes
    from loadmaster.core.search_backoff import RestingSearches
    from loadmaster.core.voluntary_moves import VoluntaryMoves

# The words of the model's enumerated fields, each defined once here; the tuples (in this order) are
# what the scenario and manifest readers accept.
NodeState = Literal["Ready", "NotReady"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]
TolerationOperator = Literal["Equal", "Exists"]
# Pod label selectors (topology spread) take set operators only; node selectors also compare numbers.
SetOperator = Literal["In", "NotIn", "Exists", "DoesNotExist"]
LabelOperator = Literal[SetOperator, "Gt", "Lt"]
WhenUnsatisfiable = Literal["DoNotSchedule", "ScheduleAnyway"]
NODE_STATES: tuple[NodeState, ...] = get_args(NodeState)
TAINT_EFFECTS: tuple[TaintEffect, ...] = get_args(TaintEffect)
TOLERATION_OPERATORS: tuple[TolerationOperator, ...] = get_args(TolerationOperator)
SET_OPERATORS: tuple[SetOperator, ...] = get_args(SetOperator)
LABEL_OPERATORS: tuple[LabelOperator, ...] = get_args(LabelOperator)
WHEN_UNSATISFIABLE: tuple[WhenUnsatisfiable, ...] = get_args(WhenUnsatisfiable)
# An omitted taint effect: the only effect that keeps new tasks away without evicting running ones.
DEFAULT_TAINT_EFFECT: TaintEffect = "NoSchedule"

DEFAULT_QUEUE = "default"
DEFAULT_JOB_PRIORITY = 50
# KAI's rule (pkg/common/podgroup/preemptible.go): without an explicit choice, priority < 100 is preemptible.
PREEMPTIBLE_BELOW_PRIORITY = 100
DEFAULT_STALENESS_GRACE_S = 60.0
DEFAULT_MAX_EVICTION_RATIO = 2.0
DEFAULT_LICENSE_TIERS = ("personal", "team", "enterprise")
DEFAULT_ACTIONS = ("allocate", "consolidate", "reclaim", "preempt", "stale_gang_eviction")
# The implied taint of a cordoned node (Kubernetes' name, so existing tolerations keep working).
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"


def is_preemptible_by_default(priority: int) -> bool:
    """Whether a job that does not say is preemptible: KAI's rule, priority < 100."""
    return priority < PREEMPTIBLE_BELOW_PRIORITY


class TaskStatus(StrEnum):
    """Status of a task in the input (Pending, Running, Releasing) and after a cycle (all five)."""

    PENDING = "Pending"
    RUNNING = "Running"
    RELEASING = "Releasing"
    PIPELINED = "Pipelined"
    EVICTED = "Evicted"
    MOVED = "Moved"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: TaintEffect = DEFAULT_TAINT_EFFECT


@dataclass(frozen=True, slots=True)
class Toleration:
    """Omitted key with Exists matches every taint; omitted effect matches every effect."""

    key: str | None = None
    operator: TolerationOperator = "Equal"
    value: str = ""
    effect: TaintEffect | None = None

    def tolerates(self, taint: Taint) -> bool:
        if self.effect is not None and self.effect != taint.effect:
            return False
        if self.key is None:
            return self.operator == "Exists"
        if self.key != taint.key:
            return False
        return self.operator == "Exists" or self.value == taint.value


@dataclass(frozen=True, slots=True)
class LabelExpression:
    """``{key, operator, values}``; Gt/Lt compare one integer value (Kubernetes semantics)."""

    key: str
    operator: LabelOperator
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LabelSelector:
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelExpression, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        if any(labels.get(k) != v for k, v in self.match_labels):
            return False
        return all(expression_holds(e, labels) for e in self.match_expressions)


def expression_holds(expression: LabelExpression, labels: dict[str, str]) -> bool:
    """One match expression against one label set (the per-object form of the vector filter)."""
    present = expression.key in labels
    value = labels.get(expression.key)
    op = expression.operator
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op == "In":
        return present and value in expression.values
    if op == "NotIn":
        return not present or value not in expression.values
    if not present or value is None:
        return False
    try:
        number, bound = int(value), int(expression.values[0])
    except (ValueError, IndexError):
        return False
    return number > bound if op == "Gt" else number < bound


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: WhenUnsatisfiable = "DoNotSchedule"
    label_selector: LabelSelector = field(default_factory=LabelSelector)


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelExpression, ...] = ()


@dataclass(frozen=True, slots=True)
class VolumePool:
    name: str
    size_bytes: int
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class VolumeClaim:
    size_bytes: int
    match_labels: tuple[tuple[str, str], ...] = ()
    ephemeral: bool = False


@dataclass(frozen=True, slots=True)
class NodeRuntime:
    """What a node's image supports: component versions and features (the seeds' "AMI")."""

    versions: tuple[tuple[str, str], ...] = ()
    features: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuntimeRequirement:
    """Component -> PEP 440 specifier set, and features that must all be present."""

    versions: tuple[tuple[str, str], ...] = ()
    features: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ImageRef:
    name: str
    size_bytes: int = 0


@dataclass(frozen=True, slots=True)
class GpuMatch:
    """Which GPU devices a compose-style device request accepts (B9): the node's GPU driver must be
    ``driver`` (None: any), and its GPUs must have every one of ``capabilities``."""

    driver: str | None = None
    capabilities: tuple[str, ...] = ()


# Every GPU can do "gpu" (compose's capability for plain GPU access), declared or not.
GPU_CAPABILITY = "gpu"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    capacity: dict[str, int]
    allocatable: dict[str, int]  # what scheduling uses; defaults to capacity
    labels: dict[str, str] = field(default_factory=dict)
    state: NodeState = "Ready"
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    gpu_model: str | None = None
    gpu_driver: str | None = None  # driver of the node's GPUs (all of a node's GPUs are alike)
    gpu_capabilities: tuple[str, ...] = ()  # what they can do besides "gpu" (compute, utility, ...)
    license_tier: str | None = None  # None = the lowest tier
    runtime: NodeRuntime | None = None
    volumes: tuple[VolumePool, ...] = ()
    download_bps: int | None = None  # measured throughput; advisory only
    upload_bps: int | None = None
    images: frozenset[str] = frozenset()
    # resource -> factor >= 1 (cpu, memory): opted-in tasks may fill allocatable x factor (overcommit.py)
    overcommit: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Task:
    name: str
    job: str
    request: dict[str, int]
    status: TaskStatus = TaskStatus.PENDING
    node: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    node_selector: dict[str, str] = field(default_factory=dict)
    required_node_affinity: tuple[LabelExpression, ...] = ()  # every expression must hold
    tolerations: tuple[Toleration, ...] = ()
    preferred_node_affinity: tuple[PreferredTerm, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    hosts: tuple[str, ...] | None = None  # None: not pinned
    avoid_nodes: tuple[str, ...] = ()  # never placed on these (a drain's replacement avoids its node)
    ports: tuple[int, ...] = ()
    gpu_models: tuple[str, ...] | None = None  # None: any model
    # ``gpus: all``: every device of the node it lands on; its request then names no gpu count (a Running
    # one may: the count its devices showed)
    gpu_all: bool = False
    gpu_match: GpuMatch | None = None  # compose device request: driver and capabilities to match
    license_tier: str | None = None
    runtime: RuntimeRequirement | None = None
    volumes: tuple[VolumeClaim, ...] = ()
    previous_node: str | None = None
    image: ImageRef | None = None
    delayed_shutdown: bool = False
    bound_at_s: float | None = None  # its latest bind, POSIX seconds (the voluntary-move cooldown)
    overcommit: bool = False  # its job opted in: it sees allocatable x the node's overcommit factor
    # A placed task's GPU devices as the control plane stored them at its bind (``status.devices``): the
    # snapshot keeps them rather than deriving devices from input order, so the ids its process was given
    # stay the ones the scheduler counts. Empty: derived (the scenario format's rule).
    devices: tuple[int, ...] = ()

    @property
    def omits_cpu(self) -> bool:
        return CPU not in self.request

    @property
    def omits_memory(self) -> bool:
        return MEMORY not in self.request


@dataclass(frozen=True, slots=True)
class Job:
    """A group of tasks scheduled together; a gang when min_available > 1. Age = list order."""

    name: str
    tasks: tuple[Task, ...]
    queue: str = DEFAULT_QUEUE
    priority: int = DEFAULT_JOB_PRIORITY
    preemptible: bool = True
    min_available: int = 1
    stale_for_s: float | None = None
    profile: str | None = None  # placement profile for this job's tasks; None = the config's profile


@dataclass(frozen=True, slots=True)
class Queue:
    """A node of the queue tree. Resources absent from deserved/limit are not governed by them."""

    name: str
    parent: str | None = None
    priority: int = 0
    deserved: dict[str, int] = field(default_factory=dict)
    limit: dict[str, int] = field(default_factory=dict)
    over_quota_weight: float = 1.0


Strategy = Literal["binpack", "spread", "balanced"]
Profile = Literal[
    "default", "lablet", "first_fit", "least_instances", "service_spread", "service_pack", "gpu_pack"
]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)
PROFILES: tuple[Profile, ...] = get_args(Profile)


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    actions: tuple[str, ...] = DEFAULT_ACTIONS
    strategy: Strategy = "binpack"
    profile: Profile = "default"
    staleness_grace_period_s: float = DEFAULT_STALENESS_GRACE_S
    max_eviction_ratio: float = DEFAULT_MAX_EVICTION_RATIO
    license_tiers: tuple[str, ...] = DEFAULT_LICENSE_TIERS
    # At most this many running tasks moved by consolidate in one cycle (KAI's default is 16 jobs).
    max_consolidation_moves: int = 16
    # After the first job that gets nothing, an action tries at most this many more (None: every one;
    # 0: strict first come, first served). actions/backfill_depth.py
    backfill_depth: int | None = None
    # The workload's GPU shapes for the fragmentation score (core/gpu_shapes.py): learned by the control
    # plane; None = the GPU tasks of the cycle's own cluster.
    gpu_shapes: GpuShapes | None = None
    # The voluntary-move ledger (core/voluntary_moves.py) the control plane hands consolidation; None in
    # a scenario file (no pressure, no history).
    voluntary_moves: VoluntaryMoves | None = None
    # The searches resting after failed ones (core/search_backoff.py), handed by the control plane; None in
    # a scenario file (no history) and whenever no backoff is set.
    resting_searches: RestingSearches | None = None


@dataclass(frozen=True, slots=True)
class Cluster:
    """One frozen cluster: what a cycle schedules. Lists are in age order (oldest first)."""

    nodes: tuple[Node, ...]
    jobs: tuple[Job, ...]
    queues: tuple[Queue, ...] = ()
    config: SchedulerConfig = field(default_factory=SchedulerConfig)
