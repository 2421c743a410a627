"""A timeline file as ``loadmaster replay``'s TRACE: the timeline harness runs once per config and its
replicas, capacity and cycles become the same summary and report as a trace's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loadmaster.core.model import SchedulerConfig
from loadmaster.core.search_backoff import SearchBackoff
from loadmaster.replay.run import Window, replay_all
from loadmaster.replay.run_config import RunConfig
from loadmaster.replay.timeline_replay import TimelineTrace, read_timeline_file, timeline_for
from loadmaster.replay.traces import load_trace
from loadmaster.runtime.control_plane import ControlPlane
from loadmaster.timeline.config import TimelineConfig
from loadmaster.timeline.harness import Harness, settings_of
from loadmaster.timeline.virtual_loop import VirtualTimeLoop

# n1 holds two of the three 1-core replicas; the third waits until n2 joins at 60 s.
TIMELINE = """
name: a-node-joins-for-the-third-replica
config: {node_loss_policy: single_replica}
nodes:
  - {name: n1, capacity: {cpu: 2, memory: 4Gi}}
resources:
  - api_version: loadmaster/v1
    kind: Deployment
    metadata: {name: web}
    spec:
      services: [{name: api, image: "web:1", replicas: 3, resources: {cpu: 1, memory: 1Gi}}]
timeline:
  - at: 60s
    do: {add_node: {name: n2, capacity: {cpu: 2, memory: 4Gi}}}
  - at: 120s
    expect:
      services: {web/api: {running: 3}}
"""


@pytest.fixture
def timeline_file(tmp_path: Path) -> Path:
    path = tmp_path / "joins.yaml"
    path.write_text(TIMELINE)
    return path


def test_a_timeline_file_loads_as_a_timeline_trace(timeline_file: Path, tmp_path: Path) -> None:
    trace = load_trace(str(timeline_file), tmp_path)
    assert isinstance(trace, TimelineTrace)
    assert trace.timeline.name == "a-node-joins-for-the-third-replica"
    assert trace.end_s == 120.0


def test_each_replica_is_a_job_that_waits_until_a_node_has_room(timeline_file: Path, tmp_path: Path) -> None:
    trace = read_timeline_file(timeline_file)
    configs = [RunConfig(), RunConfig(name="packed", scheduler=SchedulerConfig(profile="gpu_pack"))]
    summary = replay_all(trace, configs, tmp_path / "out")
    assert [c["name"] for c in summary["configs"]] == ["default", "packed"]
    for figures in summary["configs"]:
        assert (figures["jobs"], figures["placed"], figures["never_placed"]) == (3, 3, 0)
        assert figures["wait_s"]["p50"] == 0.0
        assert figures["wait_s"]["p99"] == 60.0  # the third replica, bound when n2 registered
        # 2 of 2 cores for 60 s, then 3 of 4 cores for 60 s: (2 * 60 + 3 * 60) / (4 * 120)
        assert figures["utilisation"]["cpu"] == pytest.approx(0.625, abs=0.01)
        assert figures["cycles"] >= 2
    assert json.loads((tmp_path / "out" / "summary.json").read_text()) == summary
    assert summary["trace"] == str(timeline_file)
    assert (tmp_path / "out" / "report.html").read_text().count('class="plot"') == 4  # no GPU: no fragments


def test_the_same_timeline_and_config_give_the_same_figures(timeline_file: Path, tmp_path: Path) -> None:
    trace = read_timeline_file(timeline_file)

    def figures(out: str) -> list[dict[str, object]]:
        configs = replay_all(trace, [RunConfig()], tmp_path / out)["configs"]
        return [{k: v for k, v in c.items() if k not in ("scheduler_cpu_s", "wall_s")} for c in configs]

    assert figures("first") == figures("second")


def test_a_config_with_fewer_nodes_leaves_a_replica_without_room_unplaced(tmp_path: Path) -> None:
    two_nodes = TIMELINE.replace("nodes:\n", "nodes:\n  - {name: n0, capacity: {cpu: 2, memory: 4Gi}}\n", 1)
    (tmp_path / "two.yaml").write_text(two_nodes.replace("at: 60s", "at: 600s").replace("120s", "660s"))
    trace = read_timeline_file(tmp_path / "two.yaml")
    assert [node.name for node in timeline_for(trace, RunConfig(node_count=1)).nodes] == ["n0"]
    whole, first = replay_all(trace, [RunConfig(), RunConfig(name="one", node_count=1)], tmp_path / "out")[
        "configs"
    ]
    assert whole["wait_s"]["p99"] == 0.0  # n0 and n1 hold all three at once
    assert first["wait_s"]["p99"] == 600.0  # on n0 alone the third waits for n2


def test_a_config_node_loss_policy_replaces_the_timeline_s_own_and_none_keeps_it(timeline_file: Path) -> None:
    trace = read_timeline_file(timeline_file)
    assert timeline_for(trace, RunConfig(node_loss_policy="none")).config.node_loss_policy == "none"
    assert timeline_for(trace, RunConfig()).config.node_loss_policy == "single_replica"


def test_a_window_or_a_config_with_queues_is_refused_for_a_timeline(
    timeline_file: Path, tmp_path: Path
) -> None:
    trace = read_timeline_file(timeline_file)
    with pytest.raises(ValueError, match="--window"):
        replay_all(trace, [RunConfig()], tmp_path / "out", Window(0.0, 30.0))
    done = subprocess.run(
        [sys.executable, "-m", "loadmaster", "replay", str(timeline_file), "--out", "out",
         "--config", "q.yaml"],
        cwd=_with_queue_config(tmp_path), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "queues" in done.stderr
    assert not (tmp_path / "out").exists()


def test_replay_of_a_timeline_file_writes_the_summary_and_the_report(
    timeline_file: Path, tmp_path: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "loadmaster", "replay", str(timeline_file), "--out", "out"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "default: 3/3 placed" in done.stdout
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["configs"][0]["placed"] == 3
    assert (tmp_path / "out" / "report.html").is_file()


def _with_queue_config(folder: Path) -> Path:
    (folder / "q.yaml").write_text("name: teams\nqueues: [{name: team-a}]\n")
    return folder


def test_a_config_s_max_moves_per_cycle_caps_consolidation_as_the_server_s_flag_does() -> None:
    assert (
        settings_of(TimelineConfig(), None).scheduler_config.max_consolidation_moves == 1
    )  # the server's default
    assert settings_of(TimelineConfig(), None, 16).scheduler_config.max_consolidation_moves == 16
    few = SchedulerConfig(max_consolidation_moves=2)
    assert settings_of(TimelineConfig(), few, 16).scheduler_config.max_consolidation_moves == 2


def test_a_config_s_search_backoff_reaches_the_timeline_s_control_plane() -> None:
    backoff = SearchBackoff(consolidate_min_s=30, consolidate_max_s=300)
    assert settings_of(TimelineConfig(), None).search_backoff == SearchBackoff()  # off, as the server's
    assert settings_of(TimelineConfig(search_backoff=backoff), None).search_backoff == backoff
    path = (
        Path(__file__).parents[1] / "timelines" / "rebalance" / "no-samples-means-no-rebalancer-events.yaml"
    )
    trace = read_timeline_file(path)
    # a config that sets none keeps the timeline's own (off here); one that sets it wins
    assert timeline_for(trace, RunConfig()).config.search_backoff == SearchBackoff()
    timeline = timeline_for(trace, RunConfig(search_backoff=backoff))
    assert timeline.config.search_backoff == backoff
    leaders: list[ControlPlane] = []
    harness = Harness(timeline, on_leader=leaders.append)
    loop = VirtualTimeLoop()
    try:
        loop.run_until_complete(harness.run())
    finally:
        loop.close()
    assert [plane.settings.search_backoff for plane in leaders] == [backoff]
