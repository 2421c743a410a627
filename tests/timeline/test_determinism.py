"""The same timeline file gives byte-identical JSON, run after run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadmaster.scenario.schema import load_document
from loadmaster.timeline.harness import run_timeline
from loadmaster.timeline.schema import build_timeline

TIMELINES = Path(__file__).parent.parent / "timelines"


@pytest.mark.parametrize(
    "name",
    [
        "control_plane/leader-failover-moves-nothing",
        "workloads/global-replicas-follow-ready-nodes",
        "nodes/node_loss/host-down-moves-single-replica-services-and-job-tasks",
        "nodes/node_loss/leader-failover-keeps-the-node-loss-clock",
    ],
)
def test_a_timeline_gives_byte_identical_output_every_run(name: str) -> None:
    timeline = build_timeline(load_document(TIMELINES / f"{name}.yaml"))
    first = json.dumps(run_timeline(timeline), indent=1)
    second = json.dumps(run_timeline(timeline), indent=1)
    assert first == second
