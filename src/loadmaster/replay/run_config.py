"""A replay run's settings (``--config FILE``): its name and what it changes of the scheduler.

::

    name: gpu-pack            # the run's name in the summary and the report (default: the file's stem)
    profile: gpu_pack         # any key of a scenario's ``config:`` may be given here or under ``config:``
    actions: [allocate, reclaim, preempt, stale_gang_eviction]
    queues: [{name: team-a, deserved: {gpu: 8}}]   # the scenario format's queues
    backfill_depth: 100       # try at most 100 jobs past the first that gets nothing (0: strict FCFS)
    nodes: 800                # replay on the trace's first 800 nodes
    node_loss_policy: all     # a timeline's node-loss policy (default: the timeline's own); traces carry
                              # no node failures, so there it is only recorded
    max_moves_per_cycle: 1    # the control plane's cap on consolidation's moves per cycle (the server's
                              # --max-moves-per-cycle, default 1): a replay is the control plane over
                              # time, so it caps max_consolidation_moves as the server does
    search_backoff:           # the server's failed-search backoff (core/search_backoff.py; off by default):
      consolidate_min: 30s    # a job whose consolidate search failed k times in a row is not searched
      consolidate_max: 5m     # again for min(30 s * 2^(k-1), 5 min); reclaim_* and preempt_* likewise

Every key is checked as the scenario format checks it; an error names the file and the key's path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadmaster.core.model import Queue, SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.core.voluntary_moves import DEFAULT_MAX_MOVES_PER_CYCLE, moves_budget
from loadmaster.runtime.config_file import read_search_backoff
from loadmaster.scenario.config import as_config
from loadmaster.scenario.errors import ScenarioError
from loadmaster.scenario.fields import as_choice, as_int, as_mapping, as_name, check_keys
from loadmaster.scenario.queues import as_queues
from loadmaster.scenario.schema import load_document

CONFIG_KEYS = frozenset(
    {
        "strategy",
        "profile",
        "actions",
        "staleness_grace_period",
        "max_eviction_ratio",
        "license_tiers",
        "max_consolidation_moves",
        "backfill_depth",
    }
)
NODE_LOSS_POLICIES = ("single_replica", "all", "none")
DEFAULT_NAME = "default"


@dataclass(frozen=True, slots=True)
class RunConfig:
    name: str = DEFAULT_NAME
    scheduler: SchedulerConfig = field(default_factory=SchedulerConfig)
    queues: tuple[Queue, ...] = ()
    node_count: int | None = None  # None: every node of the trace
    node_loss_policy: str | None = None  # None: the trace's own (a timeline's config)
    max_moves_per_cycle: int = DEFAULT_MAX_MOVES_PER_CYCLE  # the control plane's cap (seed conflict 5)
    search_backoff: SearchBackoff = field(default_factory=SearchBackoff)  # the control plane's (off)

    @property
    def cycle_config(self) -> SchedulerConfig:
        """What each cycle of a trace replay runs with: the scheduler's settings, consolidation's moves
        capped as the control plane caps them (``runtime/wiring.py``; a timeline replay runs the control
        plane itself)."""
        moves = moves_budget(self.scheduler.max_consolidation_moves, self.max_moves_per_cycle)
        return dataclasses.replace(self.scheduler, max_consolidation_moves=moves)

    def as_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "profile": self.scheduler.profile,
            "actions": list(self.scheduler.actions),
            "queues": [queue.name for queue in self.queues],
            "nodes": self.node_count,
            "node_loss_policy": self.node_loss_policy,
            "backfill_depth": self.scheduler.backfill_depth,
            "max_moves_per_cycle": self.max_moves_per_cycle,
            **({"search_backoff": _backoff_json(self.search_backoff)} if self.search_backoff.enabled else {}),
        }


def run_config_of(document: object, default_name: str) -> RunConfig:
    """A run's settings from a parsed config document (ScenarioError names the key's path)."""
    mapping = as_mapping(document if document is not None else {}, "")
    check_keys(
        mapping,
        frozenset(
            {"name", "config", "queues", "nodes", "node_loss_policy", "max_moves_per_cycle", "search_backoff"}
            | CONFIG_KEYS
        ),
        "",
    )
    scheduler_keys = dict(as_mapping(mapping.get("config", {}), "config"))
    for key in CONFIG_KEYS & mapping.keys():
        scheduler_keys[key] = mapping[key]
    return RunConfig(
        name=as_name(mapping["name"], "name") if "name" in mapping else default_name,
        scheduler=as_config(scheduler_keys, "config"),
        queues=as_queues(mapping["queues"], "queues") if "queues" in mapping else (),
        node_count=as_int(mapping["nodes"], "nodes", minimum=1) if "nodes" in mapping else None,
        node_loss_policy=(
            as_choice(mapping["node_loss_policy"], "node_loss_policy", NODE_LOSS_POLICIES)
            if "node_loss_policy" in mapping
            else None
        ),
        max_moves_per_cycle=(
            as_int(mapping["max_moves_per_cycle"], "max_moves_per_cycle", minimum=0)
            if "max_moves_per_cycle" in mapping
            else DEFAULT_MAX_MOVES_PER_CYCLE
        ),
        search_backoff=(
            read_search_backoff(mapping["search_backoff"], "search_backoff")
            if "search_backoff" in mapping
            else SearchBackoff()
        ),
    )


def _backoff_json(backoff: SearchBackoff) -> dict[str, float]:
    """The bounds set, by file key (``consolidate_min``: seconds)."""
    return {
        f.name.removesuffix("_s"): getattr(backoff, f.name)
        for f in dataclasses.fields(backoff)
        if getattr(backoff, f.name)
    }


def load_run_config(path: Path) -> RunConfig:
    """A config file's settings; ScenarioError naming the file and the key's path."""
    try:
        return run_config_of(load_document(path), path.stem)
    except ScenarioError as error:
        raise ScenarioError(f"{path}: {error.path}", error.message) from None
