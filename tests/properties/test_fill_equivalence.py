"""The fill path (a run of identical tasks placed in one vector pass) gives exactly the placements of the
one-task-at-a-time path: same nodes in the same order, same arrays, same devices, same decisions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.core.columns.snapshot import ClusterSnapshot
from loadmaster.core.model import Cluster, Job, Node, SchedulerConfig, Task, TaskStatus
from loadmaster.core.working.statement import Statement
from loadmaster.placement import fill
from loadmaster.placement.engine import Choice, PlacementEngine
from loadmaster.placement.fill import _replay
from loadmaster.placement.profile import profile_for

GI = 2**30


@st.composite
def runs(draw: st.DrawFn) -> Cluster:
    """A cluster with some running load and one job of identical pending tasks (a gang or a service)."""
    nodes, jobs = [], []
    for i in range(draw(st.integers(1, 7))):
        alloc = {
            "cpu": draw(st.integers(1, 8)) * 1000,
            "memory": draw(st.integers(1, 16)) * GI,
            "gpu": draw(st.sampled_from([0, 1, 2, 4, 8])) * 1000,
        }
        overcommit = {"cpu": draw(st.sampled_from([1.0, 1.5, 2.0]))} if draw(st.booleans()) else {}
        state = draw(st.sampled_from(["Ready"] * 5 + ["NotReady"]))
        nodes.append(Node(f"node-{i}", alloc, alloc, state=state, overcommit=overcommit))
        for k in range(draw(st.integers(0, 2))):
            load = {
                "cpu": draw(st.integers(0, alloc["cpu"] // 2000)) * 1000,
                "memory": draw(st.integers(0, 4)) * GI,
            }
            if alloc["cpu"] >= load["cpu"] and alloc["memory"] >= load["memory"]:
                task = Task(f"run-{i}-{k}", f"run-{i}-{k}", load, TaskStatus.RUNNING, f"node-{i}")
                jobs.append(Job(f"run-{i}-{k}", (task,)))
    request = {"cpu": draw(st.integers(1, 8)) * 250, "memory": draw(st.integers(1, 8)) * GI // 2}
    if draw(st.booleans()):
        del request[draw(st.sampled_from(["cpu", "memory"]))]  # the non-zero defaults of binpack/spread
    gpu = draw(st.sampled_from([0, 0, 1000, 2000, 500, "all"]))
    if gpu and gpu != "all":
        request["gpu"] = gpu
    size = draw(st.integers(1, 40))
    opted_in = draw(st.booleans())  # overcommit: the fill path counts the same room as the filter
    tasks = tuple(
        Task(f"new-{k:02d}", "new", dict(request), overcommit=opted_in, gpu_all=gpu == "all")
        for k in range(size)
    )
    jobs.append(Job("new", tasks, min_available=draw(st.sampled_from([1, size]))))
    strategy = draw(st.sampled_from(["binpack", "spread", "balanced"]))
    profile = draw(st.sampled_from(["default", "default", "gpu_pack", "first_fit"]))
    return Cluster(tuple(nodes), tuple(jobs), config=SchedulerConfig(strategy=strategy, profile=profile))


def _one_at_a_time(cluster: Cluster) -> tuple[list[int], ClusterSnapshot, Statement]:
    snapshot = ClusterSnapshot(cluster)
    engine, statement = PlacementEngine(snapshot, profile_for(cluster.config)), Statement(snapshot)
    nodes = []
    for t in snapshot.job_tasks[-1]:
        choice = engine.choose(t)
        if not choice.placed:
            break
        statement.allocate(t, choice.node)
        nodes.append(choice.node)
    return nodes, snapshot, statement


def _filled(cluster: Cluster) -> tuple[list[int], ClusterSnapshot, Statement, int]:
    snapshot = ClusterSnapshot(cluster)
    engine, statement = PlacementEngine(snapshot, profile_for(cluster.config)), Statement(snapshot)
    nodes: list[int] = []
    runs_filled = 0

    def apply(t: int, choice: Choice) -> bool:
        if choice.placed:
            statement.allocate(t, choice.node)
            nodes.append(choice.node)
        return choice.placed

    def apply_run(tasks: object, chosen: np.ndarray) -> None:
        nonlocal runs_filled
        runs_filled += 1
        statement.allocate_many(tasks, chosen)  # type: ignore[arg-type]
        nodes.extend(chosen.tolist())

    engine.choose_many(list(snapshot.job_tasks[-1]), apply, apply_run)
    return nodes, snapshot, statement, runs_filled


def _state(snapshot: ClusterSnapshot) -> dict[str, object]:
    state = snapshot.state
    return {
        "used": state.node_used.tolist(), "used_nz": state.node_used_nz.tolist(),
        "free": state.node_free.tolist(), "idle": state.node_idle.tolist(),
        "tasks": state.node_tasks.tolist(),
        "devices": state.devices.used.tolist(), "phase": state.task_phase.tolist(),
        "node": state.task_node.tolist(), "records": dict(state.records),
    }  # fmt: skip


@settings(max_examples=150)
@given(cluster=runs())
def test_a_filled_run_places_every_task_where_one_at_a_time_placement_would(cluster: Cluster) -> None:
    expected, expected_snapshot, expected_statement = _one_at_a_time(cluster)
    got, snapshot, statement, _ = _filled(cluster)
    assert got == expected
    assert _state(snapshot) == _state(expected_snapshot)
    assert statement.commit() == expected_statement.commit()


@pytest.mark.parametrize(
    ("strategy", "gpu"),
    [
        pytest.param("binpack", 0, id="binpack-fills-node-after-node"),
        pytest.param("spread", 0, id="spread-takes-the-best-pairs"),
        pytest.param("balanced", 1000, id="balanced-replays-with-a-heap"),
    ],
)
def test_the_fill_path_is_taken_for_local_strategies_and_matches(strategy: str, gpu: int) -> None:
    alloc = {"cpu": 8000, "memory": 32 * GI, "gpu": 4000}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(6))
    request = {"cpu": 1000, "memory": 2 * GI, **({"gpu": gpu} if gpu else {})}
    tasks = tuple(Task(f"t-{k:02d}", "job", dict(request)) for k in range(30))
    cluster = Cluster(nodes, (Job("job", tasks),), config=SchedulerConfig(strategy=strategy))  # type: ignore[arg-type]
    expected, *_ = _one_at_a_time(cluster)
    got, _, _, runs_filled = _filled(cluster)
    assert runs_filled == 1
    assert got == expected
    assert len(got) == (24 if gpu else 30)


def test_a_gpu_pack_run_crossing_the_midfill_window_is_split_where_one_at_a_time_would_change() -> None:
    # 4 nodes x 4 GPUs; 20 one-GPU tasks take the free share from 100 % through [35 %, 50 %) to 0 %, so
    # gpu_midfill_spread applies to tasks 8..10 only: a run keeping its first task's scorers would not.
    alloc = {"cpu": 64_000, "memory": 256 * GI, "gpu": 4000}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(4))
    tasks = tuple(Task(f"t-{k:02d}", "job", {"cpu": 1000, "memory": GI, "gpu": 1000}) for k in range(20))
    cluster = Cluster(nodes, (Job("job", tasks),), config=SchedulerConfig(profile="gpu_pack"))
    expected, expected_snapshot, expected_statement = _one_at_a_time(cluster)
    got, snapshot, statement, _ = _filled(cluster)
    assert len(expected) == 16
    assert got == expected
    assert _state(snapshot) == _state(expected_snapshot)
    assert statement.commit() == expected_statement.commit()


def test_a_run_longer_than_the_pair_budget_is_filled_in_chunks_with_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fill, "MAX_PAIRS", 7)
    alloc = {"cpu": 4000, "memory": 16 * GI}
    nodes = tuple(Node(f"node-{i}", alloc, alloc) for i in range(5))
    tasks = tuple(Task(f"t-{k:02d}", "job", {"cpu": 500, "memory": GI}) for k in range(45))
    cluster = Cluster(nodes, (Job("job", tasks),), config=SchedulerConfig(strategy="spread"))
    expected, *_ = _one_at_a_time(cluster)
    got, _, _, runs_filled = _filled(cluster)
    assert runs_filled > 1
    assert got == expected
    assert len(got) == 40


@st.composite
def sequences(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Per-node score sequences laid out node by node (nodes in first-pick order, as fill_nodes does)."""
    shape = draw(st.sampled_from(["rising", "falling", "any"]))
    lengths = draw(st.lists(st.integers(1, 5), min_size=1, max_size=6))
    node_ids = draw(st.permutations(range(10)))[: len(lengths)]
    node, copies, total = [], [], []
    for n, length in zip(node_ids, lengths, strict=False):
        values = draw(st.lists(st.integers(0, 6), min_size=length, max_size=length))
        if shape != "any":
            values.sort(reverse=shape == "falling")
        node += [n] * length
        copies += list(range(length))
        total += values
    # first-pick order: by (-S[n, 0], n)
    groups = sorted(range(len(lengths)), key=lambda g: (-total[sum(lengths[:g])], node[sum(lengths[:g])]))
    order = [sum(lengths[:g]) + j for g in groups for j in range(lengths[g])]
    k = draw(st.integers(1, sum(lengths) + 2))
    as_array = lambda values: np.array([values[i] for i in order], dtype=np.int64)  # noqa: E731
    return as_array(node), as_array(copies), as_array(total), k


@settings(max_examples=300)
@given(case=sequences())
def test_replaying_score_sequences_equals_picking_the_argmax_each_time(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, int],
) -> None:
    node, copies, total, k = case
    heads = {int(n): [] for n in node}
    for n, value in zip(node.tolist(), total.tolist(), strict=True):
        heads[n].append(value)
    expected = []
    while len(expected) < k and any(heads.values()):
        best = max((values[0], -n) for n, values in heads.items() if values)  # ties: first node
        n = -best[1]
        expected.append(n)
        heads[n].pop(0)
    assert _replay(node, copies, total, k).tolist() == expected
