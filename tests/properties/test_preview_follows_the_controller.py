"""Preview names the replicas an apply leaves, by the deployment controller's own rules: over random
services (existing replicas in any phase, old or new spec, any count), the replicas preview places are
exactly those the controller creates or starts replacing (a rollout: one at a time), and those it keeps
on their nodes are exactly those the controller leaves running (Failed ones keep a slot, hold nothing)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from loadmaster.controllers.changes import (
    CreateServiceReplicas,
    DeleteReplica,
    StartReplacement,
    TerminateReplica,
)
from loadmaster.controllers.deployments.deployment import DeploymentObserved, reconcile_deployment
from loadmaster.controllers.views import DeploymentView, ReplicaView, ServiceView
from loadmaster.manifests import REPLICA, Manifest, service_replica
from loadmaster.manifests.replica_specs import service_spec_hash
from loadmaster.runtime.scheduling.preview.preview_services import DeploymentRoll, indexed_service_after_apply

NOW = datetime(2026, 11, 26, tzinfo=UTC)
PHASES = ("Pending", "Scheduled", "Running", "Failed")


def shop(image: str, replicas: int) -> Manifest:
    service = {"name": "api", "image": image, "replicas": replicas, "placement": "spread",
               "resources": {"cpu": 100, "memory": 1024}}  # fmt: skip
    return Manifest(kind="Deployment", name="shop", metadata={"name": "shop"}, spec={"services": [service]})


@dataclass
class Cached:
    obj: dict[str, Any]


@dataclass
class FakeCache:
    """The two parts of the object cache preview reads: replicas and the services' counters."""

    objects: dict[str, dict[str, Cached]] = field(default_factory=lambda: {REPLICA: {}})
    counters: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)


@st.composite
def services(draw: st.DrawFn) -> tuple[list[tuple[int, str, bool]], int, int, bool]:
    """(existing (index, phase, runs the old spec), next counter index, wanted count, spec changed)."""
    indices = sorted(draw(st.sets(st.integers(0, 6), max_size=4)))
    changed = draw(st.booleans())
    existing = [(i, draw(st.sampled_from(PHASES)), changed and draw(st.booleans())) for i in indices]
    next_index = (indices[-1] + 1 if indices else 0) + draw(st.integers(0, 2))
    return existing, next_index, draw(st.integers(0, 4)), changed


@settings(max_examples=200)
@given(services())
def test_preview_keeps_and_creates_the_replicas_the_controller_would(
    case: tuple[list[tuple[int, str, bool]], int, int, bool],
) -> None:
    existing, next_index, count, changed = case
    old, new = shop("api:1", count), shop("api:2" if changed else "api:1", count)
    cache = FakeCache(counters={("shop", "api"): (next_index, 1)})
    views = []
    for index, phase, runs_old in existing:
        obj = service_replica(old if runs_old else new, "api", index=index).to_dict()
        obj["status"] = {"phase": phase, **({"node_ref": "n1"} if phase != "Pending" else {})}
        cache.objects[REPLICA][obj["metadata"]["name"]] = Cached(obj)
        node = obj["status"].get("node_ref")
        spec_hash = obj["spec"]["spec_hash"]
        views.append(
            ReplicaView(
                obj["metadata"]["name"], "Deployment", "shop", "api", index, None, spec_hash, phase, node, 1
            )
        )

    service_view = ServiceView("api", "spread", count, service_spec_hash(new, "api"))
    changes = reconcile_deployment(
        "shop",
        DeploymentView("shop", (service_view,), applied_revision=2, previous_revision=1),
        DeploymentObserved(views, {"api": next_index}, []),
        NOW,
    )
    gone = {c.name for c in changes if isinstance(c, TerminateReplica | DeleteReplica)}
    started = {c.replica for c in changes if isinstance(c, StartReplacement)}
    created = {f"shop-api-{i}" for c in changes if isinstance(c, CreateServiceReplicas) for i in c.indices}
    remaining = [view for view in views if view.name not in gone]
    waiting_kept = {view.name for view in remaining if view.phase == "Pending" and view.name not in started}
    running_kept = {
        view.name for view in remaining if view.phase in ("Scheduled", "Running") and view.name not in started
    }

    after = indexed_service_after_apply(new, new.spec["services"][0], cache, DeploymentRoll())  # type: ignore[arg-type]
    assert {task.name for task in after.waiting} == created | waiting_kept | {
        f"{name}.next" for name in started
    }
    assert {task.name for task in after.staying} == running_kept
