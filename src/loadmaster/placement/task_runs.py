"""A job's tasks as runs of identical placement fields, remembered by the ``Job`` object across cycles.

An engine is made per snapshot, so the equivalence class of every task it is asked about used to be
worked out again each cycle (``class_key``: a dozen fields, nested tuples). A backlog of Pending gangs
is asked about every cycle, by every action: NASA x3 spent a fifth of its cycles there. But a job's tasks
do not change while the job is the same object (``Job`` and ``Task`` are frozen), and a replay and the
control plane keep the very same objects for the jobs that did not change.

So, per ``Job`` object, its tasks are cut into runs of consecutive tasks whose fields read by
``class_key`` are equal (``PLACEMENT_FIELDS``, compared as they are: equal fields give equal keys, so a
run's tasks share one class); an engine then works out a key once per run it is asked about, not once
per task, and a job of one run is of one class (``PlacementEngine.one_class_job``).

Kept by identity (``id(job)``, with the job held so that the id cannot be reused while it is kept), in
two generations: once the newer holds ``GENERATION_TASKS`` tasks it becomes the older and a new one
starts; a job found in the older is moved to the newer. A backlog asked about every cycle stays; the old
versions of changed jobs and the jobs gone are dropped within two generations (holding every version
up to a flat bound tripled a NASA x3 replay's memory). It is a cache of a pure function of the object,
so what it holds never changes a result.
"""

from __future__ import annotations

from itertools import accumulate, groupby
from operator import attrgetter

from loadmaster.core.model import Job

# Every Task field ``equivalence.class_key`` reads (labels only matter with a spread constraint: equal
# labels are stricter than needed, which only splits a run).
PLACEMENT_FIELDS = (
    "request",
    "tolerations",
    "node_selector",
    "required_node_affinity",
    "hosts",
    "avoid_nodes",
    "gpu_models",
    "gpu_all",
    "gpu_match",
    "license_tier",
    "runtime",
    "ports",
    "volumes",
    "topology_spread_constraints",
    "labels",
    "preferred_node_affinity",
    "image",
    "previous_node",
    "delayed_shutdown",
    "overcommit",
)
_fields_of = attrgetter(*PLACEMENT_FIELDS)
GENERATION_TASKS = 100_000

Runs = tuple[int, ...]  # each run's end (exclusive), as offsets into the job's tasks, ascending


class _Generations:
    def __init__(self) -> None:
        self.newer: dict[int, tuple[Job, Runs]] = {}
        self.older: dict[int, tuple[Job, Runs]] = {}
        self.held = 0  # tasks of the jobs in the newer generation

    def get(self, job: Job) -> Runs | None:
        key = id(job)
        found = self.newer.get(key)
        if found is None:
            found = self.older.pop(key, None)
            if found is None or found[0] is not job:
                return None
            self.put(job, found[1])
        return found[1] if found[0] is job else None

    def put(self, job: Job, runs: Runs) -> None:
        if self.held + len(job.tasks) > GENERATION_TASKS and self.newer:
            self.older, self.newer, self.held = self.newer, {}, 0
        self.newer[id(job)] = (job, runs)
        self.held += len(job.tasks)


_memo = _Generations()


def runs_of(job: Job) -> Runs:
    """Where each run of tasks with equal placement fields ends (the last end is ``len(job.tasks)``)."""
    found = _memo.get(job)
    if found is not None:
        return found
    # each group counted by a list made in C (a generator counting it step by step was most of the cost
    # for an elastic job of thousands of instances, one run, changed every cycle)
    runs = tuple(accumulate(len(list(group)) for _, group in groupby(map(_fields_of, job.tasks))))
    _memo.put(job, runs)
    return runs
