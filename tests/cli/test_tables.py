"""``get``'s tables: the columns an operator reads first, usage summed from replicas, ages."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loadmaster.cli.views.age import age, format_seconds
from loadmaster.cli.views.columns import TableContext, build_table
from loadmaster.cli.views.kind_columns import DEPLOYMENT_COLUMNS, NODE_COLUMNS, REPLICA_COLUMNS
from loadmaster.cli.views.usage import HOLDING_PHASES, used_by_node
from loadmaster.manifests import ReplicaPhase
from tests.cli.views import node, render, replica, rows

NOW = datetime(2026, 11, 21, 11, 0, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(59.9, "59s", id="seconds-truncate"),
        pytest.param(125, "2m5s", id="minutes-keep-seconds-below-ten-minutes"),
        pytest.param(600, "10m", id="ten-minutes-drop-seconds"),
        pytest.param(3 * 3600 + 120, "3h2m", id="hours-keep-minutes-below-ten-hours"),
        pytest.param(26 * 3600, "1d2h", id="days-keep-hours"),
        pytest.param(40 * 86400, "40d", id="many-days"),
        pytest.param(-5, "0s", id="clock-skew-never-shows-negative"),
    ],
)
def test_durations_read_like_kubectl_ages(seconds: float, shown: str) -> None:
    assert format_seconds(seconds) == shown


def test_an_age_without_a_readable_timestamp_is_a_dash() -> None:
    assert age(None, NOW) == "-"
    assert age("yesterday", NOW) == "-"
    assert age("2026-11-21T10:59:00Z", NOW) == "1m"


def test_the_nodes_table_shows_state_cordon_and_used_of_allocatable() -> None:
    nodes = [
        node("n1", {"cpu": 8, "memory": "32Gi", "gpu": 2}),
        node("n2", {"cpu": 4, "memory": "16Gi"}, state="NotReady", unschedulable=True),
    ]
    replicas = [
        replica("shop-api-0", "Running", "n1", {"cpu": "500m", "memory": "1Gi"}),
        replica("shop-api-1", "Scheduled", "n1", {"cpu": "1", "memory": "1Gi"}, gpus=1),
        replica("shop-api-2", "Pending", None, {"cpu": "4"}),
        replica("shop-api-3", "Terminated", "n2", {"cpu": "4"}),
    ]
    context = TableContext(now=NOW, replicas=replicas, used=used_by_node(replicas))
    table = rows(render(build_table(NODE_COLUMNS, nodes, context, wide=False)))
    assert table == [
        ["NAME", "STATE", "CORDONED", "CPU", "MEMORY", "GPU", "REPLICAS", "AGE"],
        ["n1", "Ready", "no", "1.5/8", "2Gi/32Gi", "1/2", "2", "1h"],
        ["n2", "NotReady", "yes", "0/4", "0/16Gi", "-", "0", "1h"],
    ]


def test_the_wide_nodes_table_adds_heartbeat_taints_and_labels() -> None:
    context = TableContext(now=NOW)
    headers = rows(render(build_table(NODE_COLUMNS, [node("n1", {"cpu": 1})], context, wide=True)))[0]
    assert headers[-4:] == ["HEARTBEAT", "TAINTS", "LABELS", "AGE"]


def test_the_replicas_table_shows_phase_node_and_the_latest_reason() -> None:
    waiting = replica("shop-api-1", "Pending")
    waiting["status"]["conditions"] = [
        {"type": "Phase", "status": "False", "reason": "Unschedulable", "message": "old"},
        {"type": "Phase", "status": "False", "reason": "Backoff", "message": "5 attempts"},
    ]
    replicas = [replica("shop-api-0", "Running", "n1"), waiting]
    table = rows(
        render(build_table(REPLICA_COLUMNS, replicas, TableContext(now=NOW, replicas=replicas), False))
    )
    assert table == [
        ["NAME", "PHASE", "NODE", "AGE", "REASON"],
        ["shop-api-0", "Running", "n1", "1m", "-"],
        ["shop-api-1", "Pending", "-", "1m", "Backoff"],
    ]


def test_the_deployments_table_counts_its_replicas_by_phase() -> None:
    deployment = {
        "kind": "Deployment",
        "metadata": {"name": "shop", "created_at": "2026-11-21T10:00:00Z"},
        "spec": {"services": [{"name": "api", "replicas": 3}, {"name": "worker", "replicas": 1}]},
    }
    replicas = [
        replica("shop-api-0", "Running", "n1"),
        replica("shop-api-1", "Scheduled", "n1"),
        replica("shop-api-2", "Pending"),
        replica("other-api-0", "Running", "n1", owner="other"),
    ]
    context = TableContext(now=NOW, replicas=replicas)
    assert rows(render(build_table(DEPLOYMENT_COLUMNS, [deployment], context, wide=False))) == [
        ["NAME", "SERVICES", "RUNNING", "SCHEDULED", "PENDING", "AGE"],
        ["shop", "api,worker", "1/4", "1", "1", "1h"],
    ]


_phases = st.sampled_from([phase.value for phase in ReplicaPhase])
_replicas = st.lists(
    st.tuples(_phases, st.sampled_from(["n1", "n2", None]), st.integers(0, 4000), st.integers(0, 2)),
    max_size=30,
)


@given(_replicas)
def test_node_usage_is_the_sum_of_the_requests_of_replicas_holding_resources_there(
    given_replicas: list[tuple[str, str | None, int, int]],
) -> None:
    replicas = [
        replica(f"r-{i}", phase, node_ref, {"cpu": f"{millis}m"}, gpus=gpus)
        for i, (phase, node_ref, millis, gpus) in enumerate(given_replicas)
    ]
    used = used_by_node(replicas)
    for name in ("n1", "n2"):
        holding = [r for r in given_replicas if r[1] == name and r[0] in HOLDING_PHASES]
        assert used.get(name, {}).get("cpu", 0) == sum(millis for _, _, millis, _ in holding)
        assert used.get(name, {}).get("gpu", 0) == sum(1000 * gpus for _, _, _, gpus in holding)
    assert set(used) <= {"n1", "n2"}
