"""Random timelines of applies, deletes and node ups and downs (hypothesis): at every expect the store never
over-commits a node or holds a replica on two nodes, and once every node is back and the control plane has
had time to react, every replica that fits is placed."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.resources import parse_quantity
from loadmaster.timeline.harness import Harness
from loadmaster.timeline.schema import build_timeline
from loadmaster.timeline.virtual_loop import VirtualTimeLoop

NODES = ["n1", "n2", "n3"]
NODE_CPU_MILLI = 4000
REPLICA_CPU = "1"
# Long enough after the last step for NotReady (90 s), the 30 s tick and the retries to settle.
SETTLE_S = 400


def deployment(name: str, replicas: int) -> dict[str, Any]:
    service = {"name": "api", "image": "app:1", "replicas": replicas, "resources": {"cpu": REPLICA_CPU}}
    return {
        "api_version": "loadmaster/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {"services": [service]},
    }


step = st.one_of(
    st.tuples(st.just("apply"), st.sampled_from(["a", "b", "c"]), st.integers(0, 5)),
    st.tuples(st.just("delete"), st.sampled_from(["a", "b", "c"]), st.just(0)),
    st.tuples(st.sampled_from(["node_down", "node_up", "agent_down"]), st.sampled_from(NODES), st.just(0)),
)


def document(steps: list[tuple[str, str, int]]) -> dict[str, Any]:
    timeline: list[dict[str, Any]] = []
    at = 0
    applied: set[str] = set()
    for index, (action, target, count) in enumerate(steps):
        at += 7 + 13 * (index % 5)
        if action == "apply":
            applied.add(target)
            timeline.append({"at": at, "do": {"apply": [deployment(target, count)]}})
        elif action == "delete":
            timeline.append({"at": at, "do": {"delete": {"kind": "Deployment", "name": target}}})
        else:
            timeline.append({"at": at, "do": {action: target}})
        timeline.append({"at": at + 1, "expect": {}})
    for node in NODES:
        timeline.append({"at": at + 2, "do": {"node_up": node}})
    timeline.append({"at": at + SETTLE_S, "expect": {}})
    nodes = [{"name": n, "capacity": {"cpu": NODE_CPU_MILLI // 1000, "memory": "8Gi"}} for n in NODES]
    return {"name": "random-timeline", "nodes": nodes, "timeline": timeline}


def check_no_over_commit_and_one_node_each(observed: dict[str, Any]) -> None:
    used: dict[str, int] = {}
    for name, replica in observed["replicas"].items():
        if replica["phase"] in ("Scheduled", "Running", "Terminating") and replica["node"] is not None:
            used[replica["node"]] = used.get(replica["node"], 0) + parse_quantity("cpu", REPLICA_CPU)
        assert replica["phase"] not in ("Scheduled", "Running") or replica["node"] in NODES, name
    for node, milli in used.items():
        assert milli <= NODE_CPU_MILLI, f"{node} over-committed: {milli}m of {NODE_CPU_MILLI}m"


@settings(max_examples=25)
@given(st.lists(step, min_size=1, max_size=8))
def test_random_timelines_keep_nodes_within_capacity_and_end_with_every_fitting_replica_placed(
    steps: list[tuple[str, str, int]],
) -> None:
    harness = Harness(build_timeline(document(steps)))
    loop = VirtualTimeLoop()
    try:
        output = loop.run_until_complete(harness.run())
    finally:
        loop.close()
    assert output["errors"] == [] or all("not found" in e["error"] for e in output["errors"])
    for expect_step in output["steps"]:
        check_no_over_commit_and_one_node_each(expect_step["observed"])
    final = output["steps"][-1]["observed"]["replicas"]
    live = [r for r in final.values() if r["phase"] not in ("Terminated", "Terminating")]
    capacity_replicas = len(NODES) * NODE_CPU_MILLI // parse_quantity("cpu", REPLICA_CPU)
    placed = [r for r in live if r["phase"] == "Running"]
    assert len(placed) == min(len(live), capacity_replicas), final
