"""The placement engine's two extension points, and how plugins of each combine.

* **Filter** (hard): returns, for the nodes in ``cols``, a boolean mask of nodes that pass. Filters
  combine by AND. Each has a ``Rejection`` category (the explanations' summary keys) and explains
  one node's failure in words. ``dynamic`` filters read the working state (usage, ports, ...) and
  are re-evaluated after every placement; static ones are cached per equivalence class.
* **Scorer** (soft): returns an integer score 0..100 for the nodes in ``cols``. Scorers combine by a
  weighted sum set by the profile. ``normalized`` scorers divide by a maximum over all feasible
  nodes, so a placement elsewhere can change every node's score: the engine never updates them
  incrementally. A ``lexicographic`` scorer returns an order key instead and stands alone in its profile.

Optional, for the engine's fill path (placing a run of identical tasks in one vector pass): a dynamic
filter may say how many copies of the task fit on each node placed one after another
(``copies_that_fit``), a local scorer what it would score once ``copies`` more were placed there
(``score_copies``). Plugins without them simply keep the run on the one-task-at-a-time path.

``applies(task)`` lets a plugin opt out for tasks it cannot affect (a task without ports skips the
ports filter), which keeps the hot path to the few plugins that matter for the task at hand.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from loadmaster.placement.context import TaskContext

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int64]
Cols = slice | npt.NDArray[np.int64]  # which nodes to evaluate: all (slice) or an index array

ALL: slice = slice(None)


class Rejection(StrEnum):
    """Why a filter turns a node away: the explanations' summary keys, as the JSON output spells them.

    Declared in evaluation order: a node failing several filters is counted under the first of them.
    """

    STATUS = "status"
    UNSCHEDULABLE = "unschedulable"
    CAPACITY = "capacity"
    SELECTOR = "selector"
    TAINT = "taint"
    HOSTS = "hosts"
    PORTS = "ports"
    GPU_MODEL = "gpu_model"
    GPU = "gpu"  # a compose-style GPU request the node's GPUs (or lack of them) cannot serve
    LICENSE = "license"
    RUNTIME = "runtime"
    VOLUMES = "volumes"
    TOPOLOGY = "topology"


class Filter(Protocol):
    name: str
    category: Rejection
    dynamic: bool

    def applies(self, ctx: TaskContext) -> bool: ...

    def mask(self, ctx: TaskContext, cols: Cols) -> BoolArray: ...

    def explain(self, ctx: TaskContext, n: int) -> str: ...


class Scorer(Protocol):
    """Scorers subclass this explicitly, so that ``lexicographic`` has its default."""

    name: str
    normalized: bool
    # An order scorer: its value is a sort key (any integer, highest wins), not a 0..100 score, so it
    # cannot be weighed against others and must be its profile's only scorer.
    lexicographic: bool = False

    def applies(self, ctx: TaskContext) -> bool: ...

    def score(self, ctx: TaskContext, cols: Cols, feasible: BoolArray) -> IntArray: ...


@runtime_checkable
class CopiesFilter(Protocol):
    def copies_that_fit(self, ctx: TaskContext, cols: IntArray) -> IntArray: ...


@runtime_checkable
class CopiesScorer(Protocol):
    def score_copies(self, ctx: TaskContext, cols: IntArray, copies: IntArray) -> IntArray: ...


@runtime_checkable
class RunBoundScorer(Protocol):
    """A scorer whose ``applies`` depends on the whole cluster's state, which each placed task changes:
    it says how many identical tasks in a row, from ``ctx``'s on, see the same answer, so that a run
    placed together (``PlacementEngine.choose_many``) is split where the answer changes, as placing the
    tasks one at a time would see it."""

    def steady_for(self, ctx: TaskContext, count: int) -> int: ...


@cache  # a runtime protocol check costs ~10 us, and plugin classes never change: one per class
def implements(plugin_type: type, protocol: type) -> bool:
    """Whether a plugin class has the optional methods of ``protocol`` (CopiesFilter, CopiesScorer)."""
    return issubclass(plugin_type, protocol)
