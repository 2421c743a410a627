"""The scenario loader on valid files: every field reaches the model, defaults, the implicit queue."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadmaster.core.model import (
    Cluster,
    GpuMatch,
    ImageRef,
    Job,
    LabelExpression,
    LabelSelector,
    Node,
    NodeRuntime,
    PreferredTerm,
    Queue,
    RuntimeRequirement,
    SchedulerConfig,
    Taint,
    Task,
    TaskStatus,
    Toleration,
    TopologySpreadConstraint,
    VolumeClaim,
    VolumePool,
)
from loadmaster.scenario.schema import ExpectedTask, Scenario, ScenarioError, load_scenario, parse_scenario

GI = 2**30
MI = 2**20

# One file using every field of the format (and the loader's extensions) at least once.
EVERY_FIELD_PATH = Path(__file__).with_name("every_field.yaml")
EVERY_FIELD = EVERY_FIELD_PATH.read_text(encoding="utf-8")

EVERY_FIELD_MODEL = Scenario(
    name="every-field",
    source="hand-written: one of each field",
    expect={
        "api-0": ExpectedTask(status=TaskStatus.MOVED, node="node-1", devices=(0,)),
        "batch-0": ExpectedTask(status=TaskStatus.PENDING, node=None, rejected={"status": 1, "capacity": 1}),
    },
    cluster=Cluster(
        config=SchedulerConfig(
            actions=("allocate", "reclaim"),
            strategy="spread",
            profile="lablet",
            staleness_grace_period_s=90.0,
            max_eviction_ratio=1.5,
            license_tiers=("free", "paid"),
            max_consolidation_moves=4,
        ),
        nodes=(
            Node(
                name="node-0",
                labels={"zone": "a", "gpu": "true", "rack": "7"},
                capacity={"cpu": 8000, "memory": 32 * GI, "gpu": 4000, "ingress_ip": 2000},
                allocatable={"cpu": 7500, "memory": 30 * GI, "gpu": 4000, "ingress_ip": 2000},
                state="NotReady",
                unschedulable=True,
                taints=(
                    Taint("dedicated", "infer", "PreferNoSchedule"),
                    Taint("maintenance", "", "NoSchedule"),
                ),
                gpu_model="V100M32",
                gpu_driver="nvidia",
                gpu_capabilities=("compute", "utility"),
                license_tier="paid",
                runtime=NodeRuntime(versions=(("base", "3"), ("cml", "2.7.1")), features=("iosv", "nxos")),
                volumes=(
                    VolumePool("slow", 2**40, (("type", "hdd"),)),
                    VolumePool("fast", 500 * GI, (("type", "ssd"),)),
                ),
                download_bps=120_000_000,
                upload_bps=1_500_000_000,
                images=frozenset({"registry.example/api:1.4"}),
                overcommit={"cpu": 1.5, "memory": 1.0},
            ),
            Node(
                name="node-1",
                capacity={"cpu": 4000, "memory": 8 * 10**9},
                allocatable={"cpu": 4000, "memory": 8 * 10**9},
            ),
        ),
        queues=(
            Queue(
                name="dept",
                priority=2,
                deserved={"gpu": 4000},
                limit={"gpu": 8000, "cpu": 64000},
                over_quota_weight=0.5,
            ),
            Queue(name="team-a", parent="dept"),
            Queue(name="default"),
        ),
        jobs=(
            Job(
                name="api",
                queue="team-a",
                priority=120,
                preemptible=True,
                min_available=2,
                stale_for_s=61.0,
                tasks=(
                    Task(
                        name="api-0",
                        job="api",
                        request={"cpu": 1000, "memory": 2 * GI, "gpu": 500, "ingress_ip": 1000},
                        status=TaskStatus.RUNNING,
                        node="node-0",
                        labels={"app": "web"},
                        node_selector={"zone": "a"},
                        required_node_affinity=(
                            LabelExpression("rack", "Gt", ("3",)),
                            LabelExpression("zone", "In", ("a", "b")),
                        ),
                        tolerations=(
                            Toleration("dedicated", "Equal", "infer", "PreferNoSchedule"),
                            Toleration(None, "Exists", "", None),
                        ),
                        preferred_node_affinity=(
                            PreferredTerm(50, match_labels=(("zone", "a"),)),
                            PreferredTerm(10, match_expressions=(LabelExpression("gpu", "Exists"),)),
                        ),
                        topology_spread_constraints=(
                            TopologySpreadConstraint(
                                max_skew=2,
                                topology_key="zone",
                                when_unsatisfiable="ScheduleAnyway",
                                label_selector=LabelSelector(
                                    match_labels=(("app", "web"),),
                                    match_expressions=(LabelExpression("tier", "NotIn", ("batch",)),),
                                ),
                            ),
                        ),
                        hosts=("node-0", "node-9"),
                        ports=(8080, 443),
                        gpu_models=("V100M16", "V100M32"),
                        license_tier="free",
                        runtime=RuntimeRequirement(versions=(("cml", ">=2.7,<3"),), features=("iosv",)),
                        volumes=(VolumeClaim(10 * GI, (("type", "ssd"),), ephemeral=True),),
                        previous_node="node-gone",
                        image=ImageRef("registry.example/api:1.4", 800 * MI),
                        delayed_shutdown=True,
                    ),
                    Task(
                        name="api-1",
                        job="api",
                        request={"cpu": 4000},
                        status=TaskStatus.RELEASING,
                        node="node-1",
                    ),
                ),
            ),
            Job(
                name="batch",
                tasks=(
                    Task(
                        name="batch-0",
                        job="batch",
                        request={"gpu": 2000},
                        previous_node="node-1",
                        gpu_match=GpuMatch("nvidia", ("compute",)),
                        overcommit=True,
                    ),
                    Task(name="batch-1", job="batch", request={}, gpu_all=True, overcommit=True),
                ),
            ),
        ),
    ),
)


def test_every_field_of_the_format_reaches_the_model() -> None:
    assert parse_scenario(EVERY_FIELD) == EVERY_FIELD_MODEL


def test_a_minimal_file_gets_the_spec_defaults_everywhere() -> None:
    scenario = parse_scenario(
        """
name: minimal
nodes: [{name: n0, capacity: {cpu: 2, memory: 4Gi}}]
jobs:
  - {name: j0, tasks: [{name: t0, request: {cpu: 1}}]}
  - {name: j1, priority: 100, tasks: [{name: t1}]}
  - {name: j2, priority: 99, tasks: [{name: t2}]}
"""
    )
    node = scenario.cluster.nodes[0]
    job, important, almost = scenario.cluster.jobs
    assert scenario.source is None
    assert scenario.expect is None
    assert scenario.cluster.config == SchedulerConfig()
    assert node.allocatable == node.capacity == {"cpu": 2000, "memory": 4 * GI}
    assert (node.state, node.unschedulable, node.taints, node.labels) == ("Ready", False, (), {})
    assert (job.queue, job.priority, job.preemptible, job.min_available, job.stale_for_s) == (
        "default",
        50,
        True,
        1,
        None,
    )
    assert (important.preemptible, almost.preemptible) == (False, True)
    task = job.tasks[0]
    assert (task.status, task.node, task.hosts, task.gpu_models, task.image) == (
        TaskStatus.PENDING,
        None,
        None,
        None,
        None,
    )
    assert important.tasks[0].request == {}
    assert scenario.cluster.queues == (Queue(name="default"),)


def test_a_partial_allocatable_keeps_the_capacity_of_the_resources_it_does_not_name() -> None:
    scenario = parse_scenario(
        "name: partial\nnodes: [{name: n0, capacity: {cpu: 8, memory: 8Gi}, allocatable: {cpu: 6}}]\n"
    )
    assert scenario.cluster.nodes[0].allocatable == {"cpu": 6000, "memory": 8 * GI}


@pytest.mark.parametrize(
    ("queues", "expected"),
    [
        pytest.param(
            "",
            (Queue("team"), Queue("default")),
            id="appended-after-the-listed-queues",
        ),
        pytest.param(
            "  - {name: default, deserved: {gpu: 1}}\n",
            (Queue("team"), Queue("default", deserved={"gpu": 1000})),
            id="a-listed-default-queue-is-kept-as-written",
        ),
    ],
)
def test_the_default_queue_exists_implicitly_when_a_job_uses_it(
    queues: str, expected: tuple[Queue, ...]
) -> None:
    text = (
        "name: implicit-default\nqueues:\n  - {name: team}\n"
        + queues
        + "jobs:\n  - {name: j0, tasks: [{name: t0}]}\n  - {name: j1, queue: team, tasks: [{name: t1}]}\n"
    )
    assert parse_scenario(text).cluster.queues == expected


def test_the_default_queue_is_not_added_when_no_job_uses_it() -> None:
    text = "name: no-default\nqueues: [{name: team}]\njobs: [{name: j0, queue: team, tasks: [{name: t0}]}]\n"
    assert parse_scenario(text).cluster.queues == (Queue("team"),)


def test_yaml_numbers_and_booleans_in_label_values_become_their_yaml_text() -> None:
    scenario = parse_scenario(
        "name: label-text\nnodes: [{name: n0, labels: {a: true, b: 3, c: 2.5, d: false, e: on, f: '0.10'}}]\n"
    )
    assert scenario.cluster.nodes[0].labels == {
        "a": "true",
        "b": "3",
        "c": "2.5",
        "d": "false",
        "e": "on",  # YAML 1.2: on/off/yes/no are plain strings
        "f": "0.10",
    }


def test_null_for_an_optional_field_means_the_default() -> None:
    scenario = parse_scenario(
        "name: nulls\nconfig:\nnodes:\n  - name: n0\n    labels:\n    allocatable: ~\n"
        "jobs: [{name: j0, queue: null, tasks: [{name: t0, node: ~, request: ~}]}]\n"
    )
    assert scenario.cluster.config == SchedulerConfig()
    assert scenario.cluster.nodes[0].labels == {}
    assert scenario.cluster.jobs[0].queue == "default"
    assert scenario.cluster.jobs[0].tasks[0].request == {}


def test_timestamps_in_yaml_stay_text() -> None:
    scenario = parse_scenario("name: dates\nnodes: [{name: n0, labels: {since: 2024-01-31}}]\n")
    assert scenario.cluster.nodes[0].labels == {"since": "2024-01-31"}


def test_a_yaml_syntax_error_names_the_file_line_and_column() -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario("name: broken\nnodes: [{name: n0\n")
    assert error.value.path == "<file>"
    assert error.value.message == "not valid YAML at line 2, column 9: unclosed bracket '{'"
    assert str(error.value) == f"<file>: {error.value.message}"


def test_a_duplicate_yaml_key_is_refused_naming_its_path() -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario("name: twice\nname: again\n")
    assert error.value.path == "name"
    assert error.value.message == 'the key "name" is given twice (lines 1 and 2); give it once'


def test_a_file_is_loaded_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "every-field.yaml"
    path.write_text(EVERY_FIELD, encoding="utf-8")
    assert load_scenario(path) == EVERY_FIELD_MODEL
    assert load_scenario(str(path)) == EVERY_FIELD_MODEL


def test_an_unreadable_file_is_a_file_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError) as error:
        load_scenario(tmp_path / "missing.yaml")
    assert error.value.path == "<file>"
    assert "cannot read" in error.value.message and "missing.yaml" in error.value.message


def test_a_file_that_is_not_utf8_is_a_file_error(tmp_path: Path) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes("name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert error.value.path == "<file>"
    assert "not UTF-8" in error.value.message


def test_an_unknown_field_far_from_every_known_name_gets_no_suggestion() -> None:
    with pytest.raises(ScenarioError) as error:
        parse_scenario("name: typo\nnodes: [{name: n0, zzzzzz: 1}]\n")
    assert (error.value.path, error.value.message) == ("nodes[0].zzzzzz", "unknown field")
