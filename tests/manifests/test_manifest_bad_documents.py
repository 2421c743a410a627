"""A table of bad documents: each is refused with the object, the field path and what is wrong."""

from __future__ import annotations

import textwrap

import pytest

from loadmaster.manifests import ManifestErrors, parse_manifests


def service_doc(service_body: str, name: str = "web") -> str:
    """A Deployment with one service whose body (indented YAML lines) is given."""
    body = textwrap.indent(textwrap.dedent(service_body).strip("\n"), "      ")
    header = f"api_version: loadmaster/v1\nkind: Deployment\nmetadata: {{name: {name}}}\n"
    return f"{header}spec:\n  services:\n{body}\n"


def doc(kind: str, name: str, spec: str, extra: str = "") -> str:
    return f"api_version: loadmaster/v1\nkind: {kind}\nmetadata: {{name: {name}}}\nspec: {spec}\n{extra}"


def node_doc(spec: str = "{capacity: {cpu: 32, memory: 128Gi}}", status: str = "") -> str:
    return doc("Node", "n1", spec, f"status: {status}\n" if status else "")


BAD_DOCUMENTS = [
    pytest.param(
        "api_version: loadmaster/v1\nkind: Node\nmetadata: {name: [n1\n",
        "bad.yaml: line 3, column 18",
        "malformed YAML",
        id="malformed-yaml-names-its-line",
    ),
    pytest.param(
        node_doc() + "---\napi_version: loadmaster/v1\nkind: Queue\nmetadata:\n  name: q\n bad: 1\n",
        "bad.yaml: line 10, column 2",
        "malformed YAML",
        id="malformed-second-document-counts-lines-from-the-file-start",
    ),
    pytest.param(
        "api_version: loadmaster/v1\nkind: Node\nmetadata: {name: n1, name: n2}\n",
        "bad.yaml document 1: metadata.name",
        'the key "name" is given twice (line 3); give it once',
        id="duplicate-yaml-key",
    ),
    pytest.param("- just\n- a list\n", "bad.yaml document 1", "expected a mapping", id="document-is-a-list"),
    pytest.param(
        doc("Deploy", "web", "{}"),
        "bad.yaml document 1: kind",
        'unknown kind "Deploy" (expected one of Node, Queue, Deployment, Job, WorkerTemplate, Replica)',
        id="unknown-kind",
    ),
    pytest.param(
        "api_version: loadmaster/v1\nmetadata: {name: x}\nspec: {}\n",
        "bad.yaml document 1: kind",
        "required",
        id="missing-kind",
    ),
    pytest.param(
        doc("Queue", "q", "{}").replace("loadmaster/v1", "v1"),
        "queues/q: api_version",
        'expected "loadmaster/v1", got "v1"',
        id="wrong-api-version",
    ),
    pytest.param(
        doc("Queue", "q", "{}").replace("api_version: loadmaster/v1\n", ""),
        "queues/q: api_version",
        'required: "loadmaster/v1"',
        id="missing-api-version",
    ),
    pytest.param(
        doc("Queue", "q", "{}", "specs: {}\n"), "queues/q: specs", "unknown field", id="unknown-top-field"
    ),
    pytest.param(
        "api_version: loadmaster/v1\nkind: Queue\nspec: {}\n",
        "queues (bad.yaml document 1): metadata",
        "required",
        id="missing-metadata",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, replica: 3}"),
        "deployments/web: spec.services[0].replica",
        "unknown field (did you mean replicas?)",
        id="unknown-nested-field",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, node_loss_policy: sometimes}"),
        "deployments/web: spec.services[0].node_loss_policy",
        "expected one of single_replica | all | none",
        id="unknown-node-loss-policy",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, placement: global, replicas: 2}"),
        "deployments/web: spec.services[0].replicas",
        'service "api" uses placement=global; remove replicas (global runs one replica per ready node)',
        id="global-with-replicas",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, resources: {cpu: -1}}"),
        "deployments/web: spec.services[0].resources.cpu",
        "negative quantity -1",
        id="negative-cpu",
    ),
    pytest.param(
        service_doc('- {name: api, image: a, resources: {memory: "2 GB"}}'),
        "deployments/web: spec.services[0].resources.memory",
        'bad quantity "2 GB"',
        id="unparseable-memory",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, resources: {memory: 500m}}"),
        "deployments/web: spec.services[0].resources.memory",
        "memory cannot be given in milli-bytes",
        id="memory-in-millis",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, resources: {CPU: 1}}"),
        "deployments/web: spec.services[0].resources",
        "bad resource name 'CPU'",
        id="uppercase-resource-name",
    ),
    pytest.param(
        service_doc("- {name: api, image: a}", name="Web_App"),
        "deployments/Web_App: metadata.name",
        '"Web_App" is not DNS-safe',
        id="name-with-uppercase-and-underscore",
    ),
    pytest.param(
        doc("Queue", "q" * 64, "{}"),
        f"queues/{'q' * 64}: metadata.name",
        "is 64 characters long; a name has at most 63",
        id="name-longer-than-63",
    ),
    pytest.param(
        doc("Queue", "-q", "{}"), "queues/-q: metadata.name", "is not DNS-safe", id="name-starting-with-dash"
    ),
    pytest.param(
        doc("Queue", "q", "{}").replace("{name: q}", "{name: q, labels: {tier: 1}}"),
        "queues/q: metadata.labels.tier",
        "expected a string, got 1 (a number); quote it",
        id="label-value-not-a-string",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, placement: hosts, replicas: 1}"),
        "deployments/web: spec.services[0].hosts",
        "required with placement=hosts",
        id="placement-hosts-without-hosts",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, placement: hosts, hosts: []}"),
        "deployments/web: spec.services[0].hosts",
        "required with placement=hosts",
        id="placement-hosts-with-empty-hosts",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, hosts: [n1]}"),
        "deployments/web: spec.services[0].hosts",
        "hosts is only used with placement=hosts (this is spread)",
        id="hosts-without-placement-hosts",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, placement: hosts, hosts: [n1, n2], replicas: 3}"),
        "deployments/web: spec.services[0].replicas",
        "3 replicas but 2 hosts listed",
        id="more-replicas-than-hosts",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, placement: anywhere}"),
        "deployments/web: spec.services[0].placement",
        'expected one of spread | pack | hosts | global, got "anywhere"',
        id="unknown-placement",
    ),
    pytest.param(
        service_doc("- {name: api, replicas: 2}"),
        "deployments/web: spec.services[0]",
        "image or command is required",
        id="neither-image-nor-command",
    ),
    pytest.param(
        service_doc('- {name: api, command: "python -m http.server"}'),
        "deployments/web: spec.services[0].command",
        "expected a list",
        id="command-as-one-string",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, ports: [8080, 70000]}"),
        "deployments/web: spec.services[0].ports[1]",
        "must be at most 65535, got 70000",
        id="port-out-of-range",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, ports: [8080, 8080]}"),
        "deployments/web: spec.services[0].ports[1]",
        "port 8080 is listed twice",
        id="duplicate-port",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, healthcheck: {command: [true], interval: 10 sec}}"),
        "deployments/web: spec.services[0].healthcheck.interval",
        'bad duration "10 sec"',
        id="unparseable-interval",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, stop_grace_period: soon}"),
        "deployments/web: spec.services[0].stop_grace_period",
        'bad duration "soon"',
        id="unparseable-grace-period",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, stop_signal: TERM}"),
        "deployments/web: spec.services[0].stop_signal",
        "unknown signal",
        id="signal-without-sig-prefix",
    ),
    pytest.param(
        service_doc("- {name: api, image: a}\n- {name: api, image: b}"),
        "deployments/web: spec.services[1].name",
        'service "api" is defined twice',
        id="duplicate-service-name",
    ),
    pytest.param(
        service_doc("- {name: API, image: a}"),
        "deployments/web: spec.services[0].name",
        '"API" is not DNS-safe',
        id="service-name-not-dns-safe",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, gpus: 1.5}"),
        "deployments/web: spec.services[0].gpus",
        "must be a whole number of devices",
        id="fractional-gpus-above-one",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, gpus: 1, resources: {gpu: 1}}"),
        "deployments/web: spec.services[0].gpus",
        "use gpus or resources.gpu, not both",
        id="gpu-count-given-twice",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, replicas: -1}"),
        "deployments/web: spec.services[0].replicas",
        "must be at least 0, got -1",
        id="negative-replicas",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, priority: high}"),
        "deployments/web: spec.services[0].priority",
        'expected an integer, got "high" (a string)',
        id="priority-not-an-integer",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, tolerations: [{key: k, operator: Exists, value: v}]}"),
        "deployments/web: spec.services[0].tolerations[0].value",
        "operator Exists matches any value",
        id="toleration-exists-with-value",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, runtime: {versions: {cml: '>>2'}}}"),
        "deployments/web: spec.services[0].runtime.versions.cml",
        "bad version specifier",
        id="bad-runtime-specifier",
    ),
    pytest.param(
        service_doc(
            "- {name: api, image: a, topology_spread_constraints: [{max_skew: 1, topology_key: zone,"
            " label_selector: {match_expressions: [{key: app, operator: In}]}}]}"
        ),
        "deployments/web: spec.services[0].topology_spread_constraints[0]"
        ".label_selector.match_expressions[0].values",
        "operator In needs at least one value",
        id="label-expression-in-without-values",
    ),
    pytest.param(
        doc("Deployment", "web", "{services: []}"),
        "deployments/web: spec.services",
        "must not be empty",
        id="no-services",
    ),
    pytest.param(
        doc("Deployment", "web", "null"), "deployments/web: spec", "expected a mapping", id="null-spec"
    ),
    pytest.param(
        "api_version: loadmaster/v1\nkind: Job\nmetadata: {name: j}\n",
        "jobs/j: spec",
        "required",
        id="missing-spec",
    ),
    pytest.param(
        doc("Job", "train", "{tasks: 0, image: a}"),
        "jobs/train: spec.tasks",
        "must be at least 1",
        id="zero-tasks",
    ),
    pytest.param(
        doc("Job", "train", "{tasks: 2, min_available: 3, image: a}"),
        "jobs/train: spec.min_available",
        "must be at most tasks (2), got 3",
        id="min-available-above-tasks",
    ),
    pytest.param(
        doc("Job", "train", "{tasks: 2, min_available: 0, image: a}"),
        "jobs/train: spec.min_available",
        "must be at least 1",
        id="min-available-zero",
    ),
    pytest.param(
        node_doc("{capacity: {cpu: 32}, system_reserved: {cpu: 40}}"),
        "nodes/n1: spec.system_reserved.cpu",
        "reserves 40 but the capacity is 32",
        id="reserved-above-capacity",
    ),
    pytest.param(
        node_doc("{capacity: {cpu: 32, gpu: 2.5}}"),
        "nodes/n1: spec.capacity.gpu",
        "a node has a whole number of GPU devices",
        id="node-with-half-a-gpu",
    ),
    pytest.param(
        node_doc("{taints: [{key: k, effect: Never}]}"),
        "nodes/n1: spec.taints[0].effect",
        "expected one of NoSchedule | PreferNoSchedule | NoExecute",
        id="unknown-taint-effect",
    ),
    pytest.param(
        node_doc(status="{state: Up}"),
        "nodes/n1: status.state",
        'expected one of Ready | NotReady, got "Up"',
        id="unknown-node-state",
    ),
    pytest.param(
        node_doc(status='{last_heartbeat: "2026-11-21T10:00:00"}'),
        "nodes/n1: status.last_heartbeat",
        "has no timezone",
        id="heartbeat-without-timezone",
    ),
    pytest.param(
        node_doc(status="{network: {download: fast}}"),
        "nodes/n1: status.network.download",
        'bad throughput "fast"',
        id="unparseable-throughput",
    ),
    pytest.param(
        doc("Queue", "team-a", "{parent: team-a}"),
        "queues/team-a: spec.parent",
        'queue "team-a" cannot be its own parent',
        id="queue-is-its-own-parent",
    ),
    pytest.param(
        doc("Queue", "team-a", "{deserved: {gpu: 8}, limit: {gpu: 4}}"),
        "queues/team-a: spec.deserved.gpu",
        "deserved 8 exceeds the limit 4",
        id="deserved-above-limit",
    ),
    pytest.param(
        doc("Queue", "team-a", "{over_quota_weight: -1}"),
        "queues/team-a: spec.over_quota_weight",
        "must be at least 0",
        id="negative-over-quota-weight",
    ),
    pytest.param(
        doc("WorkerTemplate", "big", "{labels: {tier: gpu}}"),
        "workertemplates/big: spec.capacity",
        "required",
        id="template-without-capacity",
    ),
    pytest.param(
        doc(
            "Replica",
            "web-api-0",
            "{owner_kind: Deployment, owner: web, service: api, index: 0, spec_hash: "
            + "a" * 64
            + ", image: x}",
            "status: {phase: Running}\n",
        ),
        "replicas/web-api-0: status.node_ref",
        "required when the phase is Running",
        id="running-replica-without-node",
    ),
    pytest.param(
        doc("Queue", "q", "{}") + "---\n" + doc("Queue", "q", "{}"),
        "queues/q: metadata.name",
        "defined twice in bad.yaml (documents 1 and 2)",
        id="same-object-twice-in-one-file",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, profile: fastest}"),
        "deployments/web: spec.services[0].profile",
        "fastest",
        id="unknown-service-profile",
    ),
    pytest.param(
        doc("Queue", "q", "{profile: fastest}"),
        "queues/q: spec.profile",
        "fastest",
        id="unknown-queue-profile",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, restart_budget: -1}"),
        "deployments/web: spec.services[0].restart_budget",
        "must be at least 0, got -1",
        id="negative-restart-budget",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, address: yes-please}"),
        "deployments/web: spec.services[0].address",
        "true or false",
        id="address-not-a-boolean",
    ),
    pytest.param(
        service_doc("- {name: api, image: a, address: true, resources: {addresses: 2}}"),
        "deployments/web: spec.services[0].resources.addresses",
        "address: true requests it already",
        id="address-and-an-addresses-request",
    ),
    pytest.param(
        doc(
            "Job",
            "j",
            "{tasks: 1, command: [x], "
            'timeslot: {start: "2026-01-01T02:00:00Z", end: "2026-01-01T01:00:00Z"}}',
        ),
        "jobs/j: spec.timeslot.end",
        "must be after start",
        id="timeslot-ending-before-it-starts",
    ),
    pytest.param(
        doc(
            "Job", "j", '{tasks: 1, command: [x], timeslot: {start: "tomorrow", end: "2026-01-01T01:00:00Z"}}'
        ),
        "jobs/j: spec.timeslot.start",
        "bad timestamp",
        id="timeslot-start-not-a-time",
    ),
    pytest.param(
        doc(
            "Deployment", "d", '{services: [{name: a, image: x}], timeslot: {start: "2026-01-01T01:00:00Z"}}'
        ),
        "deployments/d: spec.timeslot.end",
        "required",
        id="timeslot-without-an-end",
    ),
]


@pytest.mark.parametrize(("text", "where", "message"), BAD_DOCUMENTS)
def test_a_bad_document_is_refused_with_its_path_and_reason(text: str, where: str, message: str) -> None:
    with pytest.raises(ManifestErrors) as caught:
        parse_manifests(text, origin="bad.yaml")
    lines = str(caught.value).splitlines()
    assert any(line.startswith(f"{where}: ") and message in line for line in lines), lines
