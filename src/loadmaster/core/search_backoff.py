"""The failed-search backoff: a job whose victim search failed rests from that action for a while.

An evicting action (consolidate, reclaim, preempt) looks for a victim set for each waiting job, every
cycle. On a cluster at capacity most of those searches fail, and fail again the next cycle: with a
backlog of hundreds of jobs they are most of a cycle's time. KAI's scheduler offers a backoff for this
(its ``minFailedSearchBackoff`` / ``maxFailedSearchBackoff``, per action, off by default); loadmaster's
is the same rule, kept by the control plane across cycles:

* after the k-th failed search in a row of job J in action A, J is not searched by A until

      rest_until = now + min(min_s * 2 ** (k - 1), max_s)

  (the action gives its tasks that reason, and goes on to the next job as if J were not waiting);
* a search of J by A that finds a victim set ends J's streak;
* a streak is forgotten once ``max_s`` has passed after its rest ended without a failed search (the job
  was placed another way, or left).

Off by default (both bounds 0 for every action): a cycle's plan then depends only on the cluster, as
the scenario format says. A scenario file has no history, so it never rests a search; the server and
both replays (trace and timeline) keep one ``SearchBackoffLedger`` and hand each cycle its view
(``SchedulerConfig.resting_searches``). Only searches count: a job whose turn ends before one (no
candidate victims, more than the cluster's free room) neither starts nor ends a streak.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loadmaster.core.model import Cluster

SEARCHING_ACTIONS = ("consolidate", "reclaim", "preempt")


@dataclass(frozen=True, slots=True)
class SearchBackoff:
    """The bounds, per evicting action, in seconds: 0 for the minimum turns the action's backoff off;
    the maximum is at least the minimum (a smaller one, 0 by default, means the minimum: KAI's rule).
    Config files name them without the ``_s`` (``search_backoff: {consolidate_min: 30s,
    consolidate_max: 5m}``)."""

    consolidate_min_s: float = 0.0
    consolidate_max_s: float = 0.0
    reclaim_min_s: float = 0.0
    reclaim_max_s: float = 0.0
    preempt_min_s: float = 0.0
    preempt_max_s: float = 0.0

    def bounds(self, action: str) -> tuple[float, float] | None:
        """(min_s, max_s) of ``action``'s backoff, or None when it is off."""
        if action not in SEARCHING_ACTIONS:
            return None
        least: float = getattr(self, f"{action}_min_s")
        most: float = getattr(self, f"{action}_max_s")
        return (least, max(least, most)) if least > 0 else None

    @property
    def enabled(self) -> bool:
        return any(self.bounds(action) is not None for action in SEARCHING_ACTIONS)

    def problems(self) -> list[tuple[str, str]]:
        """What is wrong with the settings: (the file key, what) ([] when nothing is)."""
        return [
            (f.name.removesuffix("_s"), f"must be >= 0 seconds, got {getattr(self, f.name)}")
            for f in fields(self)
            if not getattr(self, f.name) >= 0  # also NaN
        ]


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    """A cycle's search of a job's victims in one action: ``found`` a victim set, or not."""

    action: str
    job: str
    found: bool


@dataclass(frozen=True, slots=True)
class Rest:
    until_s: float  # on the cycle's clock (``now_s``)
    failures: int  # failed searches in a row


@dataclass(frozen=True, slots=True)
class RestingSearches:
    """What the control plane hands a cycle: per action, the jobs whose search rests now."""

    jobs: Mapping[str, Mapping[str, Rest]] = field(default_factory=dict)  # action -> job name -> rest

    def of(self, action: str) -> Mapping[str, Rest]:
        return self.jobs.get(action, {})


class SearchBackoffLedger:
    """Each job's streak of failed searches per action, across cycles (one per control plane term, and
    one per replay run)."""

    def __init__(self, settings: SearchBackoff) -> None:
        self.settings = settings
        self._streaks: dict[str, dict[str, Rest]] = {}  # action -> job -> its rest (ended or not)

    def record(self, now_s: float, outcomes: Iterable[SearchOutcome]) -> None:
        """The cycle at ``now_s`` searched these (in its order: a job found victims, then failed, rests)."""
        for outcome in outcomes:
            bounds = self.settings.bounds(outcome.action)
            if bounds is None:
                continue
            streaks = self._streaks.setdefault(outcome.action, {})
            if outcome.found:
                streaks.pop(outcome.job, None)
                continue
            previous = streaks.get(outcome.job)
            failures = 1 if previous is None else previous.failures + 1
            least, most = bounds
            # past 64 doublings even a 1 ms minimum is 584 million years: the maximum (2.0 ** 1024 overflows)
            rest = most if failures > 64 else min(least * 2.0 ** (failures - 1), most)
            streaks[outcome.job] = Rest(now_s + rest, failures)

    def clear(self) -> None:
        """Forget every streak (the admin's "retry now": every job is searched again)."""
        self._streaks.clear()

    def resting_counts(self, now_s: float) -> dict[str, int]:
        """How many jobs' searches rest at ``now_s``, per action (the actions with none left out)."""
        view = self.view(now_s)
        return {action: len(jobs) for action, jobs in sorted(view.jobs.items())} if view is not None else {}

    def next_rest_end(self, now_s: float) -> float | None:
        """When the first search resting at ``now_s`` may run again (None: none rests): a replay's
        next cycle, as the server's safety tick would come then."""
        ends = [rest.until_s for streaks in self._streaks.values() for rest in streaks.values()]
        return min((end for end in ends if end > now_s), default=None)

    def cluster_at(self, cluster: Cluster, now_s: float) -> Cluster:
        """``cluster`` as a cycle at ``now_s`` takes it: its config with the searches resting then."""
        config = dataclasses.replace(cluster.config, resting_searches=self.view(now_s))
        return dataclasses.replace(cluster, config=config)

    def view(self, now_s: float) -> RestingSearches | None:
        """The searches resting at ``now_s`` (None when none is); forgets the streaks past their memory."""
        resting: dict[str, dict[str, Rest]] = {}
        for action, streaks in self._streaks.items():
            bounds = self.settings.bounds(action)
            memory = bounds[1] if bounds is not None else 0.0
            for job in [job for job, rest in streaks.items() if rest.until_s + memory <= now_s]:
                del streaks[job]
            now_resting = {job: rest for job, rest in streaks.items() if rest.until_s > now_s}
            if now_resting:
                resting[action] = now_resting
        return RestingSearches(resting) if resting else None
