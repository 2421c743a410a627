"""Reading multi-document YAML: splitting, kinds, defaults, every error at once, and round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from loadmaster.manifests import (
    ManifestError,
    ManifestErrors,
    manifest_from_object,
    normalize_kind,
    parse_manifests,
    plural_of,
    split_documents,
)

SPEC_EXAMPLE = Path(__file__).with_name("spec_example.yaml")


def test_the_example_of_the_manifests_spec_is_accepted_as_five_objects() -> None:
    manifests = parse_manifests(SPEC_EXAMPLE.read_text(), origin="spec_example.yaml")
    assert [m.ref for m in manifests] == [
        "nodes/worker-01",
        "queues/team-a",
        "deployments/shop",
        "jobs/train-llm",
        "workertemplates/gpu-large",
    ]


def test_quantities_are_kept_as_written_and_scheduler_defaults_are_filled_in() -> None:
    shop = parse_manifests(SPEC_EXAMPLE.read_text())[2]
    api, shipper = shop.spec["services"]
    assert api["resources"] == {"cpu": "500m", "memory": "512Mi"}
    assert (api["placement"], api["replicas"], api["priority"], api["preemptible"]) == (
        "spread",
        6,
        100,
        False,
    )
    assert shipper["placement"] == "global" and "replicas" not in shipper
    # A service is not preemptible unless it says so (AVA), whatever its priority; a job's default is
    # priority < 100 (below).
    assert (shipper["priority"], shipper["queue"], shipper["preemptible"]) == (50, "default", False)


def test_a_service_opts_in_to_preemption_explicitly() -> None:
    text = (
        "api_version: loadmaster/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {services: ["
        "{name: a, image: x}, {name: b, image: x, preemptible: true}]}\n"
    )
    a, b = parse_manifests(text)[0].spec["services"]
    assert (a["preemptible"], b["preemptible"]) == (False, True)


def test_a_job_below_priority_100_stays_preemptible_by_default() -> None:
    text = "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: j}\nspec: {tasks: 1, command: [run]}\n"
    assert parse_manifests(text)[0].spec["preemptible"] is True


def test_a_job_is_a_whole_gang_unless_min_available_says_otherwise() -> None:
    text = "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: j}\nspec: {tasks: 4, command: [run]}\n"
    assert parse_manifests(text)[0].spec["min_available"] == 4


@pytest.mark.parametrize(
    ("spelling", "kind"),
    [
        pytest.param("replicas", "Replica", id="plural-lowercase"),
        pytest.param("Replica", "Replica", id="canonical"),
        pytest.param("NODES", "Node", id="plural-uppercase"),
        pytest.param("worker-templates", "WorkerTemplate", id="dashed-plural"),
        pytest.param("workertemplate", "WorkerTemplate", id="folded-singular"),
        pytest.param("deployment", "Deployment", id="singular-lowercase"),
    ],
)
def test_kinds_are_accepted_in_singular_plural_and_any_case(spelling: str, kind: str) -> None:
    assert normalize_kind(spelling) == kind


def test_an_unknown_kind_spelling_is_an_error_naming_the_choices() -> None:
    with pytest.raises(ManifestError, match='unknown kind "pods"'):
        normalize_kind("pods")


def test_the_object_prefix_is_the_lowercase_plural_of_the_kind() -> None:
    assert plural_of("WorkerTemplate") == "workertemplates"


def test_every_problem_of_a_document_is_reported_at_once_one_per_line() -> None:
    text = (
        "api_version: loadmaster/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  services:\n"
        "    - {name: api, image: a, replica: 3, ports: [0], resources: {cpu: -1}}\n"
    )
    with pytest.raises(ManifestErrors) as caught:
        parse_manifests(text)
    assert str(caught.value).splitlines() == [
        "deployments/web: spec.services[0].replica: unknown field (did you mean replicas?)",
        "deployments/web: spec.services[0].resources.cpu: negative quantity -1",
        "deployments/web: spec.services[0].ports[0]: must be at least 1, got 0",
    ]
    first = caught.value
    assert (first.path, first.message) == (
        "spec.services[0].replica",
        "unknown field (did you mean replicas?)",
    )


def test_problems_of_several_documents_are_reported_together_and_nothing_is_returned() -> None:
    text = (
        "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: good}\n---\n"
        "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: bad}\nspec: {priority: x}\n---\n"
        "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: worse, labels: [a]}\n"
    )
    with pytest.raises(ManifestErrors) as caught:
        parse_manifests(text)
    assert [(e.ref, e.path) for e in caught.value.errors] == [
        ("queues/bad", "spec.priority"),
        ("queues/worse", "metadata.labels"),
    ]


def test_a_bad_document_does_not_hide_a_syntax_error_in_another() -> None:
    text = "api_version: loadmaster/v1\nkind: Queue\nmetadata: {name: Q}\n---\nkind: [\n"
    with pytest.raises(ManifestErrors) as caught:
        parse_manifests(text, origin="two.yaml")
    refs = [e.ref for e in caught.value.errors]
    assert refs == ["queues/Q", "two.yaml"]
    assert caught.value.errors[1].path.startswith("line 5, column")


def test_a_manifest_error_is_a_value_error_with_path_and_message() -> None:
    error = ManifestError("deployments/web", "spec.services[0].replica", "unknown field")
    assert isinstance(error, ValueError)
    assert str(error) == "deployments/web: spec.services[0].replica: unknown field"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        pytest.param("", 0, id="empty"),
        pytest.param("# only a comment\n---\n---\n", 0, id="only-markers-and-comments"),
        pytest.param("---\na: 1\n---\nb: 2\n", 2, id="leading-marker"),
        pytest.param("a: 1\n...\n%YAML 1.2\n---\nb: 2\n", 2, id="end-marker-then-directive"),
        pytest.param("--- {a: 1}\n--- {b: 2}\n", 2, id="content-on-the-marker-line"),
        pytest.param("a: |\n  ---\n  still a\n", 1, id="indented-dashes-inside-a-block-scalar"),
        pytest.param("a: 1\r\n---\r\nb: 2\r\n", 2, id="windows-line-endings"),
    ],
)
def test_a_stream_is_split_on_document_markers_at_column_zero(text: str, count: int) -> None:
    assert len(split_documents(text)) == count


def test_documents_remember_where_they_start_in_the_file() -> None:
    documents = split_documents("a: 1\n---\nb: 2\n\n---\nc: 3\n")
    assert [(d.first_line, d.number) for d in documents] == [(1, 1), (2, 2), (5, 3)]


def test_an_object_round_trips_through_yaml_unchanged() -> None:
    manifests = parse_manifests(SPEC_EXAMPLE.read_text())
    dumped = yaml.safe_dump_all([m.to_dict() for m in manifests], sort_keys=False)
    assert parse_manifests(dumped) == manifests


def test_an_object_round_trips_through_json_as_the_api_would_receive_it() -> None:
    for manifest in parse_manifests(SPEC_EXAMPLE.read_text()):
        body = json.loads(json.dumps(manifest.to_dict()))
        assert manifest_from_object(body, origin="request body") == manifest


def test_a_json_body_with_problems_is_refused_with_the_object_reference() -> None:
    body = {"api_version": "loadmaster/v1", "kind": "Queue", "metadata": {"name": "q"}, "spec": {"limit": []}}
    with pytest.raises(ManifestErrors, match=r"^queues/q: spec.limit: expected a mapping"):
        manifest_from_object(body, origin="request body")


def test_a_timestamp_given_as_a_datetime_is_stored_as_rfc3339_text() -> None:
    from datetime import UTC, datetime

    body = {
        "api_version": "loadmaster/v1",
        "kind": "Node",
        "metadata": {"name": "n1"},
        "status": {"last_heartbeat": datetime(2026, 11, 21, 10, 0, tzinfo=UTC)},
    }
    assert manifest_from_object(body).status["last_heartbeat"] == "2026-11-21T10:00:00Z"


def test_an_empty_hosts_list_is_allowed_with_other_placements_as_in_the_spec_example() -> None:
    shop = parse_manifests(SPEC_EXAMPLE.read_text())[2]
    assert shop.spec["services"][0]["hosts"] == []


def test_a_document_may_spell_its_kind_in_lowercase_plural_and_is_stored_canonical() -> None:
    text = "api_version: loadmaster/v1\nkind: queues\nmetadata: {name: q}\n"
    queue = parse_manifests(text)[0]
    assert (queue.kind, queue.ref, queue.spec) == (
        "Queue",
        "queues/q",
        {"priority": 0, "over_quota_weight": 1},
    )
