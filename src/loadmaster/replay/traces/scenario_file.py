"""A scenario file as a trace: its nodes, and its jobs arriving at once (in the file's order) and
running to the end. Tasks the file has Running stay where it put them until a cycle moves them."""

from __future__ import annotations

from pathlib import Path

from loadmaster.replay.trace import Arrivals, Trace, TraceJob
from loadmaster.scenario.schema import load_document, load_scenario


def is_timeline_file(path: Path) -> bool:
    document = load_document(path)
    return isinstance(document, dict) and "timeline" in document


def read_scenario_file(path: Path) -> Trace:
    scenario = load_scenario(path)
    jobs = Arrivals.of(TraceJob(job, 0.0, None) for job in scenario.cluster.jobs)
    return Trace(str(path), scenario.cluster.nodes, jobs, scenario.cluster.queues)
